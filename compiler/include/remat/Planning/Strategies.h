//===- Strategies.h - Rematerialization strategies -------------*- C++ -*-===//
//
// The strategies behind `--strategy none|all|sqrt|milp|auto`. Each takes a
// RematProblem and returns a RematPlan whose sequence passes simulate(), with
// peakBytes, seconds, fitsBudget, solveSeconds, strategy and note filled.
// A plan fits when peakBytes <= budgetBytes; budgetBytes <= 0 means no
// budget. When nothing a strategy considers fits, it returns the lowest-peak
// plan it found and says so in the note.
//
// Every strategy except the MILP builds its plan from a choice of values to
// keep (checkpoints) with the schedule builder below, so that the backward
// (non-recomputable) part of the schedule keeps its order and each forward
// value lost to the budget is recomputed just before the backward op that
// needs it.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_PLANNING_STRATEGIES_H
#define REMAT_PLANNING_STRATEGIES_H

#include "remat/Planning/RematProblem.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace remat::plan {

enum class Strategy { None, All, Sqrt, Milp, Auto };

/// "none", "all", "sqrt", "milp", "auto"; nullopt for anything else.
std::optional<Strategy> parseStrategy(std::string_view name);
const char *strategyName(Strategy strategy);

struct MilpOptions {
  /// Wall-clock limit for branch and bound (`--milp-seconds`).
  double timeLimitSeconds = 10;
  /// Up to this many nodes the MILP is Checkmate's model; above it, the
  /// decomposition (planMilp). CBC does not bound the time of its root LP:
  /// at 150 nodes (45k variables) model building and the root take ~10 s on
  /// one core before the time limit starts to bite, at 250 nodes (125k
  /// variables) ~150 s.
  int maxNodes = 150;
  /// Give CBC auto's heuristic plan (at least as good as none/all/sqrt) as
  /// a first incumbent.
  bool warmStart = true;
  /// Whether stages of recomputable (forward) nodes may recompute too, as
  /// in Checkmate. Off, recomputation happens only before non-recomputable
  /// nodes: a ~20% smaller model, exact unless dropping and recomputing a
  /// value within the forward pass would lower the peak.
  bool recomputeInForwardStages = true;
  /// CBC's own log level (0 = silent).
  int logLevel = 0;
  /// The step-time bound the MILP proves its gap with (StepTimeBound.h):
  /// more steps than auto's, and branch and bound for half the time limit.
  StepTimeBoundOptions bound() const {
    StepTimeBoundOptions options;
    options.maxSteps = 32;
    options.maxColumns = 20000;
    options.branchMaxColumns = options.maxColumns;
    options.branchNodes = INT_MAX;
    options.branchSeconds = std::max(0.5, timeLimitSeconds / 2);
    return options;
  }
};

struct AutoOptions {
  /// Work limit of the search phases, in node steps built and simulated
  /// (each candidate plan costs the schedule's node count plus its sequence
  /// length): deterministic, unlike a wall-clock limit, so the plan does not
  /// depend on machine load; and scaled to the graph, since a big graph's
  /// candidates cost more each. The seed plans always run; local search and
  /// the final tail search stop once this is spent. 0 means no limit.
  /// The default is about 2-3 s of search on one core of a 2026 server CPU
  /// (Llama-7B shape at its memory floor); GPT-2 small needs a tenth of it.
  int64_t workLimit = 50'000'000;
  /// Up to this many nodes every forward value is a move of the local
  /// search; above it, values are moved in groups (the same op at the same
  /// place in every region).
  int perValueSearchNodes = 600;
  /// Up to this many nodes auto also runs the MILP (warm-started from its
  /// own best plan) for at most milpSeconds and keeps the better plan.
  /// 0 turns it off.
  int milpBelowNodes = 80;
  double milpSeconds = 3;
  /// Seed the search with the solution of the step-time bound's relaxation
  /// (StepTimeBound.h): `relaxedSolution` when given (StepTimeBound::absence
  /// of a bound the caller computed), else auto computes the bound at its
  /// budget with `bound` and returns it with the plan (RematPlan::bound).
  bool boundHint = true;
  StepTimeBoundOptions bound;
  std::vector<double> relaxedSolution;
  /// The relaxation also solved at these fractions of the budget's memory
  /// above the fixed bytes (its LP alone), for more seeds.
  std::vector<double> lowerHintBudgets = {0.97, 0.93};
  /// The step time of the bound whose solution relaxedSolution is (0: not
  /// known; auto's own bound then).
  double relaxedBoundSeconds = 0;
  /// On graphs with per-value search, when the best plan fits and is more
  /// than this far above the bound (as a fraction of it): solve the
  /// relaxation with recomputation chains too (a bound never lower,
  /// returned in RematPlan::bound when higher) and search once more from
  /// its solution. Negative: never.
  double chainSearchAboveGap = 0.01;
  /// On graphs with per-value search (perValueSearchNodes), when no plan
  /// fits: this many more local searches, each with other perturbations and
  /// a work limit of its own (so the memory floor, found with a 1-byte
  /// budget, depends less on one seed).
  unsigned restartsWhenNothingFits = 2;
  /// On such graphs, while the best plan fits but is more than
  /// restartAboveGap above the step-time bound (a fraction of it; negative:
  /// never): this many such restarts, in the main search and in the search
  /// from the chained relaxation (near the floors, where the perturbations
  /// decide which plans that fit the search reaches). Ten rather than
  /// five took HF Llama's +10% cell from 0.855 to 0.769 ms (gap 23.2% to
  /// 10.8%), and no other cell slower; twenty or forty found nothing more
  /// there. The five more restarts cost 5-18 s of planning at the cells
  /// that run them (13-36 s in all there, on 2 shared cores).
  unsigned restartsAboveGap = 10;
  double restartAboveGap = 0.05;
  /// On such graphs, when still no plan fits: search the problem on coarse
  /// estimates too (withoutSharing) and climb from its best plan.
  bool coarseSearchWhenNothingFits = true;
  /// Seed for the perturbations of the local search. Results are
  /// deterministic, except where the MILP polish stops on milpSeconds.
  unsigned seed = 1;
};

struct StrategyOptions {
  MilpOptions milp;
  AutoOptions autoOptions;
};

//===-- Strategies -------------------------------------------------------===//

/// The schedule as it is: nothing recomputed.
RematPlan planNone(const RematProblem &problem);
/// Keep the values that cross region boundaries (the inputs of every
/// layer-like region) and values outside regions; recompute the rest.
RematPlan planAll(const RematProblem &problem);
/// Chen et al. 2016: cut the forward ops (schedule order) into segments and
/// keep the values crossing each cut. Tries every segment count (sampled on
/// big graphs) and takes the fastest plan within the budget; without a
/// budget, about sqrt(n) segments.
RematPlan planSqrt(const RematProblem &problem);
/// The Checkmate MILP (stage = node), solved with CBC, warm-started from
/// auto's search; its gap also counts the step-time bound. Over
/// options.maxNodes nodes, a decomposition: CBC solves the step-time bound's
/// relaxation (StepTimeBound.h) for a bound on every plan, auto's search
/// seeded by its solution gives the plan, and the gap between the two is
/// the proven one.
RematPlan planMilp(const RematProblem &problem, const MilpOptions &options = {});
/// The default: seeds (none, all, sqrt, region and two-level families),
/// then a local search over which values to keep, checked by simulate.
RematPlan planAuto(const RematProblem &problem, const AutoOptions &options = {});

RematPlan runStrategy(Strategy strategy, const RematProblem &problem,
                      const StrategyOptions &options = {});

//===-- Building plans from checkpoints ----------------------------------===//

/// Forward-style (recomputable) nodes run once in schedule order; a value
/// with keep[v] stays live until its last read; any other recomputable value
/// is freed after its last read by a recomputable node in the schedule (its
/// last forward use). Before each node, missing inputs are recomputed
/// together with their missing recomputable ancestors, in schedule order,
/// from kept or live values; recomputed values stay live until their last
/// read. Graph outputs are always kept. The result passes simulate(); its
/// peakBytes/seconds are filled (fitsBudget too).
RematPlan planFromCheckpoints(const RematProblem &problem,
                              const std::vector<bool> &keep);

/// Multi-level generalisation (Revolve-like). level[v] = 0 keeps v like
/// keep[v] above; kNotKept (or any value > maxLevel) marks an ordinary
/// value; levels 1..L mark nested checkpoints. Values with level <= l cut
/// the forward ops into level-l segments. With retainAll=false, of the
/// values recomputed for a node, only those in the finest segment of one of
/// the node's missing inputs, and level-l checkpoints lying in the same
/// level-(l-1) segment as such an input, stay live; the others are freed
/// right after the recomputation and recomputed again when needed. With
/// retainAll=true every recomputed value stays live (planFromCheckpoints).
/// kTransient: like kNotKept, except that when the value is recomputed only
/// as an ancestor of what a node needs (not read by the node itself), it is
/// freed right after that recomputation whatever the rule above says.
/// kKeepFirst: like kNotKept, except that the value computed in the forward
/// pass stays live through its first read by a non-recomputable node (its
/// first backward use) and is dropped only then.
/// kKeepToUse: the same, but the forward value is dropped after its first
/// use of any kind once the forward ops are done with it (also a
/// recomputation that reads it), and recomputed when needed again.
/// kEachUse: like kTransient, and a value recomputed for a node's own read
/// is dropped right after that node: recomputed again for every reader.
///
/// Graph outputs are kept, except with kTransient, kKeepFirst, kKeepToUse or
/// kEachUse: then they are dropped like other values and recomputed, if
/// missing, right after the last node of the schedule that reads one of
/// their inputs (while those are still there), and kept to the end.
constexpr int kNotKept = INT_MAX;
constexpr int kTransient = INT_MAX - 1;
constexpr int kKeepFirst = INT_MAX - 2;
constexpr int kKeepToUse = INT_MAX - 3;
constexpr int kEachUse = INT_MAX - 4;
RematPlan planFromLevels(const RematProblem &problem,
                         const std::vector<int> &level, bool retainAll);

/// Sum of every node's seconds: the time of the schedule without
/// recomputation.
double baseSeconds(const RematProblem &problem);

} // namespace remat::plan

#endif // REMAT_PLANNING_STRATEGIES_H
