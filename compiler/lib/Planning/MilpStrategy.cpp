//===- MilpStrategy.cpp - Checkmate's MILP, solved with CBC
//----------------===//
//
// Jain et al., "Checkmate: Breaking the Memory Wall with Optimal Tensor
// Rematerialization" (MLSys 2020), in its frontier-advancing form with one
// stage per node: stage t computes node t, and may first recompute any
// recomputable node i < t.
//
//   R[t][i]  binary   node i is computed in stage t (R[t][t] = 1; backward
//                     nodes only in their own stage)
//   S[t][s]  binary   result s (of node i < t) is live at the start of stage
//                     t (t = 1..n; S[n][s] = 1 for graph outputs). A node
//                     has one result unless it has resultBytes: each result
//                     dies after its own last read, as simulate() has it.
//   F[t][s][k] in [0,1] result s is freed right after node k runs in stage t
//                     (k reads s, or s is k's): allowed only when k runs, no
//                     later reader of s runs in stage t, and S[t+1][s] = 0
//   U[t][k]  live bytes while node k runs in stage t (within the budget)
//   Z[t][k]  in [0,1] node k writes its result over an in-place input
//                     (Node::inPlaceInputs) freed right after it, which
//                     takes inPlaceBytes_k off U[t][k] (and only U[t][k])
//   I[t][a]  in [0,1] batch input a (RematProblem::partTimeFixedBytes with
//                     readers) is live at the start of stage t (I[0] = 1)
//   G[t][a][k] in [0,1] input a is freed right after its reader k in
//                     stage t (as F: k runs, no later reader of a runs in
//                     stage t, I[t+1][a] = 0)
//
//   R[t][k] <= R[t][j] + S[t][s]          for each result s of j that k reads
//   S[t+1][s] <= R[t][i] + S[t][s]        (s a result of i)
//   R[t][k] <= I[t][a]  <=  I[t-1][a]      for each input a that k reads
//   U[t][k0] = sum_s b_s S[t][s] + sum_a b_a I[t][a] + b_k0 R[t][k0]
//   U[t][k]  = U[t][k'] - sum_s b_s F[t][s][k'] - sum_a b_a G[t][a][k']
//              + b_k R[t][k] - p_k Z[t][k] + p_k' Z[t][k']  (k' before k)
//   Z[t][k] <= sum F[t][s][k] over the slots s k may write over in place
//   minimise sum_t sum_i seconds_i R[t][i]
//
// This accounting never undercounts the live bytes of the sequence the
// solution converts to (stage by stage, recomputations in index order), and
// is exact for plans that drop values right after their last read, so a
// solution within the budget simulates within the budget. F, Z, I and G can
// be continuous: for integral R and S their bounds are 0 or 1 (the memory
// rows push I down to "a reader runs in this stage or later"). The batch
// inputs die after their last read as in simulate() and the arena; counted
// throughout instead, CBC's bound would not hold for the plans that use
// that memory.
//
//===----------------------------------------------------------------------===//

#include "PlanningSupport.h"

#include "remat/Planning/StepTimeBound.h"
#include "remat/Planning/Strategies.h"

#include "MipSolver.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace remat::plan {
namespace detail {
namespace {

/// The values the model tracks: one slot per result of each node (one for
/// a node without resultBytes), since each result dies after its own last
/// read (RematProblem.h).
struct Slots {
  std::vector<int> first;         // per node: its first slot
  std::vector<int> node;          // per slot
  std::vector<int> result;        // per slot: the result's index
  std::vector<int64_t> bytes;     // per slot
  std::vector<std::vector<int>> users; // per slot: distinct readers, increasing
  std::vector<std::vector<int>> reads; // per node: the slots it reads

  int count(int i) const { return first[i + 1] - first[i]; }
};

Slots analyzeSlots(const RematProblem &problem) {
  const auto &nodes = problem.nodes;
  const int n = static_cast<int>(nodes.size());
  Slots s;
  s.first.assign(n + 1, 0);
  for (int i = 0; i < n; ++i) {
    const int results = nodes[i].resultBytes.empty()
                            ? 1
                            : static_cast<int>(nodes[i].resultBytes.size());
    s.first[i + 1] = s.first[i] + results;
    for (int r = 0; r < results; ++r) {
      s.node.push_back(i);
      s.result.push_back(r);
      s.bytes.push_back(nodes[i].resultBytes.empty() ? nodes[i].outputBytes
                                                     : nodes[i].resultBytes[r]);
    }
  }
  s.users.assign(s.node.size(), {});
  s.reads.assign(n, {});
  for (int k = 0; k < n; ++k) {
    const Node &reader = nodes[k];
    for (int i : reader.inputs) {
      for (int r : resultsRead(nodes, reader, i)) {
        const int slot = s.first[i] + r;
        if (std::find(s.reads[k].begin(), s.reads[k].end(), slot) ==
            s.reads[k].end())
          s.reads[k].push_back(slot);
        if (s.users[slot].empty() || s.users[slot].back() != k)
          s.users[slot].push_back(k);
      }
    }
  }
  return s;
}

struct MilpModel : MipModel {
  int n = 0;
  Slots slots;
  // Column indices; -1 where the variable is fixed to 0 and omitted.
  std::vector<std::vector<int>> R; // R[t][i], i <= t
  std::vector<std::vector<int>> S; // S[t][slot] for slots of nodes i < t
  struct Free {
    int t, slot, k, col;
  };
  std::vector<Free> frees;
  // Per stage: the nodes that may run in it (increasing), and U columns.
  std::vector<std::vector<int>> stageNodes;
  std::vector<std::vector<int>> U;
  // freeAt[t][j]: indices into `frees` of frees after stageNodes[t][j].
  std::vector<std::vector<std::vector<int>>> freeAt;
  // deadAfterStage[t]: the slots that stage t's own node reads or makes
  // and that are never live in stage t + 1 (freed after it, no column).
  std::vector<std::vector<int>> deadAfterStage;
  // Z[t][j]: 1 when stageNodes[t][j] writes its result over an in-place
  // input freed right after it (Node::inPlaceInputs), which takes its
  // inPlaceBytes off U[t][j]; -1 where it cannot.
  std::vector<std::vector<int>> Z;
  // zFree[t][j]: Z[t][j] needs no free column, its input being dead after
  // the stage's own node anyway.
  std::vector<std::vector<char>> zFree;
  // The batch inputs that die after their last read (I and G above).
  struct Input {
    int64_t bytes = 0;
    std::vector<int> readers;        // increasing
    std::vector<int> I;              // I[t], t = 0..n-1
    std::vector<std::vector<int>> G; // G[t][j], after stageNodes[t][j]
  };
  std::vector<Input> inputs;
  double byteScale = 1, timeScale = 1, memLimit = 0;
};

MilpModel buildModel(const RematProblem &problem, const ForwardInfo &info,
                     bool forwardRecompute) {
  const auto &nodes = problem.nodes;
  const int n = info.n;
  const double inf = std::numeric_limits<double>::infinity();
  MilpModel m;
  m.n = n;
  m.slots = analyzeSlots(problem);
  const Slots &sl = m.slots;
  const int numSlots = static_cast<int>(sl.node.size());

  // Per node: any reader; per slot: a recomputable reader, the last reader.
  std::vector<char> hasUser(n, 0);
  std::vector<char> hasFwdUser(numSlots, 0);
  std::vector<int> lastUser(numSlots, -1);
  for (int s = 0; s < numSlots; ++s)
    for (int v : sl.users[s]) {
      hasUser[sl.node[s]] = 1;
      if (info.fwd[v])
        hasFwdUser[s] = 1;
      lastUser[s] = std::max(lastUser[s], v);
    }

  int64_t maxBytes = 1;
  double maxSeconds = 0;
  for (const auto &node : nodes) {
    maxBytes = std::max(maxBytes, node.outputBytes);
    maxSeconds = std::max(maxSeconds, node.seconds);
  }
  m.byteScale = static_cast<double>(maxBytes);
  m.timeScale = maxSeconds > 0 ? maxSeconds : 1;
  // The batch inputs that die after their last read are counted in U, not
  // among the fixed bytes.
  int64_t inputBytes = 0;
  for (const PartTimeBytes &part : problem.partTimeFixedBytes)
    if (!part.readers.empty() && part.bytes > 0) {
      MilpModel::Input input;
      input.bytes = part.bytes;
      input.readers = part.readers;
      std::sort(input.readers.begin(), input.readers.end());
      m.inputs.push_back(std::move(input));
      inputBytes += part.bytes;
    }
  if (problem.budgetBytes > 0)
    m.memLimit = static_cast<double>(problem.budgetBytes - problem.fixedBytes +
                                     inputBytes) /
                 m.byteScale;
  else
    m.memLimit = inf;
  auto nodeBytes = [&](int v) {
    return static_cast<double>(nodes[v].outputBytes) / m.byteScale;
  };
  auto slotBytes = [&](int s) {
    return static_cast<double>(sl.bytes[s]) / m.byteScale;
  };

  // Columns.
  m.R.assign(n, {});
  m.stageNodes.assign(n, {});
  for (int t = 0; t < n; ++t) {
    m.R[t].assign(t + 1, -1);
    for (int i = 0; i <= t; ++i) {
      bool useful = i == t || (info.fwd[i] && (hasUser[i] ||
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
    m.S[t].assign(sl.first[t], -1);
    for (int s = 0; s < sl.first[t]; ++s) {
      const int i = sl.node[s];
      bool useful;
      if (t == n)
        useful = info.isOutput[i];
      else
        useful = info.isOutput[i] || lastUser[s] >= t || hasFwdUser[s];
      if (!useful)
        continue;
      // A backward value is never recomputed, so it is live from its
      // stage to its last reader.
      double lo = (t == n || (!info.fwd[i] && lastUser[s] >= t)) ? 1 : 0;
      m.S[t][s] = m.addColumn(lo, 1, 0, true,
                              "S_" + std::to_string(t) + "_" +
                                  std::to_string(s));
    }
  }
  auto Rc = [&](int t, int i) { return i <= t ? m.R[t][i] : -1; };
  auto Sc = [&](int t, int s) {
    return (t >= 1 && t <= n && s < sl.first[t]) ? m.S[t][s] : -1;
  };

  // Frees: a slot read by k (or one of k's own) may be freed right after k.
  m.deadAfterStage.assign(n, {});
  m.freeAt.assign(n, {});
  for (int t = 0; t < n; ++t) {
    const auto &stage = m.stageNodes[t];
    m.freeAt[t].assign(stage.size(), {});
    for (size_t j = 0; j < stage.size(); ++j) {
      int k = stage[j];
      std::vector<int> cands = sl.reads[k];
      for (int s = sl.first[k]; s < sl.first[k + 1]; ++s)
        cands.push_back(s);
      std::sort(cands.begin(), cands.end());
      cands.erase(std::unique(cands.begin(), cands.end()), cands.end());
      for (int s : cands) {
        // Later readers of s in this stage; one that must run (t) forbids.
        bool forbidden = false;
        for (int u : sl.users[s]) {
          if (u <= k || u > t)
            continue;
          if (u == t) {
            forbidden = true;
            break;
          }
        }
        // Freeing a result of no bytes (persistent) changes nothing.
        if (forbidden || sl.bytes[s] == 0)
          continue;
        int sNext = Sc(t + 1, s);
        if (sNext >= 0 && m.colLower[sNext] >= 1)
          continue;
        // After the stage's own node, a result not kept for the next stage
        // is dead whatever the solution: no column (it would have no row,
        // and an empty column tied only to Z crashes CLP's presolve).
        if (k == t && sNext < 0) {
          m.deadAfterStage[t].push_back(s);
          continue;
        }
        int col = m.addColumn(0, 1, 0, false,
                              "F_" + std::to_string(t) + "_" +
                                  std::to_string(s) + "_" +
                                  std::to_string(k));
        m.freeAt[t][j].push_back(static_cast<int>(m.frees.size()));
        m.frees.push_back({t, s, k, col});
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

  // In-place writes: Z[t][j] <= the frees after k of its in-place inputs
  // (no row where one of them is dead after the stage's own node anyway).
  m.Z.assign(n, {});
  m.zFree.assign(n, {});
  for (int t = 0; t < n; ++t)
    for (size_t j = 0; j < m.stageNodes[t].size(); ++j) {
      const int k = m.stageNodes[t][j];
      std::vector<std::pair<int, double>> terms;
      for (int fi : m.freeAt[t][j]) {
        const auto &f = m.frees[fi];
        for (ResultRef input : nodes[k].inPlaceInputs)
          if (input.node != k &&
              f.slot == sl.first[input.node] + input.result) {
            terms.push_back({f.col, -1});
            break;
          }
      }
      bool inputDead = false;
      if (k == t)
        for (ResultRef input : nodes[k].inPlaceInputs) {
          const int slot = sl.first[input.node] + input.result;
          const auto &dead = m.deadAfterStage[t];
          if (input.node != k &&
              std::find(dead.begin(), dead.end(), slot) != dead.end())
            inputDead = true;
        }
      int z = -1;
      if (nodes[k].inPlaceBytes > 0 && (inputDead || !terms.empty())) {
        z = m.addColumn(0, 1, 0, false,
                        "Z_" + std::to_string(t) + "_" + std::to_string(k));
        terms.push_back({z, 1});
        if (!inputDead)
          m.addRow(terms, -inf, 0);
      }
      m.Z[t].push_back(z);
      m.zFree[t].push_back(z >= 0 && inputDead);
    }
  auto inPlace = [&](int t, size_t j) {
    const int k = m.stageNodes[t][j];
    return static_cast<double>(nodes[k].inPlaceBytes) / m.byteScale;
  };

  // Batch inputs: live from the start, and at a stage's start while a
  // reader runs in it; freed right after a reader when no later one runs.
  for (MilpModel::Input &a : m.inputs) {
    const std::string name = std::to_string(&a - m.inputs.data());
    a.I.assign(n, -1);
    a.G.assign(n, {});
    for (int t = 0; t < n; ++t) {
      a.I[t] = m.addColumn(t == 0 ? 1 : 0, 1, 0, false,
                           "I_" + std::to_string(t) + "_" + name);
      if (t > 0)
        m.addRow({{a.I[t], 1}, {a.I[t - 1], -1}}, -inf, 0);
    }
    auto isReader = [&](int k) {
      return std::binary_search(a.readers.begin(), a.readers.end(), k);
    };
    for (int t = 0; t < n; ++t) {
      const auto &stage = m.stageNodes[t];
      a.G[t].assign(stage.size(), -1);
      for (size_t j = 0; j < stage.size(); ++j) {
        const int k = stage[j];
        if (!isReader(k))
          continue;
        m.addRow({{Rc(t, k), 1}, {a.I[t], -1}}, -inf, 0);
        // A reader that must run later in the stage forbids the free.
        if (isReader(t) && k < t)
          continue;
        const int g = m.addColumn(0, 1, 0, false,
                                  "G_" + std::to_string(t) + "_" + name + "_" +
                                      std::to_string(k));
        a.G[t][j] = g;
        if (m.colLower[Rc(t, k)] < 1)
          m.addRow({{g, 1}, {Rc(t, k), -1}}, -inf, 0);
        if (t + 1 < n)
          m.addRow({{g, 1}, {a.I[t + 1], 1}}, -inf, 1);
        for (size_t l = j + 1; l < stage.size(); ++l)
          if (isReader(stage[l]))
            m.addRow({{g, 1}, {Rc(t, stage[l]), 1}}, -inf, 1);
      }
    }
  }

  // Dependencies: k runs only when each result it reads is live or its node
  // runs before it in the stage.
  for (int t = 0; t < n; ++t)
    for (int k : m.stageNodes[t])
      for (int s : sl.reads[k])
        m.addRow({{Rc(t, k), 1}, {Rc(t, sl.node[s]), -1}, {Sc(t, s), -1}},
                 -inf, 0);
  // Checkpoint transitions.
  for (int t = 1; t <= n; ++t)
    for (int s = 0; s < sl.first[t]; ++s)
      if (Sc(t, s) >= 0)
        m.addRow({{Sc(t, s), 1}, {Rc(t - 1, sl.node[s]), -1},
                  {Sc(t - 1, s), -1}},
                 -inf, 0);
  // Free conditions.
  for (const auto &f : m.frees) {
    int rk = Rc(f.t, f.k);
    if (m.colLower[rk] < 1)
      m.addRow({{f.col, 1}, {rk, -1}}, -inf, 0);
    int sNext = Sc(f.t + 1, f.slot);
    if (sNext >= 0)
      m.addRow({{f.col, 1}, {sNext, 1}}, -inf, 1);
    for (int u : sl.users[f.slot]) {
      if (u <= f.k || u > f.t)
        continue;
      int ru = Rc(f.t, u);
      if (ru >= 0)
        m.addRow({{f.col, 1}, {ru, 1}}, -inf, 1);
    }
  }
  // No useless work (valid for some optimal solution, and it prunes
  // symmetric ones): a value recomputed in stage t is read in stage t or
  // kept for stage t+1; so is a result live at its start.
  for (int t = 0; t < n; ++t) {
    auto readersInStage = [&](const std::vector<int> &users, int after) {
      std::vector<std::pair<int, double>> terms;
      for (int u : users)
        if (u > after && u <= t && Rc(t, u) >= 0)
          terms.push_back({Rc(t, u), -1});
      return terms;
    };
    for (int i = 0; i < t; ++i) {
      if (Rc(t, i) < 0)
        continue;
      std::vector<std::pair<int, double>> terms = {{Rc(t, i), 1}};
      std::vector<int> users;
      for (int s = sl.first[i]; s < sl.first[i + 1]; ++s) {
        users.insert(users.end(), sl.users[s].begin(), sl.users[s].end());
        if (Sc(t + 1, s) >= 0)
          terms.push_back({Sc(t + 1, s), -1});
      }
      std::sort(users.begin(), users.end());
      users.erase(std::unique(users.begin(), users.end()), users.end());
      for (auto term : readersInStage(users, i))
        terms.push_back(term);
      m.addRow(terms, -inf, 0);
    }
    for (int s = 0; s < sl.first[t]; ++s) {
      if (Sc(t, s) < 0 || m.colLower[Sc(t, s)] >= 1)
        continue;
      std::vector<std::pair<int, double>> terms = {{Sc(t, s), 1}};
      if (Sc(t + 1, s) >= 0)
        terms.push_back({Sc(t + 1, s), -1});
      for (auto term : readersInStage(sl.users[s], sl.node[s]))
        terms.push_back(term);
      m.addRow(terms, -inf, 0);
    }
  }
  // Recomputing a single-result value that is live already is never needed.
  for (int t = 1; t < n; ++t)
    for (int i = 0; i < t; ++i)
      if (sl.count(i) == 1 && Rc(t, i) >= 0 && Sc(t, sl.first[i]) >= 0)
        m.addRow({{Rc(t, i), 1}, {Sc(t, sl.first[i]), 1}}, -inf, 1);
  // Memory recurrence: a node's results are all created when it runs.
  for (int t = 0; t < n; ++t) {
    const auto &stage = m.stageNodes[t];
    for (size_t j = 0; j < stage.size(); ++j) {
      std::vector<std::pair<int, double>> terms;
      terms.push_back({m.U[t][j], 1});
      int k = stage[j];
      terms.push_back({Rc(t, k), -nodeBytes(k)});
      // An in-place write holds its bytes less during its own step only.
      if (m.Z[t][j] >= 0)
        terms.push_back({m.Z[t][j], inPlace(t, j)});
      if (j > 0 && m.Z[t][j - 1] >= 0)
        terms.push_back({m.Z[t][j - 1], -inPlace(t, j - 1)});
      if (j == 0) {
        for (int s = 0; s < sl.first[t]; ++s)
          if (Sc(t, s) >= 0 && slotBytes(s) > 0)
            terms.push_back({Sc(t, s), -slotBytes(s)});
        for (const MilpModel::Input &a : m.inputs)
          terms.push_back(
              {a.I[t], -static_cast<double>(a.bytes) / m.byteScale});
      } else {
        terms.push_back({m.U[t][j - 1], -1});
        for (int fi : m.freeAt[t][j - 1]) {
          const auto &f = m.frees[fi];
          if (slotBytes(f.slot) > 0)
            terms.push_back({f.col, slotBytes(f.slot)});
        }
        for (const MilpModel::Input &a : m.inputs)
          if (a.G[t][j - 1] >= 0)
            terms.push_back(
                {a.G[t][j - 1], static_cast<double>(a.bytes) / m.byteScale});
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
  const Slots &sl = m.slots;
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
  // Each result's life (as simulate): end[p][r] for the instance at p.
  std::vector<std::vector<int>> end(len);
  std::vector<int> latest(n, -1);
  for (int p = 0; p < len; ++p) {
    end[p].assign(sl.count(seq[p]), p);
    for (int s : sl.reads[seq[p]]) {
      int inst = latest[sl.node[s]];
      end[inst][sl.result[s]] = std::max(end[inst][sl.result[s]], p);
    }
    latest[seq[p]] = p;
  }
  for (int o : problem.graphOutputs)
    for (int &e : end[latest[o]])
      e = std::numeric_limits<int>::max();

  for (int p = 0; p < len; ++p) {
    int c = m.R[stageOf[p]][seq[p]];
    if (c < 0)
      return {};
    x[c] = 1;
  }
  // S[t][s]: the latest instance before start[t] has that result read at or
  // after it.
  std::fill(latest.begin(), latest.end(), -1);
  int p = 0;
  for (int t = 1; t <= n; ++t) {
    int stop = t < n ? start[t] : len;
    for (; p < stop; ++p)
      latest[seq[p]] = p;
    for (int s = 0; s < sl.first[t]; ++s) {
      int inst = latest[sl.node[s]];
      if (inst < 0 || end[inst][sl.result[s]] < stop)
        continue;
      int c = m.S[t][s];
      if (c < 0)
        return {};
      x[c] = 1;
    }
  }
  for (int o : problem.graphOutputs)
    for (int s = sl.first[o]; s < sl.first[o + 1]; ++s)
      if (m.S[n][s] >= 0)
        x[m.S[n][s]] = 1;
  // Frees: the instance of a result read (or created) by k ends at k.
  std::fill(latest.begin(), latest.end(), -1);
  for (int q = 0; q < len; ++q) {
    int v = seq[q];
    int t = stageOf[q];
    const auto &stage = m.stageNodes[t];
    auto it = std::lower_bound(stage.begin(), stage.end(), v);
    int j = static_cast<int>(it - stage.begin());
    for (int fi : m.freeAt[t][j]) {
      const auto &f = m.frees[fi];
      const int i = sl.node[f.slot];
      int inst = i == v ? q : latest[i];
      if (inst >= 0 && end[inst][sl.result[f.slot]] == q)
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
      if (m.zFree[t][j])
        x[m.Z[t][j]] = 1;
      for (int fi : m.freeAt[t][j])
        for (ResultRef input : nodes[k].inPlaceInputs)
          if (input.node != k &&
              m.frees[fi].slot == sl.first[input.node] + input.result &&
              x[m.frees[fi].col] > 0.5)
            x[m.Z[t][j]] = 1;
    }
  // Batch inputs: live to the last position that reads them.
  for (const MilpModel::Input &a : m.inputs) {
    const int last = lastReadPosition(seq, a.readers);
    for (int t = 0; t < n; ++t)
      x[a.I[t]] = last >= start[t] ? 1 : 0;
    // Freed right after that read.
    const int t = stageOf[last];
    const auto &stage = m.stageNodes[t];
    const auto it = std::lower_bound(stage.begin(), stage.end(), seq[last]);
    if (it != stage.end() && *it == seq[last] &&
        a.G[t][it - stage.begin()] >= 0)
      x[a.G[t][it - stage.begin()]] = 1;
  }
  // Memory.
  for (int t = 0; t < n; ++t) {
    const auto &stage = m.stageNodes[t];
    double u = 0;
    for (int s = 0; s < sl.first[t]; ++s)
      if (m.S[t][s] >= 0 && x[m.S[t][s]] > 0.5)
        u += static_cast<double>(sl.bytes[s]) / m.byteScale;
    for (size_t a = 0; a < m.inputs.size(); ++a)
      if (x[m.inputs[a].I[t]] > 0.5)
        u += static_cast<double>(m.inputs[a].bytes) / m.byteScale;
    for (size_t j = 0; j < stage.size(); ++j) {
      if (j > 0) {
        for (int fi : m.freeAt[t][j - 1])
          if (x[m.frees[fi].col] > 0.5)
            u -= static_cast<double>(sl.bytes[m.frees[fi].slot]) /
                 m.byteScale;
        for (const MilpModel::Input &a : m.inputs)
          if (a.G[t][j - 1] >= 0 && x[a.G[t][j - 1]] > 0.5)
            u -= static_cast<double>(a.bytes) / m.byteScale;
      }
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
  MipOptions mipOptions;
  mipOptions.seconds =
      std::max(0.1, options.timeLimitSeconds - watch.seconds());
  mipOptions.logLevel = options.logLevel;
  bool warmUsed = false;
  if (warm && options.warmStart) {
    std::vector<double> x = warmColumns(problem, m, *warm);
    if (!x.empty()) {
      mipOptions.start.reserve(x.size());
      for (size_t c = 0; c < x.size(); ++c)
        if (m.integer[c])
          mipOptions.start.emplace_back(m.names[c], x[c]);
      warmUsed = true;
    }
  }
  MipResult result = solveMip(m, mipOptions);
  if (result.provenInfeasible) {
    // An answer ("nothing fits"), unless the fallback fits after all: then
    // returning it would pass another strategy's plan off as the MILP's.
    return giveUp("MILP: proven infeasible: no plan in the Checkmate space "
                  "fits the budget",
                  /*solved=*/!fits(problem, fallback));
  }
  if (!result.hasSolution) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", options.timeLimitSeconds);
    return giveUp("MILP: no feasible solution found within the time limit (" +
                      std::string(limit) + " s, " + std::to_string(n) +
                      " nodes)",
                  /*solved=*/false);
  }
  const std::vector<double> &sol = result.solution;

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
  // CBC's bound holds for Checkmate's plans; the presence relaxation's for
  // every plan (StepTimeBound.h), and it may prove more than CBC did in its
  // time.
  StepTimeBound presence = boundStepTime(problem);
  double boundSeconds = result.bound * m.timeScale;
  if (!presence.infeasible)
    boundSeconds = std::max(boundSeconds, presence.seconds);
  plan.bound = presence;
  // CBC's relative gap tolerance (MipOptions::relativeGap) counts as proof.
  plan.optimalityGap =
      std::max(0.0, (plan.seconds - boundSeconds) /
                        std::max(plan.seconds, 1e-300));
  if (plan.optimalityGap <= 1e-6)
    plan.optimalityGap = 0;
  plan.provedOptimal = result.provenOptimal || plan.optimalityGap == 0;
  char buf[256];
  double base = info.baseSeconds;
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

/// Steps over MilpOptions::maxNodes: Checkmate's model (n^2 binaries) is
/// out of reach, so CBC solves the presence relaxation (StepTimeBound.h),
/// with the time limit, for a lower bound on every plan; its solution seeds
/// auto's search, whose plan is returned with the proven gap. An LP that
/// gives no bound is a refusal, not an uncertified plan.
RematPlan planDecomposed(const RematProblem &problem,
                         const MilpOptions &options) {
  Stopwatch watch;
  StepTimeBound bound = boundStepTime(problem, options.bound());
  AutoOptions heuristic;
  heuristic.milpBelowNodes = 0;
  heuristic.relaxedSolution = bound.absence;
  RematPlan plan = planAuto(problem, heuristic);
  const std::string size = std::to_string(problem.nodes.size()) + " nodes";
  if (bound.infeasible) {
    plan.note = "MILP by decomposition (" + size +
                "): proven infeasible: " + bound.note;
    plan.declined = fits(problem, plan) ? "the presence relaxation claims no "
                                          "plan fits, yet auto's plan fits"
                                        : "";
    finish(problem, plan, "milp", watch.seconds());
    return plan;
  }
  if (bound.steps > 0 && bound.absence.empty()) {
    plan.declined = "MILP (presence relaxation, " + size + "): " + bound.note;
    finish(problem, plan, "milp", watch.seconds());
    return plan;
  }
  plan.bound = bound;
  // The gap whether or not the strategy's own estimate says the plan fits:
  // at a floor, a plan whose simulated peak is a little over the budget can
  // still fit once its arena is laid out, and a 0 there would read as
  // "optimal" (GPT-2 small's floor plan is 10% above the bound).
  const bool fitting = fits(problem, plan);
  plan.optimalityGap =
      std::max(0.0, (plan.seconds - bound.seconds) / plan.seconds);
  if (plan.optimalityGap <= 1e-6)
    plan.optimalityGap = 0;
  plan.provedOptimal = fitting && plan.optimalityGap == 0;
  char text[512];
  std::snprintf(text, sizeof text,
                "MILP by decomposition (%s, over the %d-node Checkmate "
                "model's limit): CBC bounds every plan by the presence "
                "relaxation, %s; the plan is auto's search from its solution "
                "(%s): %s, gap %.3g%%",
                size.c_str(), options.maxNodes, bound.note.c_str(),
                plan.strategy.c_str(),
                plan.provedOptimal ? "optimal" : "not proven optimal",
                100 * plan.optimalityGap);
  plan.note = text;
  finish(problem, plan, "milp", watch.seconds());
  return plan;
}

} // namespace detail

using namespace detail;

RematPlan planMilp(const RematProblem &problem, const MilpOptions &options) {
  if (static_cast<int>(problem.nodes.size()) > options.maxNodes)
    return planDecomposed(problem, options);
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
