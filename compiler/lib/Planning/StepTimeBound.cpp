//===- StepTimeBound.cpp - A proven lower bound on the step time -----------===//
//
// The presence relaxation. Take any plan in the class (StepTimeBound.h) and
// look at it at the first run of node t (step s_t). Every node v < t has run
// by then, every node w > t has not. So:
//
//  - t's inputs are live at s_t, and so is t's output;
//  - a value v < t that a later node w > t reads (or a graph output) is
//    live at s_t, or it is recomputed after s_t;
//  - if v is absent at s_t and recomputed after s_t, each input u of v is
//    read after s_t: u is live at s_t, or is itself recomputed after s_t;
//  - a value that cannot be recomputed (backward ops) is live whenever it is
//    read later.
//
// With z[t][v] = "v is absent at s_t but read after it" (binary) and
// R[t][v] = "v is live at s_t or read after it", the live bytes at s_t are at
// least sum_v b_v (R[t][v] - z[t][v]) + b_t - p_t (p_t: what t may write
// in place over an input dying there), which must fit the budget. And
// for the steps t1 < t2 < ... at which v has a variable, each interval
// (s_ti, s_ti+1] in which v is absent at the start and present (or no longer
// needed) at the end contains a recomputation of v:
//
//   recomputations of v >= sum_i max(0, z[ti][v] - z[ti+1][v]) (+ z at the last)
//
// Minimising sum_v seconds_v * that count, plus the schedule's own time, over
// these constraints is a relaxation: every plan maps to a feasible point (z
// and R as defined) whose objective is at most the plan's time. Its optimum,
// or any lower bound of it (the LP relaxation, CBC's best bound), is a lower
// bound on every plan's time. What it leaves out: memory during
// recomputations, and values recomputed more than once between two of the
// chosen steps.
//
// With recomputationChains, the count is per interval between consecutive
// chosen steps instead (y[i][v]: v computed again at least once in interval
// i), bounded by two more facts of every plan, for values of one result:
// a value absent at a step and read by a node whose first run lies before
// the next step is computed in between (even if dropped again by then); and
// a value computed again in an interval reads its inputs there, so an input
// absent at the interval's start is computed in it too. The second fact
// chains a recomputation back to the values present, as a plan's
// recomputation does.
//
// Only steps where the schedule without recomputation is over the budget can
// constrain anything; of those the most loaded ones, one per distinct set of
// needed values, enter the model (StepTimeBoundOptions::maxSteps). Leaving
// steps out keeps the bound valid, only weaker.
//
//===----------------------------------------------------------------------===//

#include "remat/Planning/StepTimeBound.h"
#include "remat/Planning/RematProblem.h"

#include "MipSolver.h"
#include "PlanningSupport.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace remat::plan {

using namespace detail;

namespace {

/// The schedule-level facts the relaxation needs.
struct ScheduleFacts {
  int n = 0;
  std::vector<std::vector<int>> users; // distinct readers, increasing
  std::vector<int> lastReader;         // last reader in the schedule, -1
  /// Per node, per result (one for a single value): its bytes and its last
  /// reader in the schedule (-1 when none), and its readers (increasing).
  std::vector<std::vector<std::pair<int64_t, int>>> results;
  std::vector<std::vector<std::vector<int>>> resultUsers;
  std::vector<char> isOutput;
  /// Live bytes at each node's step when nothing is recomputed.
  std::vector<int64_t> baselineLive;
  /// A hash of the recomputable values needed at each step (read by a later
  /// node, or by the node itself): steps with equal hashes have the same
  /// variables and differ only in their constant bytes.
  std::vector<uint64_t> neededHash;
};

uint64_t mix(uint64_t x) {
  // splitmix64's finaliser.
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

ScheduleFacts analyzeSchedule(const RematProblem &problem) {
  const auto &nodes = problem.nodes;
  ScheduleFacts f;
  const int n = static_cast<int>(nodes.size());
  f.n = n;
  f.users.assign(n, {});
  f.lastReader.assign(n, -1);
  f.isOutput.assign(n, 0);
  for (int v = 0; v < n; ++v)
    for (int u : nodes[v].inputs)
      if (f.users[u].empty() || f.users[u].back() != v)
        f.users[u].push_back(v);
  for (int u = 0; u < n; ++u)
    if (!f.users[u].empty())
      f.lastReader[u] = f.users[u].back();
  for (int o : problem.graphOutputs)
    f.isOutput[o] = 1;
  f.results.assign(n, {});
  for (int v = 0; v < n; ++v) {
    if (nodes[v].resultBytes.empty())
      f.results[v] = {{nodes[v].outputBytes, f.lastReader[v]}};
    else
      for (int64_t bytes : nodes[v].resultBytes)
        f.results[v].push_back({bytes, -1});
  }
  f.resultUsers.assign(n, {});
  for (int v = 0; v < n; ++v)
    f.resultUsers[v].assign(f.results[v].size(), {});
  for (int w = 0; w < n; ++w)
    for (size_t j = 0; j < nodes[w].inputs.size(); ++j) {
      const int v = nodes[w].inputs[j];
      auto &results = f.results[v];
      for (int r : resultsRead(nodes, nodes[w], v)) {
        results[r].second = std::max(results[r].second, w);
        auto &users = f.resultUsers[v][r];
        if (users.empty() || users.back() != w)
          users.push_back(w);
      }
    }

  std::vector<int64_t> delta(n + 1, 0);
  std::vector<uint64_t> toggle(n + 1, 0);
  for (int v = 0; v < n; ++v) {
    for (auto [bytes, reader] : f.results[v]) {
      int end = f.isOutput[v] ? n - 1 : std::max(v, reader);
      delta[v] += bytes;
      delta[end + 1] -= bytes;
    }
    // v is needed after step t for t in [v + 1, last reader - 1] (outputs:
    // to the end).
    int neededTo = f.isOutput[v] ? n - 1 : f.lastReader[v] - 1;
    if (nodes[v].recomputable && neededTo >= v + 1) {
      uint64_t h = mix(2 * static_cast<uint64_t>(v));
      toggle[v + 1] ^= h;
      toggle[neededTo + 1] ^= h;
    }
  }
  f.baselineLive.assign(n, 0);
  f.neededHash.assign(n, 0);
  int64_t live = 0;
  uint64_t hash = 0;
  for (int t = 0; t < n; ++t) {
    live += delta[t];
    hash ^= toggle[t];
    f.baselineLive[t] = live;
    uint64_t own = hash;
    for (int u : nodes[t].inputs)
      if (nodes[u].recomputable)
        own ^= mix(2 * static_cast<uint64_t>(u) + 1);
    f.neededHash[t] = own;
  }
  return f;
}

/// The bytes the arena may use for op results at each step: the budget less
/// the fixed bytes, plus the part-time fixed bytes that may be dead there.
std::vector<int64_t> memoryAtSteps(const RematProblem &problem) {
  const int n = static_cast<int>(problem.nodes.size());
  std::vector<int64_t> memory(n, problem.budgetBytes - problem.fixedBytes);
  std::vector<int64_t> delta(n + 1, 0);
  for (const PartTimeBytes &part : problem.partTimeFixedBytes)
    delta[std::clamp(part.lastReader + 1, 0, n)] += part.bytes;
  int64_t slack = 0;
  for (int t = 0; t < n; ++t) {
    slack += delta[t];
    memory[t] += slack;
  }
  return memory;
}

/// The over-budget steps, most loaded first, one per needed-value set.
std::vector<int> candidateSteps(const ScheduleFacts &f,
                                const std::vector<int64_t> &memory,
                                int maxSteps) {
  std::vector<int> over;
  for (int t = 0; t < f.n; ++t)
    if (f.baselineLive[t] > memory[t])
      over.push_back(t);
  std::stable_sort(over.begin(), over.end(), [&](int a, int b) {
    return f.baselineLive[a] > f.baselineLive[b];
  });
  std::vector<int> chosen;
  std::vector<uint64_t> seen;
  for (int t : over) {
    if (static_cast<int>(chosen.size()) >= maxSteps)
      break;
    if (std::find(seen.begin(), seen.end(), f.neededHash[t]) != seen.end())
      continue;
    seen.push_back(f.neededHash[t]);
    chosen.push_back(t);
  }
  return chosen;
}

/// Coefficients are scaled to the biggest value (bytes) and the slowest node
/// (seconds), so that they are O(1) for the solvers' tolerances.
struct Relaxation : MipModel {
  double byteScale = 1, timeScale = 0;
  int steps = 0;
  std::vector<std::vector<int>> zAt; // per node: its absence columns
};

/// Adds step t's variables and memory row. Returns false when the bytes that
/// must be live at t alone exceed the memory: no plan fits.
///
/// Per result of each value v < t: needed (read at or after t, or an
/// output), or read by a consumer that may be absent at t (R, a column), or
/// neither (not counted). z[t][v] is the value's absence (its results come
/// back together when it is recomputed); a result's live bytes are
/// b (1 - z) when needed, b max(0, R - z) otherwise.
bool addStep(const RematProblem &problem, const ScheduleFacts &f, int t,
             int64_t memory, Relaxation &m,
             std::vector<std::vector<std::pair<int, int>>> &absentAt) {
  const auto &nodes = problem.nodes;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<char> isInput(t, 0);
  for (int u : nodes[t].inputs)
    isInput[u] = 1;
  std::vector<int> zCol(t, -1);
  std::vector<std::pair<int, double>> memoryTerms;
  // t's output, less what it may write over an input dying at t (in-place
  // sharing: a plan may or may not let it, so the bound assumes it does).
  int64_t constantBytes = nodes[t].outputBytes - nodes[t].inPlaceBytes;
  // Consumers before producers, so that a value knows whether a consumer may
  // be absent (and recomputed from it) when its turn comes.
  for (int v = t - 1; v >= 0; --v) {
    const auto &results = f.results[v];
    std::vector<int> rCol(results.size(), -1);
    std::vector<char> needed(results.size(), 0);
    // An input of t is present at t, but of its results only those t reads
    // must be: a plan may have recomputed it for t and dropped the others
    // (a layer norm recomputed for a gradient GEMM holds its output, not
    // its statistics, which a later recomputation brings back). Counting
    // them would bound above such a plan's peak.
    std::vector<char> mayDrop(results.size(), 0);
    if (isInput[v] && results.size() > 1 && !f.isOutput[v]) {
      mayDrop.assign(results.size(), 1);
      for (int r : resultsRead(nodes, nodes[t], v))
        mayDrop[r] = 0;
    }
    bool anyNeeded = false, anyRead = false;
    for (size_t r = 0; r < results.size(); ++r) {
      if (mayDrop[r])
        continue;
      needed[r] = results[r].second >= t || f.isOutput[v];
      anyNeeded = anyNeeded || needed[r];
      if (needed[r])
        continue;
      for (int w : f.resultUsers[v][r]) {
        if (w >= t)
          break;
        if (zCol[w] < 0)
          continue;
        if (rCol[r] < 0)
          rCol[r] = m.addColumn(0, 1, 0, false);
        m.addRow({{rCol[r], 1}, {zCol[w], -1}}, 0, inf);
      }
      anyRead = anyRead || rCol[r] >= 0;
    }
    if (!anyNeeded && !anyRead)
      continue;
    if (nodes[v].recomputable && !isInput[v]) {
      zCol[v] = m.addColumn(0, 1, 0, true);
      absentAt[v].push_back({t, zCol[v]});
      // Absent means needed later.
      if (!anyNeeded) {
        std::vector<std::pair<int, double>> terms = {{zCol[v], -1}};
        for (int c : rCol)
          if (c >= 0)
            terms.push_back({c, 1});
        m.addRow(terms, 0, inf);
      }
    }
    for (size_t r = 0; r < results.size(); ++r) {
      const int64_t size = results[r].first;
      const double b = static_cast<double>(size) / m.byteScale;
      if (needed[r]) {
        constantBytes += size;
        if (zCol[v] >= 0 && b > 0)
          memoryTerms.push_back({zCol[v], -b});
      } else if (rCol[r] >= 0 && b > 0) {
        if (zCol[v] < 0) {
          memoryTerms.push_back({rCol[r], b});
          continue;
        }
        int live = m.addColumn(0, 1, 0, false);
        m.addRow({{live, 1}, {rCol[r], -1}, {zCol[v], 1}}, 0, inf);
        memoryTerms.push_back({live, b});
      }
    }
  }
  if (constantBytes > memory && memoryTerms.empty())
    return false;
  // One byte of room: the budget is inclusive and the LP has tolerances.
  m.addRow(memoryTerms, -inf,
           static_cast<double>(memory - constantBytes + 1) / m.byteScale);
  ++m.steps;
  return true;
}

/// The recomputation counts per interval between consecutive chosen steps
/// (the file comment's recomputationChains): y[i][v] >= 0, of v's cost, is
/// "v is computed again in (steps[i], steps[i+1]]", the last interval
/// running to the end of the schedule.
void addRecomputationChains(
    const RematProblem &problem, const ScheduleFacts &f,
    const std::vector<std::vector<std::pair<int, int>>> &absentAt,
    Relaxation &m) {
  const auto &nodes = problem.nodes;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<int> steps;
  for (int v = 0; v < f.n; ++v)
    for (auto [t, col] : absentAt[v])
      steps.push_back(t);
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  const int k = static_cast<int>(steps.size());
  auto stepIndex = [&](int t) {
    return static_cast<int>(std::lower_bound(steps.begin(), steps.end(), t) -
                            steps.begin());
  };
  // z[i][v]: v's absence column at steps[i]; -1 where it has none, which
  // for a value of one result means present there (an input of the step)
  // or read no more.
  std::vector<std::vector<int>> z(k, std::vector<int>(f.n, -1));
  std::vector<int> firstInterval(f.n, k);
  for (int v = 0; v < f.n; ++v) {
    for (auto [t, col] : absentAt[v])
      z[stepIndex(t)][v] = col;
    if (!absentAt[v].empty())
      firstInterval[v] = stepIndex(absentAt[v].front().first);
  }
  auto single = [&](int v) { return f.results[v].size() == 1; };
  // Made when a row names it (a column in no row is 0 at the optimum, and
  // CBC's probing once aborted on such columns' bounds).
  std::vector<std::vector<int>> y(k, std::vector<int>(f.n, -1));
  auto yAt = [&](int i, int v) {
    if (y[i][v] < 0)
      y[i][v] = m.addColumn(
          0, inf, std::max(0.0, nodes[v].seconds / m.timeScale), false);
    return y[i][v];
  };
  for (int v = 0; v < f.n; ++v)
    for (int i = firstInterval[v]; i < k; ++i) {
      if (z[i][v] < 0)
        continue;
      // Absent at steps[i], present at its next step: computed in between.
      // A value of several results may be read at a step for one result
      // while another stays absent, so its span runs to its next column.
      std::vector<std::pair<int, double>> terms = {{yAt(i, v), 1},
                                                   {z[i][v], -1}};
      int next = i + 1;
      if (!single(v))
        for (; next < k && z[next][v] < 0; ++next)
          terms.push_back({yAt(next, v), 1});
      if (next < k)
        terms.push_back({z[next][v], 1});
      m.addRow(terms, 0, inf);
      if (!single(v))
        continue;
      // Absent at steps[i] and read before steps[i+1]: computed in between.
      const int end = i + 1 < k ? steps[i + 1] : f.n;
      auto reader =
          std::upper_bound(f.users[v].begin(), f.users[v].end(), steps[i]);
      if (reader != f.users[v].end() && *reader < end)
        m.addRow({{y[i][v], 1}, {z[i][v], -1}}, 0, inf);
    }
  // Computed again in interval i: its inputs of one result absent at
  // steps[i] are too. Consumers before producers, so that an input's column
  // made here gets its own inputs' rows.
  for (int i = 0; i < k; ++i)
    for (int v = f.n - 1; v >= 0; --v) {
      if (y[i][v] < 0)
        continue;
      for (int u : nodes[v].inputs)
        if (z[i][u] >= 0 && single(u))
          m.addRow({{yAt(i, u), 1}, {y[i][v], -1}, {z[i][u], -1}}, -1, inf);
    }
}

/// The relaxation over the candidate steps, taken in order while the model
/// stays within maxColumns (at least one step). Returns false when a step
/// proves that no plan fits.
bool buildRelaxation(const RematProblem &problem, const ScheduleFacts &f,
                     const std::vector<int> &candidates,
                     const std::vector<int64_t> &memory, int maxColumns,
                     bool chains, Relaxation &m) {
  const auto &nodes = problem.nodes;
  const double inf = std::numeric_limits<double>::infinity();
  for (const Node &node : nodes) {
    m.byteScale = std::max(m.byteScale, static_cast<double>(node.outputBytes));
    m.timeScale = std::max(m.timeScale, node.seconds);
  }
  if (m.timeScale <= 0)
    m.timeScale = 1;
  std::vector<std::vector<std::pair<int, int>>> absentAt(f.n);
  for (int t : candidates) {
    if (m.steps > 0 && m.numColumns() >= maxColumns)
      break;
    if (!addStep(problem, f, t, memory[t], m, absentAt))
      return false;
  }
  // Each value's absence columns in schedule order.
  m.zAt.assign(f.n, {});
  for (int v = 0; v < f.n; ++v) {
    std::sort(absentAt[v].begin(), absentAt[v].end());
    for (auto [t, col] : absentAt[v])
      m.zAt[v].push_back(col);
  }
  if (chains) {
    addRecomputationChains(problem, f, absentAt, m);
    return true;
  }
  // Recomputation counts, over each value's steps.
  for (int v = 0; v < f.n; ++v) {
    const double cost = nodes[v].seconds / m.timeScale;
    if (cost <= 0)
      continue;
    const auto &zs = m.zAt[v];
    for (size_t i = 0; i < zs.size(); ++i) {
      int r = m.addColumn(0, inf, cost, false);
      if (i + 1 < zs.size())
        m.addRow({{r, 1}, {zs[i], -1}, {zs[i + 1], 1}}, 0, inf);
      else
        m.addRow({{r, 1}, {zs[i], -1}}, 0, inf);
    }
  }
  return true;
}

} // namespace

StepTimeBound boundStepTime(const RematProblem &problem,
                            const StepTimeBoundOptions &options) {
  Stopwatch watch;
  StepTimeBound bound;
  bound.budgetBytes = problem.budgetBytes;
  const double base = baseSeconds(problem);
  bound.seconds = base;
  auto done = [&](const std::string &note) {
    bound.solveSeconds = watch.seconds();
    bound.note = note;
    return bound;
  };
  if (problem.budgetBytes <= 0)
    return done("no budget");
  const std::vector<int64_t> memory = memoryAtSteps(problem);
  if (!memory.empty() && *std::max_element(memory.begin(), memory.end()) < 0) {
    bound.infeasible = true;
    return done("the fixed bytes alone exceed the budget");
  }
  ScheduleFacts facts = analyzeSchedule(problem);
  std::vector<int> candidates =
      candidateSteps(facts, memory, options.maxSteps);
  if (candidates.empty())
    return done("the schedule without recomputation fits");
  Relaxation m;
  const bool possible =
      buildRelaxation(problem, facts, candidates, memory, options.maxColumns,
                      options.recomputationChains, m);
  bound.steps = m.steps;
  bound.columns = m.numColumns();
  bound.rows = m.numRows();
  char size[128];
  std::snprintf(size, sizeof size,
                "presence relaxation (%d steps, %d columns, %d rows)",
                bound.steps, bound.columns, bound.rows);
  if (!possible) {
    bound.infeasible = true;
    return done(std::string(size) + ": values that cannot be recomputed "
                                     "alone exceed the budget");
  }

  // The solvers' tolerances: a certified bound gives a little away.
  auto recomputeSeconds = [&](double objective) {
    return std::max(0.0, objective * m.timeScale * (1 - 1e-6));
  };
  auto keepAbsence = [&](const std::vector<double> &x) {
    bound.absence.assign(facts.n, 0);
    for (int v = 0; v < facts.n; ++v)
      for (int c : m.zAt[v])
        bound.absence[v] = std::max(bound.absence[v], x[c]);
  };
  MipResult lp = solveLpRelaxation(m);
  if (lp.provenInfeasible) {
    bound.infeasible = true;
    return done(std::string(size) + ": infeasible, so no plan fits");
  }
  if (!lp.hasSolution)
    return done(std::string(size) + ": the LP was not solved; no bound "
                                     "beyond the schedule's own time");
  keepAbsence(lp.solution);
  const double lpRecompute = recomputeSeconds(lp.bound);
  double recompute = lpRecompute;
  char text[256];
  std::string branch;
  if (options.branchNodes > 0 && recompute > 0 &&
      m.numColumns() <= options.branchMaxColumns) {
    MipOptions mip;
    mip.maxNodes = options.branchNodes;
    mip.seconds = options.branchSeconds;
    mip.feasibilityPump = !options.recomputationChains;
    MipResult result = solveMip(m, mip);
    if (result.provenInfeasible) {
      bound.infeasible = true;
      return done(std::string(size) +
                  ": branch and bound proved it infeasible, so no plan fits");
    }
    if (result.hasSolution)
      keepAbsence(result.solution);
    if (std::isfinite(result.bound) &&
        recomputeSeconds(result.bound) > recompute) {
      recompute = recomputeSeconds(result.bound);
      bound.fromBranchAndBound = true;
    }
    std::snprintf(text, sizeof text, ", branch and bound %.4g s%s", recompute,
                  result.provenOptimal ? " (solved)" : "");
    branch = text;
  }
  bound.seconds = base + recompute;
  std::snprintf(text, sizeof text, ": recomputation >= %.4g s (LP %.4g s%s)",
                recompute, lpRecompute, branch.c_str());
  return done(size + std::string(text));
}

} // namespace remat::plan
