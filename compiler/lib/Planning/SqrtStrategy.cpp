//===- SqrtStrategy.cpp - Chen et al. 2016 segment checkpointing ----------===//
//
// "Training Deep Nets with Sublinear Memory Cost": cut the forward ops into
// k segments, keep only what crosses the cuts, and recompute each segment
// before its backward ops. k = sqrt(n) balances the kept boundaries against
// one recomputed segment. Here the cuts are placed by schedule position
// (moved a little towards positions with few crossing bytes), and, given a
// budget, every k is tried (sampled above 64) and the fastest plan that fits
// is taken; without a budget, k = round(sqrt(n)).
//
//===----------------------------------------------------------------------===//

#include "PlanningSupport.h"

#include "remat/Planning/Strategies.h"

#include <algorithm>
#include <cmath>

namespace remat::plan {
namespace detail {

std::vector<int> segmentCounts(int m) {
  std::vector<int> ks;
  for (int k = 1; k <= std::min(m, 64); ++k)
    ks.push_back(k);
  double k = 64;
  while (k < m) {
    k = std::max(k * 1.08, k + 1);
    ks.push_back(std::min(m, static_cast<int>(k)));
  }
  ks.push_back(std::max(1, static_cast<int>(std::lround(std::sqrt(m)))));
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  return ks;
}

Candidate sqrtCandidate(const ForwardInfo &info, int k, bool keepTail) {
  std::vector<int> cuts = evenCuts(info, k);
  std::vector<bool> keep(info.n, false);
  markCrossing(info, cuts, keep);
  if (keepTail) {
    int from = cuts.empty() ? 0 : cuts.back() + 1;
    for (int q = from; q < static_cast<int>(info.fwdNodes.size()); ++q)
      keep[info.fwdNodes[q]] = true;
  }
  Candidate c;
  c.level = levelsFromKeep(keep);
  c.retainAll = true;
  c.label = "sqrt(" + std::to_string(cuts.size() + 1) + " segments" +
            (keepTail ? ", last kept" : "") + ")";
  return c;
}

} // namespace detail

using namespace detail;

RematPlan planSqrt(const RematProblem &problem) {
  Stopwatch watch;
  ForwardInfo info = analyzeForward(problem);
  PlanBuilder builder(problem, info);
  const int m = static_cast<int>(info.fwdNodes.size());
  int kSqrt = std::max(1, static_cast<int>(std::lround(std::sqrt(m))));

  RematPlan best;
  bool have = false;
  auto consider = [&](const Candidate &c) {
    RematPlan plan;
    if (!builder.build(c.level, c.retainAll, plan))
      return;
    plan.strategy = c.label;
    if (!have || better(problem, plan, best)) {
      best = std::move(plan);
      have = true;
    }
  };
  if (problem.budgetBytes <= 0) {
    consider(sqrtCandidate(info, kSqrt, /*keepTail=*/false));
  } else {
    for (int k : segmentCounts(m))
      for (bool tail : {false, true})
        consider(sqrtCandidate(info, k, tail));
  }
  if (!have)
    return planNone(problem);
  std::string label = "sqrt: " + best.strategy;
  finish(problem, best, label, watch.seconds());
  return best;
}

} // namespace remat::plan
