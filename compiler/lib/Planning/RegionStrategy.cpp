//===- RegionStrategy.cpp - Checkpoint every layer-like region ------------===//
//
// `all`: keep the input of every layer-like region (the values that cross a
// region boundary) and every value outside regions, and recompute the rest
// of each region before its backward ops. This is per-layer activation
// checkpointing as in torch.utils.checkpoint applied to every block. Also
// the region-based candidates auto seeds from: regions grouped, and region
// inputs in a hierarchy.
//
//===----------------------------------------------------------------------===//

#include "PlanningSupport.h"

#include "remat/Planning/Strategies.h"

namespace remat::plan {
namespace detail {

Candidate regionCandidate(const RematProblem &problem, const ForwardInfo &info,
                          int groupSize) {
  Candidate c;
  c.level = levelsFromKeep(regionCrossingKeep(problem, info, groupSize));
  c.retainAll = true;
  c.label = groupSize <= 1
                ? std::string("all (region inputs)")
                : "all (inputs of every " + std::to_string(groupSize) +
                      " regions)";
  return c;
}

Candidate hierarchicalRegionCandidate(const RematProblem &problem,
                                      const ForwardInfo &info, int base,
                                      int inner) {
  const std::vector<bool> crossing = regionCrossingKeep(problem, info, 1);
  int span = 1;
  while (span < info.numRegions)
    span *= base;
  Candidate c;
  c.level.assign(info.n, kNotKept);
  c.retainAll = false;
  for (int v : info.fwdNodes) {
    if (!crossing[v]) {
      c.level[v] = inner;
      continue;
    }
    const int r = info.regionOrd[v];
    int level = 1;
    // Boundary r + 1: the coarsest level whose spacing divides it.
    for (int spacing = span; r >= 0 && spacing > 1 && (r + 1) % spacing != 0;
         spacing /= base)
      ++level;
    c.level[v] = level;
  }
  c.label = "hierarchical(region inputs, base " + std::to_string(base) +
            (inner == kTransient ? ", others transient)" : ")");
  return c;
}

} // namespace detail

using namespace detail;

RematPlan planAll(const RematProblem &problem) {
  Stopwatch watch;
  ForwardInfo info = analyzeForward(problem);
  if (info.numRegions == 0) {
    RematPlan plan = planNone(problem);
    plan.note = "no layer-like regions: nothing is recomputed";
    finish(problem, plan, "all", watch.seconds());
    return plan;
  }
  PlanBuilder builder(problem, info);
  Candidate c = regionCandidate(problem, info, 1);
  RematPlan plan;
  if (!builder.build(c.level, c.retainAll, plan))
    return plan;
  finish(problem, plan, "all", watch.seconds());
  return plan;
}

} // namespace remat::plan
