//===- MilpStrategy.cpp - Checkmate's MILP, solved with CBC ----------------===//
//
// Jain et al., "Checkmate: Breaking the Memory Wall with Optimal Tensor
// Rematerialization" (MLSys 2020), in its frontier-advancing form with one
// stage per node: stage t computes node t, and may first recompute any
// recomputable node i < t.
//
//   R[t][i]  binary   node i is computed in stage t (R[t][t] = 1; backward
//                     nodes only in their own stage)
//   S[t][i]  binary   value i is live at the start of stage t (t = 1..n;
//                     S[n][o] = 1 for graph outputs)
//   F[t][i][k] in [0,1] value i is freed right after node k runs in stage t
//                     (k reads i, or k = i): allowed only when k runs, no
//                     later reader of i runs in stage t, and S[t+1][i] = 0
//   U[t][k]  live bytes while node k runs in stage t (within the budget)
//   Z[t][k]  in [0,1] node k writes its result over an in-place input
//                     (Node::inPlaceInputs) freed right after it, which
//                     takes inPlaceBytes_k off U[t][k] (and only U[t][k])
//
//   R[t][k] <= R[t][j] + S[t][j]          for each input j of k
//   S[t+1][i] <= R[t][i] + S[t][i]
//   U[t][k0] = sum_i b_i S[t][i] + b_k0 R[t][k0]
//   U[t][k]  = U[t][k'] - sum_i b_i F[t][i][k'] + b_k R[t][k]  (k' before k)
//              - p_k Z[t][k] + p_k' Z[t][k']
//   Z[t][k] <= sum F[t][i][k] over k's in-place inputs i
//   minimise sum_t sum_i seconds_i R[t][i]
//
// This accounting never undercounts the live bytes of the sequence the
// solution converts to (stage by stage, recomputations in index order), and
// is exact for plans that drop values right after their last read (but for
// the results of one node, which simulate() may free apart), so a solution
// within the budget simulates within the budget. F can be
// continuous: for integral R and S its upper bounds are 0 or 1.
//
//===----------------------------------------------------------------------===//

#include "PlanningSupport.h"

#include "remat/Planning/Strategies.h"

#include "CbcModel.hpp"
#include "CbcSolver.hpp"
#include "CoinPackedMatrix.hpp"
#include "OsiClpSolverInterface.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace remat::plan {
namespace detail {
namespace {

int noCallback(CbcModel *, int) { return 0; }

struct MilpModel {
  int n = 0;
  // Column indices; -1 where the variable is fixed to 0 and omitted.
  std::vector<std::vector<int>> R; // R[t][i], i <= t
  std::vector<std::vector<int>> S; // S[t][i], t in 0..n, i < t
  struct Free {
    int t, i, k, col;
  };
  std::vector<Free> frees;
  // Per stage: the nodes that may run in it (increasing), and U columns.
  std::vector<std::vector<int>> stageNodes;
  std::vector<std::vector<int>> U;
  // freeAt[t][j]: indices into `frees` of frees after stageNodes[t][j].
  std::vector<std::vector<std::vector<int>>> freeAt;
  // Z[t][j]: 1 when stageNodes[t][j] writes its result over an in-place
  // input freed right after it (Node::inPlaceInputs), which takes its
  // inPlaceBytes off U[t][j]; -1 where it cannot.
  std::vector<std::vector<int>> Z;

  std::vector<double> colLower, colUpper, objective;
  std::vector<char> integer;
  std::vector<std::string> names;
  // The constraint matrix as triplets (CoinPackedMatrix::appendRow is
  // quadratic when called row by row).
  std::vector<int> tripletRow, tripletCol;
  std::vector<double> tripletValue;
  std::vector<double> rowLower, rowUpper;
  double byteScale = 1, timeScale = 1, memLimit = 0;

  int addColumn(double lo, double hi, double obj, bool isInt,
                std::string name) {
    colLower.push_back(lo);
    colUpper.push_back(hi);
    objective.push_back(obj);
    integer.push_back(isInt);
    names.push_back(std::move(name));
    return static_cast<int>(colLower.size()) - 1;
  }
  void addRow(const std::vector<std::pair<int, double>> &terms, double lo,
              double hi) {
    int row = static_cast<int>(rowLower.size());
    for (auto [c, v] : terms) {
      if (c < 0)
        continue;
      tripletRow.push_back(row);
      tripletCol.push_back(c);
      tripletValue.push_back(v);
    }
    rowLower.push_back(lo);
    rowUpper.push_back(hi);
  }
};

MilpModel buildModel(const RematProblem &problem, const ForwardInfo &info,
                     bool forwardRecompute) {
  const auto &nodes = problem.nodes;
  const int n = info.n;
  const double inf = std::numeric_limits<double>::infinity();
  MilpModel m;
  m.n = n;

  std::vector<std::vector<int>> users(n);
  for (int v = 0; v < n; ++v) {
    std::vector<int> ins = nodes[v].inputs;
    std::sort(ins.begin(), ins.end());
    ins.erase(std::unique(ins.begin(), ins.end()), ins.end());
    for (int u : ins)
      users[u].push_back(v);
  }
  std::vector<char> hasFwdUser(n, 0);
  std::vector<int> lastUser(n, -1);
  for (int u = 0; u < n; ++u)
    for (int v : users[u]) {
      if (info.fwd[v])
        hasFwdUser[u] = 1;
      lastUser[u] = std::max(lastUser[u], v);
    }

  int64_t maxBytes = 1;
  double maxSeconds = 0;
  for (const auto &node : nodes) {
    maxBytes = std::max(maxBytes, node.outputBytes);
    maxSeconds = std::max(maxSeconds, node.seconds);
  }
  m.byteScale = static_cast<double>(maxBytes);
  m.timeScale = maxSeconds > 0 ? maxSeconds : 1;
  if (problem.budgetBytes > 0)
    m.memLimit =
        static_cast<double>(problem.budgetBytes - problem.fixedBytes) /
        m.byteScale;
  else
    m.memLimit = inf;
  auto bytes = [&](int v) {
    return static_cast<double>(nodes[v].outputBytes) / m.byteScale;
  };

  // Columns.
  m.R.assign(n, {});
  m.stageNodes.assign(n, {});
  for (int t = 0; t < n; ++t) {
    m.R[t].assign(t + 1, -1);
    for (int i = 0; i <= t; ++i) {
      bool useful = i == t || (info.fwd[i] && (!users[i].empty() ||
                                               info.isOutput[i]) &&
                               (forwardRecompute || !info.fwd[t]));
      if (!useful)
        continue;
      double lo = i == t ? 1 : 0;
      m.R[t][i] = m.addColumn(lo, 1, nodes[i].seconds / m.timeScale, true,
                              "R_" + std::to_string(t) + "_" +
                                  std::to_string(i));
      m.stageNodes[t].push_back(i);
    }
  }
  m.S.assign(n + 1, {});
  for (int t = 1; t <= n; ++t) {
    m.S[t].assign(t, -1);
    for (int i = 0; i < t; ++i) {
      bool useful;
      if (t == n)
        useful = info.isOutput[i];
      else
        useful = info.isOutput[i] || lastUser[i] >= t || hasFwdUser[i];
      if (!useful)
        continue;
      // A backward value is never recomputed, so it is live from its
      // stage to its last reader.
      double lo = (t == n || (!info.fwd[i] && lastUser[i] >= t)) ? 1 : 0;
      m.S[t][i] = m.addColumn(lo, 1, 0, true,
                              "S_" + std::to_string(t) + "_" +
                                  std::to_string(i));
    }
  }
  auto Rc = [&](int t, int i) { return i <= t ? m.R[t][i] : -1; };
  auto Sc = [&](int t, int i) {
    return (t >= 1 && t <= n && i < t) ? m.S[t][i] : -1;
  };

  // Frees.
  m.freeAt.assign(n, {});
  for (int t = 0; t < n; ++t) {
    const auto &stage = m.stageNodes[t];
    m.freeAt[t].assign(stage.size(), {});
    for (size_t j = 0; j < stage.size(); ++j) {
      int k = stage[j];
      std::vector<int> cands = nodes[k].inputs;
      cands.push_back(k);
      std::sort(cands.begin(), cands.end());
      cands.erase(std::unique(cands.begin(), cands.end()), cands.end());
      for (int i : cands) {
        // Later readers of i in this stage; one that must run (t) forbids.
        std::vector<int> later;
        bool forbidden = false;
        for (int u : users[i]) {
          if (u <= k || u > t)
            continue;
          if (u == t) {
            forbidden = true;
            break;
          }
          if (Rc(t, u) >= 0)
            later.push_back(Rc(t, u));
        }
        if (forbidden)
          continue;
        int sNext = Sc(t + 1, i);
        if (sNext >= 0 && m.colLower[sNext] >= 1)
          continue;
        int col = m.addColumn(0, 1, 0, false,
                              "F_" + std::to_string(t) + "_" +
                                  std::to_string(i) + "_" +
                                  std::to_string(k));
        m.freeAt[t][j].push_back(static_cast<int>(m.frees.size()));
        m.frees.push_back({t, i, k, col});
      }
    }
  }
  // Memory columns.
  m.U.assign(n, {});
  for (int t = 0; t < n; ++t)
    for (size_t j = 0; j < m.stageNodes[t].size(); ++j)
      m.U[t].push_back(m.addColumn(0, m.memLimit, 0, false,
                                   "U_" + std::to_string(t) + "_" +
                                       std::to_string(m.stageNodes[t][j])));


  // In-place writes: Z[t][j] <= the frees after k of its in-place inputs.
  m.Z.assign(n, {});
  for (int t = 0; t < n; ++t)
    for (size_t j = 0; j < m.stageNodes[t].size(); ++j) {
      const int k = m.stageNodes[t][j];
      std::vector<std::pair<int, double>> terms;
      for (int fi : m.freeAt[t][j]) {
        const auto &f = m.frees[fi];
        for (ResultRef input : nodes[k].inPlaceInputs)
          if (f.i == input.node && f.i != k) {
            terms.push_back({f.col, -1});
            break;
          }
      }
      int z = -1;
      if (nodes[k].inPlaceBytes > 0 && !terms.empty()) {
        z = m.addColumn(0, 1, 0, false,
                        "Z_" + std::to_string(t) + "_" + std::to_string(k));
        terms.push_back({z, 1});
        m.addRow(terms, -inf, 0);
      }
      m.Z[t].push_back(z);
    }
  auto inPlace = [&](int t, size_t j) {
    const int k = m.stageNodes[t][j];
    return static_cast<double>(nodes[k].inPlaceBytes) / m.byteScale;
  };

  // Dependencies.
  for (int t = 0; t < n; ++t)
    for (int k : m.stageNodes[t]) {
      std::vector<int> ins = nodes[k].inputs;
      std::sort(ins.begin(), ins.end());
      ins.erase(std::unique(ins.begin(), ins.end()), ins.end());
      for (int j : ins)
        m.addRow({{Rc(t, k), 1}, {Rc(t, j), -1}, {Sc(t, j), -1}}, -inf, 0);
    }
  // Checkpoint transitions.
  for (int t = 1; t <= n; ++t)
    for (int i = 0; i < t; ++i)
      if (Sc(t, i) >= 0)
        m.addRow({{Sc(t, i), 1}, {Rc(t - 1, i), -1}, {Sc(t - 1, i), -1}},
                 -inf, 0);
  // Free conditions.
  for (const auto &f : m.frees) {
    int rk = Rc(f.t, f.k);
    if (m.colLower[rk] < 1)
      m.addRow({{f.col, 1}, {rk, -1}}, -inf, 0);
    int sNext = Sc(f.t + 1, f.i);
    if (sNext >= 0)
      m.addRow({{f.col, 1}, {sNext, 1}}, -inf, 1);
    for (int u : users[f.i]) {
      if (u <= f.k || u > f.t)
        continue;
      int ru = Rc(f.t, u);
      if (ru >= 0)
        m.addRow({{f.col, 1}, {ru, 1}}, -inf, 1);
    }
  }
  // No useless work (valid for some optimal solution, and it prunes
  // symmetric ones): a value recomputed in stage t, or live at its start,
  // is read in stage t or kept for stage t+1.
  for (int t = 0; t < n; ++t) {
    auto usedOrKept = [&](int i, int col) {
      std::vector<std::pair<int, double>> terms = {{col, 1}};
      for (int u : users[i])
        if (u > i && u <= t && Rc(t, u) >= 0)
          terms.push_back({Rc(t, u), -1});
      int sNext = Sc(t + 1, i);
      if (sNext >= 0)
        terms.push_back({sNext, -1});
      m.addRow(terms, -inf, 0);
    };
    for (int i = 0; i < t; ++i) {
      if (Rc(t, i) >= 0)
        usedOrKept(i, Rc(t, i));
      if (Sc(t, i) >= 0 && m.colLower[Sc(t, i)] < 1)
        usedOrKept(i, Sc(t, i));
    }
  }
  // Recomputing a value that is live already is never needed.
  for (int t = 1; t < n; ++t)
    for (int i = 0; i < t; ++i)
      if (Rc(t, i) >= 0 && Sc(t, i) >= 0)
        m.addRow({{Rc(t, i), 1}, {Sc(t, i), 1}}, -inf, 1);
  // Memory recurrence.
  for (int t = 0; t < n; ++t) {
    const auto &stage = m.stageNodes[t];
    for (size_t j = 0; j < stage.size(); ++j) {
      std::vector<std::pair<int, double>> terms;
      terms.push_back({m.U[t][j], 1});
      int k = stage[j];
      terms.push_back({Rc(t, k), -bytes(k)});
      // An in-place write holds its bytes less during its own step only.
      if (m.Z[t][j] >= 0)
        terms.push_back({m.Z[t][j], inPlace(t, j)});
      if (j > 0 && m.Z[t][j - 1] >= 0)
        terms.push_back({m.Z[t][j - 1], -inPlace(t, j - 1)});
      if (j == 0) {
        for (int i = 0; i < t; ++i)
          if (Sc(t, i) >= 0 && bytes(i) > 0)
            terms.push_back({Sc(t, i), -bytes(i)});
      } else {
        terms.push_back({m.U[t][j - 1], -1});
        for (int fi : m.freeAt[t][j - 1]) {
          const auto &f = m.frees[fi];
          if (bytes(f.i) > 0)
            terms.push_back({f.col, bytes(f.i)});
        }
      }
      m.addRow(terms, 0, 0);
    }
  }
  return m;
}

/// Column values for a plan from the builder (first occurrences in order,
/// recomputations in index order before them); empty when the sequence does
/// not have that shape or breaks the model.
std::vector<double> warmColumns(const RematProblem &problem,
                                const MilpModel &m, const RematPlan &plan) {
  const auto &nodes = problem.nodes;
  const int n = m.n;
  const auto &seq = plan.sequence;
  const int len = static_cast<int>(seq.size());
  std::vector<double> x(m.colLower.size(), 0);
  // Stage of each position, and the start position of each stage.
  std::vector<int> stageOf(len), start(n + 1, len);
  std::vector<char> seen(n, 0);
  {
    int t = 0, stageStart = 0, prev = -1;
    for (int p = 0; p < len; ++p) {
      int v = seq[p];
      if (v >= n || v < 0)
        return {};
      if (!seen[v]) {
        if (v != t)
          return {};
        seen[v] = 1;
        for (int q = stageStart; q <= p; ++q)
          stageOf[q] = t;
        start[t] = stageStart;
        ++t;
        stageStart = p + 1;
        prev = -1;
      } else {
        if (v >= t || v <= prev)
          return {};
        prev = v;
      }
    }
    if (t != n || stageStart != len)
      return {};
  }
  // Instance lifetimes (as simulate).
  std::vector<int> latest(n, -1), end(len);
  for (int p = 0; p < len; ++p)
    end[p] = p;
  for (int p = 0; p < len; ++p) {
    for (int u : nodes[seq[p]].inputs)
      end[latest[u]] = std::max(end[latest[u]], p);
    latest[seq[p]] = p;
  }
  for (int o : problem.graphOutputs)
    end[latest[o]] = std::numeric_limits<int>::max();

  for (int p = 0; p < len; ++p) {
    int c = m.R[stageOf[p]][seq[p]];
    if (c < 0)
      return {};
    x[c] = 1;
  }
  // S[t][i]: the latest instance before start[t] is read at or after it.
  std::fill(latest.begin(), latest.end(), -1);
  int p = 0;
  for (int t = 1; t <= n; ++t) {
    int stop = t < n ? start[t] : len;
    for (; p < stop; ++p)
      latest[seq[p]] = p;
    for (int i = 0; i < t; ++i) {
      if (latest[i] < 0 || end[latest[i]] < stop)
        continue;
      int c = m.S[t][i];
      if (c < 0)
        return {};
      x[c] = 1;
    }
  }
  for (int o : problem.graphOutputs)
    if (m.S[n][o] >= 0)
      x[m.S[n][o]] = 1;
  // Frees: the instance of i read (or created) by k ends at k's position.
  std::fill(latest.begin(), latest.end(), -1);
  std::vector<int> posInStage(len);
  for (int q = 0; q < len; ++q) {
    int v = seq[q];
    int t = stageOf[q];
    const auto &stage = m.stageNodes[t];
    auto it = std::lower_bound(stage.begin(), stage.end(), v);
    int j = static_cast<int>(it - stage.begin());
    for (int fi : m.freeAt[t][j]) {
      const auto &f = m.frees[fi];
      int inst = f.i == v ? q : latest[f.i];
      if (inst >= 0 && end[inst] == q)
        x[f.col] = 1;
    }
    latest[v] = q;
  }
  // In-place writes: where an in-place input is freed right after the op.
  for (int t = 0; t < n; ++t)
    for (size_t j = 0; j < m.stageNodes[t].size(); ++j) {
      if (m.Z[t][j] < 0)
        continue;
      const int k = m.stageNodes[t][j];
      for (int fi : m.freeAt[t][j])
        for (ResultRef input : nodes[k].inPlaceInputs)
          if (m.frees[fi].i == input.node && x[m.frees[fi].col] > 0.5)
            x[m.Z[t][j]] = 1;
    }
  // Memory.
  for (int t = 0; t < n; ++t) {
    const auto &stage = m.stageNodes[t];
    double u = 0;
    for (int i = 0; i < t; ++i)
      if (m.S[t][i] >= 0 && x[m.S[t][i]] > 0.5)
        u += static_cast<double>(nodes[i].outputBytes) / m.byteScale;
    for (size_t j = 0; j < stage.size(); ++j) {
      if (j > 0)
        for (int fi : m.freeAt[t][j - 1])
          if (x[m.frees[fi].col] > 0.5)
            u -= static_cast<double>(nodes[m.frees[fi].i].outputBytes) /
                 m.byteScale;
      int c = m.R[t][stage[j]];
      if (x[c] > 0.5)
        u += static_cast<double>(nodes[stage[j]].outputBytes) / m.byteScale;
      const int z = m.Z[t][j];
      const double during =
          u - (z >= 0 && x[z] > 0.5
                   ? static_cast<double>(nodes[stage[j]].inPlaceBytes) /
                         m.byteScale
                   : 0.0);
      if (during > m.memLimit * (1 + 1e-9) + 1e-9)
        return {};
      x[m.U[t][j]] = std::max(0.0, during);
    }
  }
  return x;
}

} // namespace

RematPlan solveMilp(const RematProblem &problem, const MilpOptions &options,
                    const RematPlan *warm) {
  Stopwatch watch;
  ForwardInfo info = analyzeForward(problem);
  const int n = info.n;
  RematPlan fallback = warm ? *warm : planNone(problem);
  // `solved` = false: the MILP has no answer of its own (RematPlan::declined).
  auto giveUp = [&](const std::string &why, bool solved = true) {
    RematPlan plan = fallback;
    plan.provedOptimal = false;
    plan.optimalityGap = 0;
    plan.note = why;
    plan.declined = solved ? "" : why;
    finish(problem, plan, "milp", watch.seconds());
    return plan;
  };
  if (n > options.maxNodes) {
    RematPlan plan = giveUp("graph too big for the MILP (" +
                                std::to_string(n) + " nodes > " +
                                std::to_string(options.maxNodes) + ")",
                            /*solved=*/false);
    plan.note += "; returned without solving";
    return plan;
  }
  if (n == 0)
    return giveUp("MILP: empty graph");
  if (problem.budgetBytes > 0 && problem.budgetBytes < problem.fixedBytes)
    return giveUp("MILP: the fixed bytes alone exceed the budget");

  MilpModel m = buildModel(problem, info, options.recomputeInForwardStages);
  OsiClpSolverInterface solver;
  CoinPackedMatrix matrix(/*colordered=*/true, m.tripletRow.data(),
                          m.tripletCol.data(), m.tripletValue.data(),
                          static_cast<CoinBigIndex>(m.tripletValue.size()));
  matrix.setDimensions(static_cast<int>(m.rowLower.size()),
                       static_cast<int>(m.colLower.size()));
  solver.loadProblem(matrix, m.colLower.data(), m.colUpper.data(),
                     m.objective.data(), m.rowLower.data(), m.rowUpper.data());
  for (size_t c = 0; c < m.integer.size(); ++c) {
    if (m.integer[c])
      solver.setInteger(static_cast<int>(c));
    solver.setColName(static_cast<int>(c), m.names[c]);
  }
  solver.messageHandler()->setLogLevel(0);
  solver.setHintParam(OsiDoReducePrint, true, OsiHintTry);

  CbcModel model(solver);
  model.setLogLevel(options.logLevel);
  model.messageHandler()->setLogLevel(options.logLevel);
  bool warmUsed = false;
  if (warm && options.warmStart) {
    std::vector<double> x = warmColumns(problem, m, *warm);
    if (!x.empty()) {
      std::vector<std::pair<std::string, double>> start;
      start.reserve(x.size());
      for (size_t c = 0; c < x.size(); ++c)
        if (m.integer[c])
          start.emplace_back(m.names[c], x[c]);
      model.setMIPStart(start);
      warmUsed = true;
    }
  }
  CbcSolverUsefulData data;
  data.noPrinting_ = options.logLevel == 0;
  data.useSignalHandler_ = false;
  CbcMain0(model, data);
  char secs[32];
  double remaining = std::max(0.1, options.timeLimitSeconds - watch.seconds());
  std::snprintf(secs, sizeof secs, "%.3f", remaining);
  std::string logLevel = std::to_string(options.logLevel);
  std::vector<std::string> args = {"remat-milp", "-log",     logLevel,
                                    "-timeMode",  "elapsed",  "-sec",
                                    secs,         "-ratioGap", "1e-6",
                                    // CBC 2.10's default SOS preprocessing
                                    // crashed in postProcess and once
                                    // declared a model with a feasible MIP
                                    // start infeasible; the model is small
                                    // and tight enough without it.
                                    "-preprocess", "off"};
  // Extra CBC options for experiments (e.g. REMAT_CBC_ARGS="-cuts off").
  if (const char *extra = std::getenv("REMAT_CBC_ARGS")) {
    std::string e = extra, tok;
    for (char ch : e + " ") {
      if (ch == ' ') {
        if (!tok.empty())
          args.push_back(tok);
        tok.clear();
      } else {
        tok += ch;
      }
    }
  }
  args.push_back("-solve");
  args.push_back("-quit");
  std::vector<const char *> argv;
  for (const auto &a : args)
    argv.push_back(a.c_str());
  CbcMain1(static_cast<int>(argv.size()), argv.data(), model, noCallback,
           data);

  const double *sol = model.bestSolution();
  if (model.isProvenInfeasible() && !sol) {
    // An answer ("nothing fits"), unless the fallback fits after all: then
    // returning it would pass another strategy's plan off as the MILP's.
    return giveUp("MILP: proven infeasible: no plan in the Checkmate space "
                  "fits the budget",
                  /*solved=*/!fits(problem, fallback));
  }
  if (!sol) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", options.timeLimitSeconds);
    return giveUp("MILP: no feasible solution found within the time limit (" +
                      std::string(limit) + " s, " + std::to_string(n) +
                      " nodes)",
                  /*solved=*/false);
  }

  RematPlan plan;
  for (int t = 0; t < n; ++t)
    for (int i : m.stageNodes[t])
      if (sol[m.R[t][i]] > 0.5)
        plan.sequence.push_back(i);
  std::string error;
  if (!simulate(problem, plan, error))
    return giveUp("MILP: internal error, solution is not a valid sequence: " +
                      error,
                  /*solved=*/false);
  double obj = model.getObjValue();
  double bound = model.getBestPossibleObjValue();
  plan.provedOptimal = model.isProvenOptimal();
  plan.optimalityGap =
      plan.provedOptimal ? 0
                         : std::max(0.0, (obj - bound) /
                                             std::max(std::fabs(obj), 1e-12));
  if (plan.provedOptimal && obj > 0 && (obj - bound) / obj > 1e-4)
    plan.optimalityGap = (obj - bound) / obj;
  char buf[256];
  double base = info.baseSeconds;
  double boundSeconds = bound * m.timeScale;
  std::snprintf(buf, sizeof buf,
                "MILP (%d nodes, %d vars, %d rows%s): %s in %.2f s, gap %.3g%% "
                "(recompute %.4g s, lower bound %.4g s)",
                n, static_cast<int>(m.colLower.size()),
                static_cast<int>(m.rowLower.size()),
                warmUsed ? ", warm start" : "",
                plan.provedOptimal ? "optimal" : "time limit",
                watch.seconds(), 100 * plan.optimalityGap,
                plan.seconds - base, std::max(0.0, boundSeconds - base));
  plan.note = buf;
  // The solution is at least as good as an accepted warm start, and the
  // accounting never undercounts, so this only guards rounding (or a start
  // CBC did not take).
  if (warm && better(problem, *warm, plan)) {
    RematPlan w = *warm;
    w.provedOptimal = plan.provedOptimal && fits(problem, w) &&
                      w.seconds <= plan.seconds * (1 + 1e-12);
    w.optimalityGap = plan.optimalityGap;
    w.note = plan.note + "; kept the warm start, which is at least as good";
    finish(problem, w, "milp", watch.seconds());
    return w;
  }
  finish(problem, plan, "milp", watch.seconds());
  return plan;
}

} // namespace detail

using namespace detail;

RematPlan planMilp(const RematProblem &problem, const MilpOptions &options) {
  if (static_cast<int>(problem.nodes.size()) > options.maxNodes)
    return solveMilp(problem, options, nullptr);
  // The incumbent: auto's heuristic search (which covers none/all/sqrt),
  // without its own MILP polish.
  RematPlan warm;
  bool have = false;
  if (options.warmStart) {
    AutoOptions heuristic;
    heuristic.milpBelowNodes = 0;
    // A fraction of auto's own search: the MILP does the rest.
    heuristic.workLimit = AutoOptions().workLimit / 2;
    warm = planAuto(problem, heuristic);
    have = true;
  }
  return solveMilp(problem, options, have ? &warm : nullptr);
}

} // namespace remat::plan
