//===- PlanningSupport.h - Shared pieces of the strategies -----*- C++ -*-===//
//
// Private to lib/Planning: the forward-part analysis every checkpoint
// strategy needs, the reusable plan builder behind planFromLevels, and the
// rules for comparing plans against a budget.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_LIB_PLANNING_PLANNINGSUPPORT_H
#define REMAT_LIB_PLANNING_PLANNINGSUPPORT_H

#include "remat/Planning/RematProblem.h"
#include "remat/Planning/Strategies.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace remat::plan::detail {

/// Facts about the forward (recomputable) part of a schedule.
struct ForwardInfo {
  int n = 0;
  std::vector<char> fwd;      // node is recomputable
  std::vector<char> isOutput; // node is a graph output
  /// Last recomputable reader of each node (-1 when none): a value that is
  /// not kept is freed after it.
  std::vector<int> lastFwdRead;
  /// dieAfter[t]: recomputable values whose original instance is dropped
  /// (unless kept) once node t has run.
  std::vector<std::vector<int>> dieAfter;
  /// The same for values kept through their first backward use
  /// (kKeepFirst): after the first non-recomputable reader that comes after
  /// the last forward use.
  std::vector<std::vector<int>> dieAfterFirstUse;
  /// For a recomputable graph output: the last node that reads one of its
  /// inputs (at least the output itself), after which a dropped output is
  /// recomputed; -1 for other nodes.
  std::vector<int> outputDeadline;
  std::vector<int> fwdNodes; // recomputable nodes in schedule order
  std::vector<int> fwdPos;   // index into fwdNodes, -1 for other nodes
  /// crossBytes[q]: bytes of recomputable values computed at or before
  /// fwdNodes[q] and read by a recomputable node after it (what a cut
  /// after fwdNodes[q] has to keep).
  std::vector<int64_t> crossBytes;
  /// Region ordinal (0, 1, ... by first appearance) of each node, -1 when
  /// the node has no region; numRegions ordinals in all.
  std::vector<int> regionOrd;
  int numRegions = 0;
  double baseSeconds = 0;
};

ForwardInfo analyzeForward(const RematProblem &problem);

/// Builds plans from level vectors (see planFromLevels) and simulates them;
/// keeps its buffers between calls so that a search can call it often.
class PlanBuilder {
public:
  PlanBuilder(const RematProblem &problem, const ForwardInfo &info);
  /// Fills plan.sequence, peakBytes, seconds, fitsBudget. Returns false
  /// (with plan.note set) only on an internal error.
  bool build(const std::vector<int> &level, bool retainAll, RematPlan &plan);

private:
  void recompute(int maxLevel, bool retainAll);
  /// Recomputes the graph outputs that are missing once `t` has run and
  /// their deadline has passed (t = n: at the end).
  void recomputeOutputs(int t, int maxLevel);
  const RematProblem &problem;
  const ForwardInfo &info;
  std::vector<int> lv;
  std::vector<char> avail, original, transient, keepFirst, keepToUse,
      eachUse;
  std::vector<int> stamp;
  int curStamp = 0;
  std::vector<int> needed, batch, stack, sequence, firstUseDone;
  std::vector<std::vector<int>> seg;
};

/// Keep-vector -> level vector (0 for kept, kNotKept otherwise).
std::vector<int> levelsFromKeep(const std::vector<bool> &keep);

/// Marks the values a cut after each forward position in `cuts` (indices
/// into fwdNodes, sorted) has to keep. Values are marked in `keep` (n).
void markCrossing(const ForwardInfo &info, const std::vector<int> &cuts,
                  std::vector<bool> &keep);

/// k-1 cut positions (indices into fwdNodes) that split the forward nodes
/// into k segments of about equal length, each moved within a quarter
/// segment to the position with the fewest crossing bytes.
std::vector<int> evenCuts(const ForwardInfo &info, int k);

/// The `all` keep set with regions grouped `groupSize` at a time: values of
/// no region, and values read by a recomputable node of another group.
std::vector<bool> regionCrossingKeep(const RematProblem &problem,
                                     const ForwardInfo &info, int groupSize);

/// A keep/level choice to be built by PlanBuilder.
struct Candidate {
  std::vector<int> level;
  bool retainAll = true;
  std::string label;
};

/// Segment counts sqrt tries for m forward nodes: every count up to 64,
/// then about 8% apart, plus round(sqrt(m)).
std::vector<int> segmentCounts(int m);
/// Chen's plan with k segments: the crossing values of k-1 even cuts, and
/// with `keepTail` every value after the last cut as well (the last segment
/// would be recomputed right after the forward pass otherwise).
Candidate sqrtCandidate(const ForwardInfo &info, int k, bool keepTail);
/// `all` with regions grouped groupSize at a time.
Candidate regionCandidate(const RematProblem &problem, const ForwardInfo &info,
                          int groupSize);

/// Region inputs checkpointed in a base-ary hierarchy, none of them kept
/// from the forward pass: boundary b (after region b-1) gets level 1 + its
/// depth in the tree over the boundaries (level 1 for the coarsest), values
/// outside regions level 1, and the values inside regions `inner` (kNotKept
/// or kTransient). A recomputation for a backward op then re-creates and
/// holds only the checkpoints of the segments it passes through (Revolve's
/// schedule, roughly), and nothing is held through the loss's own backward:
/// the plans near a memory floor that the loss's backward sets.
Candidate hierarchicalRegionCandidate(const RematProblem &problem,
                                      const ForwardInfo &info, int base,
                                      int inner);

/// The MILP with an optional incumbent (a plan from PlanBuilder).
RematPlan solveMilp(const RematProblem &problem, const MilpOptions &options,
                    const RematPlan *warm);

bool fits(const RematProblem &problem, const RematPlan &plan);
/// Whether plan a is better than b: a fitting plan beats a non-fitting one;
/// among fitting plans the faster (then lower peak) wins; among non-fitting
/// ones the lower peak (then faster) wins.
bool better(const RematProblem &problem, const RematPlan &a,
            const RematPlan &b);
/// Sets fitsBudget and, when the plan does not fit, appends the standard
/// note.
void finish(const RematProblem &problem, RematPlan &plan,
            const std::string &strategy, double seconds);

std::string formatBytes(int64_t bytes);

class Stopwatch {
public:
  Stopwatch() : start(std::chrono::steady_clock::now()) {}
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  }

private:
  std::chrono::steady_clock::time_point start;
};

} // namespace remat::plan::detail

#endif // REMAT_LIB_PLANNING_PLANNINGSUPPORT_H
