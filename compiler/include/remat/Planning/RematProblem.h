//===- RematProblem.h - The rematerialization problem, solver-facing -*- C++ -*-===//
//
// What the rematerialization strategies see of a training step: its ops in
// schedule order as a DAG with a time cost and an output size per op, free
// of MLIR so that solvers can be tested on synthetic graphs. The compiler
// builds a RematProblem from @train_step, asks a strategy for a RematPlan,
// and materialises the plan in the IR (clones of recomputed ops).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_PLANNING_REMATPROBLEM_H
#define REMAT_PLANNING_REMATPROBLEM_H

#include "remat/Planning/StepTimeBound.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace remat::plan {

/// A result of a node: the node's index and which of its results (0 when
/// the node's output is one value).
struct ResultRef {
  int node = -1;
  int result = 0;
  bool operator==(const ResultRef &other) const {
    return node == other.node && result == other.result;
  }
};

/// One op of the schedule. Its output is one value (all results together),
/// or, where `resultBytes` is set, several values that live and die apart.
struct Node {
  std::string name;            // for reports ("layer.3/Softmax")
  std::string opKind;          // op name for reports ("remat.softmax")
  double seconds = 0;          // estimated time to compute it once
  int64_t outputBytes = 0;     // bytes of its results while live
  std::vector<int> inputs;     // nodes it reads (indices < its own)
  /// In-place sharing: the input results the op may overwrite with one of
  /// its results (compiler/include/remat/Dialect/InPlace.h). When the
  /// instance of one of them it reads dies at this occurrence, the result
  /// takes that storage, so the step holds `inPlaceBytes` less. (Next to
  /// `inputs`: simulate() reads both for every occurrence.)
  int64_t inPlaceBytes = 0;
  std::vector<ResultRef> inPlaceInputs;
  /// Several results with lifetimes of their own (a batch norm's output,
  /// read by the next op, and its small saved statistics, read by the
  /// backward): the bytes of each, summing to outputBytes. Empty: one value.
  std::vector<int64_t> resultBytes;
  /// The results this node reads of its inputs that have resultBytes; such
  /// an input with no entry here is read whole.
  std::vector<ResultRef> reads;
  /// Whether the op may be executed again before a later use. Backward and
  /// optimizer ops are not; forward ops are (dropout and BatchNorm are
  /// recomputable by construction: counter-based RNG, running stats as
  /// results).
  bool recomputable = true;
  /// Layer-like region the op belongs to (e.g. a transformer block index),
  /// or -1. Strategies may use it (`all` checkpoints region inputs).
  int region = -1;
};

/// The results of node `input` that `reader` reads (`input` one of
/// reader.inputs): {0} for a single value, else those listed in
/// reader.reads, or all of them where none is listed.
std::vector<int> resultsRead(const std::vector<Node> &nodes,
                             const Node &reader, int input);

/// Bytes among RematProblem::fixedBytes that are not live for the whole
/// step.
struct PartTimeBytes {
  int64_t bytes = 0;
  /// The last node (in schedule order) that reads them: -1 when they may be
  /// dead at any step (a returned result, live only from its op on).
  int lastReader = -1;
  /// The nodes that read them (a batch input): dead after the last
  /// occurrence of any of these in a plan. Empty: live throughout, as far as
  /// simulate() knows (a returned result, or an input the step returns).
  std::vector<int> readers;
};

/// The problem: nodes in schedule order (a topological order), the bytes
/// that are live throughout (persistent state and workspace, counted against
/// the budget but not schedulable), and the budget.
struct RematProblem {
  std::vector<Node> nodes;
  /// Outputs that must be live at the end (loss, new parameters, ...).
  std::vector<int> graphOutputs;
  int64_t fixedBytes = 0;
  int64_t budgetBytes = 0;
  /// Parts of fixedBytes that the runtime's arena holds for only part of the
  /// step: the batch inputs until their last read, returned results from
  /// their op on (PartTimeBytes). simulate() counts a batch input until the
  /// last occurrence of a node that reads it, as the arena does (a
  /// recomputed embedding reads its token ids again in the backward pass),
  /// and anything else throughout, which never undercounts; the step-time
  /// bound subtracts them where they may be dead, so that it covers every
  /// plan whose arena fits (StepTimeBound.h).
  std::vector<PartTimeBytes> partTimeFixedBytes;
};

/// `problem` on coarse estimates: without what the strategies know of
/// in-place writes and of results that die apart (each node's output one
/// value, nothing written in place), so never a lower peak than `problem`'s
/// for the same plan. auto's local search follows its estimates, and on
/// some graphs the finer ones lead it to a higher floor than the coarse ones
/// do; the arena shares in place either way.
RematProblem withoutSharing(RematProblem problem);

/// A plan is an execution sequence: node indices in the order they run; a
/// node listed again is recomputed. Each occurrence of a node creates an
/// instance of its value; a node reads the latest instance of each input,
/// which must still be live. An instance (each of its results, for a node
/// with resultBytes) is freed right after its last read (before the node's
/// next occurrence, if any); graph outputs stay live to the end; an
/// occurrence whose in-place input dies there (Node::inPlaceInputs) needs
/// its inPlaceBytes only once during its step. So the sequence alone fixes
/// the memory profile.
struct RematPlan {
  std::vector<int> sequence;
  /// Peak bytes of the sequence (including fixedBytes), as simulated.
  int64_t peakBytes = 0;
  /// Time of the sequence (sum of node seconds, recomputations included).
  double seconds = 0;
  /// For the MILP: whether optimality was proven and the relative gap.
  bool provedOptimal = false;
  double optimalityGap = 0;
  /// Human-readable note ("MILP: 412 nodes exceed the 300-node limit").
  std::string note;
  /// Non-empty when the strategy made no plan of its own and returned its
  /// fallback (the MILP over its size limit, or out of time without a
  /// solution): why, in one line. Drivers asked for that strategy refuse.
  std::string declined;
  /// Filled by the strategies (Strategies.h): whether peakBytes is within
  /// the budget (always true when budgetBytes <= 0, i.e. unbounded), the
  /// planner's wall time, and which strategy (and variant) made the plan.
  bool fitsBudget = false;
  double solveSeconds = 0;
  /// For auto: the work its search spent (AutoOptions::workLimit's units).
  int64_t searchWork = 0;
  /// The step-time bound at the problem's budget, where the strategy
  /// computed one (auto, milp; StepTimeBound.h); unset otherwise.
  std::optional<StepTimeBound> bound;
  std::string strategy;
};

/// Simulates `sequence` (free after last use within the sequence; graph
/// outputs stay live) and fills peakBytes and seconds. Returns false with a
/// message when the sequence is invalid (a node runs before one of its
/// inputs is live, a graph output is never computed).
bool simulate(const RematProblem &problem, RematPlan &plan, std::string &error);

/// The position in `sequence` of the last occurrence of a node among
/// `readers` (0 when none occurs): where a batch input's bytes
/// (PartTimeBytes::readers) are freed, in simulate() and in the MILP's warm
/// start alike.
int lastReadPosition(const std::vector<int> &sequence,
                     const std::vector<int> &readers);

} // namespace remat::plan

#endif // REMAT_PLANNING_REMATPROBLEM_H
