//===- CheckpointSchedule.cpp - Plans from kept values ---------------------===//
//
// The schedule builder shared by every checkpoint strategy: given which
// forward values to keep (and, for multi-level plans, nested checkpoint
// levels), produce the execution sequence. Forward ops run once in schedule
// order; a value that is not kept is dropped after its last forward use;
// before each op, its missing inputs are recomputed with their missing
// recomputable ancestors, in schedule order.
//
//===----------------------------------------------------------------------===//

#include "PlanningSupport.h"

#include "remat/Planning/Strategies.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace remat::plan {
namespace detail {

namespace {
/// Levels above this are treated as "not kept".
constexpr int kMaxLevel = 16;
} // namespace

ForwardInfo analyzeForward(const RematProblem &problem) {
  ForwardInfo info;
  const auto &nodes = problem.nodes;
  const int n = static_cast<int>(nodes.size());
  info.n = n;
  info.fwd.assign(n, 0);
  info.isOutput.assign(n, 0);
  info.lastFwdRead.assign(n, -1);
  info.dieAfter.assign(n, {});
  info.fwdPos.assign(n, -1);
  info.regionOrd.assign(n, -1);
  for (int v = 0; v < n; ++v) {
    info.fwd[v] = nodes[v].recomputable;
    info.baseSeconds += nodes[v].seconds;
  }
  for (int o : problem.graphOutputs)
    if (o >= 0 && o < n)
      info.isOutput[o] = 1;
  for (int v = 0; v < n; ++v) {
    if (!info.fwd[v])
      continue;
    for (int u : nodes[v].inputs)
      if (u >= 0 && u < n && info.fwd[u])
        info.lastFwdRead[u] = std::max(info.lastFwdRead[u], v);
  }
  info.dieAfterFirstUse.assign(n, {});
  std::vector<int> firstUse(n, -1);
  for (int w = 0; w < n; ++w) {
    if (info.fwd[w])
      continue;
    for (int u : nodes[w].inputs)
      if (u >= 0 && u < n && info.fwd[u] && w > info.lastFwdRead[u] &&
          firstUse[u] < 0)
        firstUse[u] = w;
  }
  for (int v = 0; v < n; ++v) {
    if (!info.fwd[v])
      continue;
    int t = info.lastFwdRead[v] >= 0 ? info.lastFwdRead[v] : v;
    info.dieAfter[t].push_back(v);
    info.dieAfterFirstUse[std::max(t, firstUse[v])].push_back(v);
  }
  // A dropped output is recomputed once its inputs' last reader has run.
  std::vector<int> lastReader(n, -1);
  for (int w = 0; w < n; ++w)
    for (int u : nodes[w].inputs)
      if (u >= 0 && u < n)
        lastReader[u] = std::max(lastReader[u], w);
  info.outputDeadline.assign(n, -1);
  for (int o : problem.graphOutputs) {
    if (o < 0 || o >= n || !info.fwd[o])
      continue;
    int deadline = o;
    for (int u : nodes[o].inputs)
      deadline = std::max(deadline, lastReader[u]);
    info.outputDeadline[o] = deadline;
  }
  std::map<int, int> ordinals;
  for (int v = 0; v < n; ++v) {
    if (info.fwd[v]) {
      info.fwdPos[v] = static_cast<int>(info.fwdNodes.size());
      info.fwdNodes.push_back(v);
    }
    int r = nodes[v].region;
    if (r >= 0) {
      auto [it, inserted] =
          ordinals.emplace(r, static_cast<int>(ordinals.size()));
      info.regionOrd[v] = it->second;
    }
  }
  info.numRegions = static_cast<int>(ordinals.size());
  // Crossing bytes per forward position, by a difference array.
  const int m = static_cast<int>(info.fwdNodes.size());
  std::vector<int64_t> delta(m + 1, 0);
  for (int q = 0; q < m; ++q) {
    int v = info.fwdNodes[q];
    int last = info.lastFwdRead[v];
    if (last < 0)
      continue;
    int lq = info.fwdPos[last];
    // Positions q .. lq-1 have v crossing.
    delta[q] += nodes[v].outputBytes;
    delta[lq] -= nodes[v].outputBytes;
  }
  info.crossBytes.assign(m, 0);
  int64_t acc = 0;
  for (int q = 0; q < m; ++q) {
    acc += delta[q];
    info.crossBytes[q] = acc;
  }
  return info;
}

PlanBuilder::PlanBuilder(const RematProblem &problem, const ForwardInfo &info)
    : problem(problem), info(info) {
  lv.assign(info.n, 0);
  transient.assign(info.n, 0);
  keepFirst.assign(info.n, 0);
  keepToUse.assign(info.n, 0);
  eachUse.assign(info.n, 0);
  avail.assign(info.n, 0);
  original.assign(info.n, 0);
  stamp.assign(info.n, 0);
}

void PlanBuilder::recompute(int maxLevel, bool retainAll) {
  const auto &nodes = problem.nodes;
  ++curStamp;
  batch.clear();
  stack.clear();
  for (int u : needed) {
    stamp[u] = curStamp;
    stack.push_back(u);
  }
  while (!stack.empty()) {
    int u = stack.back();
    stack.pop_back();
    batch.push_back(u);
    for (int w : nodes[u].inputs) {
      if (avail[w] || stamp[w] == curStamp)
        continue;
      stamp[w] = curStamp;
      stack.push_back(w);
    }
  }
  std::sort(batch.begin(), batch.end());
  for (int u : batch) {
    sequence.push_back(u);
    original[u] = 0;
    for (int w : nodes[u].inputs)
      if (keepToUse[w] && original[w])
        firstUseDone.push_back(w);
  }
  for (int u : batch) {
    bool retain = retainAll;
    if (transient[u] || eachUse[u]) {
      retain = std::find(needed.begin(), needed.end(), u) != needed.end();
    } else if (!retain) {
      const auto &fine = seg[maxLevel];
      for (int v : needed)
        if (fine[u] == fine[v]) {
          retain = true;
          break;
        }
      int l = lv[u];
      if (!retain && l >= 1 && l <= maxLevel) {
        const auto &coarse = seg[l - 1];
        for (int v : needed)
          if (coarse[u] == coarse[v]) {
            retain = true;
            break;
          }
      }
    }
    avail[u] = retain;
  }
}

void PlanBuilder::recomputeOutputs(int t, int maxLevel) {
  for (int o : problem.graphOutputs) {
    if (o < 0 || o >= info.n || avail[o] || info.outputDeadline[o] < 0 ||
        info.outputDeadline[o] > t || o > t)
      continue;
    needed.assign(1, o);
    firstUseDone.clear();
    recompute(maxLevel, /*retainAll=*/true);
    avail[o] = 1;
  }
}

bool PlanBuilder::build(const std::vector<int> &level, bool retainAll,
                        RematPlan &plan) {
  const auto &nodes = problem.nodes;
  const int n = info.n;
  int maxLevel = 0;
  for (int v = 0; v < n; ++v) {
    int l = v < static_cast<int>(level.size()) ? level[v] : kNotKept;
    // Outputs are kept unless a level says how to drop them.
    const bool dropsOutput = l == kTransient || l == kKeepFirst ||
                             l == kKeepToUse || l == kEachUse;
    if (!info.fwd[v] || (info.isOutput[v] && !dropsOutput))
      l = 0;
    if (l < 0)
      l = 0;
    transient[v] = l == kTransient;
    keepFirst[v] = l == kKeepFirst;
    keepToUse[v] = l == kKeepToUse;
    eachUse[v] = l == kEachUse;
    if (l > kMaxLevel)
      l = kNotKept;
    lv[v] = l;
    if (l != kNotKept)
      maxLevel = std::max(maxLevel, l);
  }
  if (!retainAll) {
    seg.resize(maxLevel + 1);
    for (int l = 0; l <= maxLevel; ++l) {
      auto &s = seg[l];
      s.assign(n, 0);
      int count = 0;
      for (int v = 0; v < n; ++v) {
        s[v] = count;
        if (info.fwd[v] && lv[v] <= l)
          ++count;
      }
    }
  }
  std::fill(avail.begin(), avail.end(), 0);
  std::fill(original.begin(), original.end(), 0);
  sequence.clear();
  for (int t = 0; t < n; ++t) {
    needed.clear();
    ++curStamp;
    for (int u : nodes[t].inputs) {
      if (u < 0 || u >= t) {
        plan.note = "node " + std::to_string(t) +
                    " reads a node that is not before it in the schedule";
        return false;
      }
      if (!avail[u] && stamp[u] != curStamp) {
        stamp[u] = curStamp;
        needed.push_back(u);
      }
    }
    firstUseDone.clear();
    if (!needed.empty())
      recompute(maxLevel, retainAll);
    sequence.push_back(t);
    for (int u : needed)
      if (eachUse[u])
        avail[u] = 0;
    // A kKeepToUse value's forward instance dies after its first use once
    // the forward ops are done with it (by t or by t's recomputations).
    if (!info.fwd[t])
      for (int u : nodes[t].inputs)
        if (keepToUse[u] && original[u])
          firstUseDone.push_back(u);
    for (int u : firstUseDone)
      if (t > info.lastFwdRead[u] && original[u])
        avail[u] = 0;
    avail[t] = 1;
    original[t] = 1;
    for (int v : info.dieAfter[t])
      if (original[v] && lv[v] != 0 && !keepFirst[v] && !keepToUse[v])
        avail[v] = 0;
    for (int v : info.dieAfterFirstUse[t])
      if (original[v] && keepFirst[v])
        avail[v] = 0;
    recomputeOutputs(t, maxLevel);
  }
  recomputeOutputs(n, maxLevel);
  plan.sequence = sequence;
  std::string error;
  if (!simulate(problem, plan, error)) {
    plan.note = "internal error: built an invalid plan: " + error;
    return false;
  }
  plan.fitsBudget = fits(problem, plan);
  return true;
}

std::vector<int> levelsFromKeep(const std::vector<bool> &keep) {
  std::vector<int> level(keep.size());
  for (size_t v = 0; v < keep.size(); ++v)
    level[v] = keep[v] ? 0 : kNotKept;
  return level;
}

void markCrossing(const ForwardInfo &info, const std::vector<int> &cuts,
                  std::vector<bool> &keep) {
  if (cuts.empty())
    return;
  for (int v : info.fwdNodes) {
    int last = info.lastFwdRead[v];
    if (last < 0)
      continue;
    int q = info.fwdPos[v], lq = info.fwdPos[last];
    // Is there a cut c with q <= c < lq?
    auto it = std::lower_bound(cuts.begin(), cuts.end(), q);
    if (it != cuts.end() && *it < lq)
      keep[v] = true;
  }
}

std::vector<int> evenCuts(const ForwardInfo &info, int k) {
  const int m = static_cast<int>(info.fwdNodes.size());
  std::vector<int> cuts;
  if (k <= 1 || m <= 1)
    return cuts;
  k = std::min(k, m);
  double len = static_cast<double>(m) / k;
  int window = static_cast<int>(len / 4);
  int prev = -1;
  for (int i = 1; i < k; ++i) {
    int q = static_cast<int>(i * len + 0.5) - 1;
    int best = q;
    for (int d = 0; d <= window; ++d) {
      for (int c : {q - d, q + d}) {
        if (c <= prev || c >= m - 1)
          continue;
        if (info.crossBytes[c] < info.crossBytes[best] || best <= prev)
          best = c;
      }
    }
    if (best <= prev || best >= m - 1)
      continue;
    cuts.push_back(best);
    prev = best;
  }
  return cuts;
}

std::vector<bool> regionCrossingKeep(const RematProblem &problem,
                                     const ForwardInfo &info, int groupSize) {
  const int n = info.n;
  std::vector<bool> keep(n, false);
  groupSize = std::max(groupSize, 1);
  auto group = [&](int v) {
    int r = info.regionOrd[v];
    return r < 0 ? -1 : r / groupSize;
  };
  for (int w : info.fwdNodes) {
    if (group(w) < 0)
      keep[w] = true;
    for (int u : problem.nodes[w].inputs)
      if (info.fwd[u] && group(u) != group(w))
        keep[u] = true;
  }
  return keep;
}

bool fits(const RematProblem &problem, const RematPlan &plan) {
  return problem.budgetBytes <= 0 || plan.peakBytes <= problem.budgetBytes;
}

bool better(const RematProblem &problem, const RematPlan &a,
            const RematPlan &b) {
  bool fa = fits(problem, a), fb = fits(problem, b);
  if (fa != fb)
    return fa;
  if (fa) {
    // Equal up to summation order: the lower peak wins.
    double tolerance = 1e-12 * std::max(a.seconds, b.seconds);
    if (std::fabs(a.seconds - b.seconds) > tolerance)
      return a.seconds < b.seconds;
    return a.peakBytes < b.peakBytes;
  }
  if (a.peakBytes != b.peakBytes)
    return a.peakBytes < b.peakBytes;
  return a.seconds < b.seconds;
}

std::string formatBytes(int64_t bytes) {
  char buf[64];
  double b = static_cast<double>(bytes);
  if (b >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  else if (b >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2f MB", b / 1e6);
  else if (b >= 1e3)
    std::snprintf(buf, sizeof buf, "%.2f KB", b / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  return buf;
}

void finish(const RematProblem &problem, RematPlan &plan,
            const std::string &strategy, double seconds) {
  plan.strategy = strategy;
  plan.solveSeconds = seconds;
  plan.fitsBudget = fits(problem, plan);
  if (!plan.fitsBudget) {
    std::string msg = "does not fit the budget: lowest peak found " +
                      formatBytes(plan.peakBytes) + " > budget " +
                      formatBytes(problem.budgetBytes);
    plan.note = plan.note.empty() ? msg : plan.note + "; " + msg;
  }
}

} // namespace detail

using namespace detail;

double baseSeconds(const RematProblem &problem) {
  double s = 0;
  for (const auto &node : problem.nodes)
    s += node.seconds;
  return s;
}

RematPlan planFromLevels(const RematProblem &problem,
                         const std::vector<int> &level, bool retainAll) {
  ForwardInfo info = analyzeForward(problem);
  PlanBuilder builder(problem, info);
  RematPlan plan;
  builder.build(level, retainAll, plan);
  return plan;
}

RematPlan planFromCheckpoints(const RematProblem &problem,
                              const std::vector<bool> &keep) {
  return planFromLevels(problem, levelsFromKeep(keep), /*retainAll=*/true);
}

RematPlan planNone(const RematProblem &problem) {
  Stopwatch watch;
  RematPlan plan;
  plan.sequence.resize(problem.nodes.size());
  for (size_t v = 0; v < problem.nodes.size(); ++v)
    plan.sequence[v] = static_cast<int>(v);
  std::string error;
  if (!simulate(problem, plan, error))
    plan.note = "invalid schedule: " + error;
  finish(problem, plan, "none", watch.seconds());
  return plan;
}

std::optional<Strategy> parseStrategy(std::string_view name) {
  if (name == "none")
    return Strategy::None;
  if (name == "all")
    return Strategy::All;
  if (name == "sqrt")
    return Strategy::Sqrt;
  if (name == "milp")
    return Strategy::Milp;
  if (name == "auto")
    return Strategy::Auto;
  return std::nullopt;
}

const char *strategyName(Strategy strategy) {
  switch (strategy) {
  case Strategy::None:
    return "none";
  case Strategy::All:
    return "all";
  case Strategy::Sqrt:
    return "sqrt";
  case Strategy::Milp:
    return "milp";
  case Strategy::Auto:
    return "auto";
  }
  return "?";
}

RematPlan runStrategy(Strategy strategy, const RematProblem &problem,
                      const StrategyOptions &options) {
  switch (strategy) {
  case Strategy::None:
    return planNone(problem);
  case Strategy::All:
    return planAll(problem);
  case Strategy::Sqrt:
    return planSqrt(problem);
  case Strategy::Milp:
    return planMilp(problem, options.milp);
  case Strategy::Auto:
    return planAuto(problem, options.autoOptions);
  }
  return planNone(problem);
}

} // namespace remat::plan
