//===- StepGraph.h - A training step seen as a RematProblem -----*- C++ -*-===//
//
// Private to the planner: the correspondence between the ops of a
// @train_step and the nodes of the rematerialization problem built from it.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_PLANNING_STEPGRAPH_H
#define REMAT_PLANNING_STEPGRAPH_H

#include "remat/Analysis/CostModel.h"
#include "remat/Analysis/MemoryProfile.h"
#include "remat/Planning/RematProblem.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace remat {

struct StepGraph {
  plan::RematProblem problem;
  std::vector<mlir::Operation *> ops; // node index -> op
  llvm::DenseMap<mlir::Operation *, int> nodeOf;
  std::vector<double> flops;          // per node
  int64_t persistentBytes = 0;
  int64_t inputBytes = 0;
  /// Returned results of nodes that are not graph outputs (the loss): fixed
  /// bytes in the problem, arena buffers only from their op on.
  int64_t returnedBytes = 0;
};

/// Nodes are the body's ops in order, except constants (set up once, not
/// part of a step). Persistent state, the batch and the workspace are fixed
/// bytes. A node's output bytes are its results' arena bytes (results written
/// in place into persistent state count nothing), each result apart for ops
/// with several, which live as long as their own readers; a node that may
/// write its first result over an input's value lists that input
/// (InPlace.h). Forward
/// ops (those the loss depends on) are recomputable, except the optimizer
/// updates; regions come from scoped node names ("/h.3/attn/MatMul" is in
/// region "h.3").
StepGraph buildStepGraph(mlir::func::FuncOp func, const CostModel &costModel,
                         int64_t alignment, int64_t workspaceBytes);

/// Rewrites the body to follow `sequence`: ops run in sequence order, a node
/// listed again becomes a clone (marked `remat.recompute_of` with the
/// original's name) whose results the later readers use. Returns the number
/// of clones made.
int materializePlan(mlir::func::FuncOp func, const StepGraph &graph,
                    const std::vector<int> &sequence);

/// A readable name for an op: its ONNX node name when known.
std::string opDisplayName(mlir::Operation *op);

} // namespace remat

#endif // REMAT_PLANNING_STEPGRAPH_H
