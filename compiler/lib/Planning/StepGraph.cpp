//===- StepGraph.cpp - A training step seen as a RematProblem -------------===//

#include "StepGraph.h"

#include "remat/Dialect/InPlace.h"
#include "remat/Dialect/RematOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <functional>

using namespace mlir;

namespace remat {

std::string opDisplayName(Operation *op) {
  Location loc = op->getLoc();
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      loc = fused.getLocations().front();
  if (auto name = llvm::dyn_cast<NameLoc>(loc))
    return name.getName().str();
  return op->getName().getStringRef().str();
}

/// "h.3" from "/h.3/attn/MatMul": the first path component that ends in
/// ".<number>", the way PyTorch scopes repeated modules.
static std::string regionKey(Operation *op) {
  std::string name = opDisplayName(op);
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(name).split(parts, '/', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef part : parts) {
    auto [prefix, index] = part.rsplit('.');
    unsigned value;
    if (!prefix.empty() && !index.empty() && !index.getAsInteger(10, value))
      return part.str();
  }
  return "";
}

/// The value whose buffer `v` views: through any chain of reshapes.
static Value viewSource(Value v) {
  while (auto reshape = v.getDefiningOp<ReshapeOp>())
    v = reshape.getInput();
  return v;
}

StepGraph buildStepGraph(func::FuncOp func, const CostModel &costModel,
                         int64_t alignment, int64_t workspaceBytes) {
  StepGraph graph;
  StepRoles roles = classifyStep(func);
  Block &body = func.getBody().front();
  for (BlockArgument arg : func.getArguments()) {
    int64_t bytes = tensorBytes(arg.getType(), alignment);
    if (roles.persistent.contains(arg))
      graph.persistentBytes += bytes;
    else
      graph.inputBytes += bytes;
  }
  for (Operation &op : body) {
    if (isa<ConstantOp>(op)) {
      graph.persistentBytes += tensorBytes(op.getResult(0).getType(), alignment);
      continue;
    }
    // Reshapes are views: readers of a reshape read its producer's buffer.
    if (isa<func::ReturnOp, ReshapeOp>(op))
      continue;
    plan::Node node;
    node.name = opDisplayName(&op);
    node.opKind = op.getName().getStringRef().str();
    node.seconds = costModel.estimate(&op).seconds;
    for (Value r : op.getResults()) {
      int64_t bytes =
          roles.persistent.contains(r) ? 0 : tensorBytes(r.getType(), alignment);
      node.outputBytes += bytes;
      // Several results live apart (a batch norm's statistics outlive its
      // output); one result is the node's value.
      if (op.getNumResults() > 1)
        node.resultBytes.push_back(bytes);
    }
    for (Value operand : op.getOperands()) {
      Value source = viewSource(operand);
      auto it = graph.nodeOf.find(source.getDefiningOp());
      if (it == graph.nodeOf.end())
        continue;
      if (!llvm::is_contained(node.inputs, it->second))
        node.inputs.push_back(it->second);
      plan::ResultRef read{it->second,
                           static_cast<int>(cast<OpResult>(source).getResultNumber())};
      if (source.getDefiningOp()->getNumResults() > 1 &&
          !llvm::is_contained(node.reads, read))
        node.reads.push_back(read);
    }
    node.recomputable = roles.isForward(&op) && !roles.losses.empty() &&
                        !op.hasTrait<OptimizerUpdate>();
    graph.nodeOf[&op] = graph.problem.nodes.size();
    graph.ops.push_back(&op);
    graph.flops.push_back(isa<CostOpInterface>(op)
                              ? cast<CostOpInterface>(op).getFlops()
                              : 0.0);
    graph.problem.nodes.push_back(std::move(node));
  }
  // Regions: number the scoped prefixes in order of first appearance.
  llvm::StringMap<int> regions;
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    std::string key = regionKey(graph.ops[i]);
    if (key.empty())
      continue;
    auto [it, inserted] = regions.try_emplace(key, regions.size());
    graph.problem.nodes[i].region = it->second;
  }
  // Graph outputs. A node with results both returned (the loss) and read by
  // later ops (log_prob) is not an output: its returned results are counted
  // as fixed bytes (and as 0 among its results), so that the large results
  // can die after their last read (a graph output's latest instance lives to
  // the end of the step).
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  llvm::DenseSet<Value> returned;
  for (Value v : ret.getOperands())
    returned.insert(viewSource(v));
  int64_t &returnedBytes = graph.returnedBytes;
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    Operation *op = graph.ops[i];
    int64_t ownReturned = 0;
    bool anyReturned = false, othersRead = false;
    for (Value r : op->getResults()) {
      if (roles.persistent.contains(r))
        continue;
      if (returned.contains(r)) {
        anyReturned = true;
        ownReturned += tensorBytes(r.getType(), alignment);
      } else if (!r.use_empty()) {
        othersRead = true;
      }
    }
    if (!anyReturned)
      continue;
    if (othersRead) {
      plan::Node &node = graph.problem.nodes[i];
      node.outputBytes -= ownReturned;
      for (OpResult r : op->getResults())
        if (returned.contains(r) && !node.resultBytes.empty())
          node.resultBytes[r.getResultNumber()] = 0;
      returnedBytes += ownReturned;
    } else {
      graph.problem.graphOutputs.push_back(i);
    }
  }
  graph.problem.fixedBytes =
      graph.persistentBytes + graph.inputBytes + workspaceBytes + returnedBytes;
  // The arena holds an input from the step's start to its last reader, a
  // returned result from its op on.
  for (BlockArgument arg : func.getArguments()) {
    if (roles.persistent.contains(arg))
      continue;
    plan::PartTimeBytes part;
    part.bytes = tensorBytes(arg.getType(), alignment);
    bool returnedInput = false;
    std::function<void(Value)> readers = [&](Value v) {
      for (Operation *user : v.getUsers()) {
        if (auto reshape = dyn_cast<ReshapeOp>(user)) {
          readers(reshape.getResult());
        } else if (auto it = graph.nodeOf.find(user);
                   it != graph.nodeOf.end()) {
          part.lastReader = std::max(part.lastReader, it->second);
          if (!llvm::is_contained(part.readers, it->second))
            part.readers.push_back(it->second);
        } else if (isa<func::ReturnOp>(user)) {
          returnedInput = true;
        }
      }
    };
    readers(arg);
    if (returnedInput) {
      part.lastReader = static_cast<int>(graph.ops.size()) - 1;
      part.readers.clear();
    }
    graph.problem.partTimeFixedBytes.push_back(std::move(part));
  }
  if (returnedBytes > 0)
    graph.problem.partTimeFixedBytes.push_back({returnedBytes, -1, {}});
  // In-place sharing, as the memory profile decides it (InPlace.h): a
  // result (an elementwise op's first, a row-wise op's of its first
  // operand's type; at most one per op) over an operand produced by another
  // node, neither persistent nor returned (those do not die at the op).
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    Operation *op = graph.ops[i];
    plan::Node &node = graph.problem.nodes[i];
    for (OpResult result : op->getResults()) {
      if (roles.persistent.contains(result) || returned.contains(result))
        continue;
      for (OpOperand &operand : op->getOpOperands()) {
        if (!mayWriteInPlace(op, result, operand))
          continue;
        Value source = viewSource(operand.get());
        if (roles.persistent.contains(source) || returned.contains(source))
          continue;
        auto it = graph.nodeOf.find(source.getDefiningOp());
        if (it == graph.nodeOf.end())
          continue; // an argument or a constant: not a node's value
        plan::ResultRef input{
            it->second,
            static_cast<int>(cast<OpResult>(source).getResultNumber())};
        if (!llvm::is_contained(node.inPlaceInputs, input))
          node.inPlaceInputs.push_back(input);
      }
      if (!node.inPlaceInputs.empty()) {
        node.inPlaceBytes = tensorBytes(result.getType(), alignment);
        break;
      }
    }
  }
  return graph;
}

int materializePlan(func::FuncOp func, const StepGraph &graph,
                    const std::vector<int> &sequence) {
  Block &body = func.getBody().front();
  Operation *terminator = body.getTerminator();
  OpBuilder builder(terminator);
  // The instance of each node that later readers see.
  llvm::DenseMap<Operation *, Operation *> current;
  // Reshapes already placed, by the source value they view.
  llvm::DenseMap<std::pair<Operation *, Value>, Value> views;
  llvm::DenseSet<Operation *> placedReshapes;
  std::vector<bool> seen(graph.ops.size(), false);
  int clones = 0;

  // The value a reader placed now should use for `v`: the latest instance of
  // its producer, seen through the same reshapes (placed, or re-created when
  // the producer was recomputed).
  std::function<Value(Value)> currentValue = [&](Value v) -> Value {
    if (auto reshape = v.getDefiningOp<ReshapeOp>()) {
      Value source = currentValue(reshape.getInput());
      auto key = std::make_pair(reshape.getOperation(), source);
      if (Value existing = views.lookup(key))
        return existing;
      Value view;
      if (!placedReshapes.contains(reshape)) {
        placedReshapes.insert(reshape);
        reshape->moveBefore(terminator);
        reshape.getInputMutable().assign(source);
        view = reshape.getResult();
      } else {
        view = builder.create<ReshapeOp>(reshape.getLoc(), reshape.getType(), source);
      }
      views[key] = view;
      return view;
    }
    if (Operation *def = v.getDefiningOp()) {
      auto it = current.find(def);
      if (it != current.end())
        return it->second->getResult(llvm::cast<OpResult>(v).getResultNumber());
    }
    return v;
  };
  auto remapOperands = [&](Operation *op) {
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = currentValue(operand.get());
      if (value != operand.get())
        operand.set(value);
    }
  };
  for (int node : sequence) {
    Operation *original = graph.ops[node];
    Operation *instance = original;
    if (!seen[node]) {
      seen[node] = true;
      // Operands first, so that views they need are placed before the op.
      remapOperands(original);
      original->moveBefore(terminator);
    } else {
      instance = builder.clone(*original);
      instance->setAttr("remat.recompute_of",
                        builder.getStringAttr(opDisplayName(original)));
      remapOperands(instance);
      // Views the clone needs were placed by remapOperands after it.
      instance->moveBefore(terminator);
      ++clones;
    }
    current[original] = instance;
  }
  remapOperands(terminator);
  // Ops the plan never runs had no readers; drop them (reshapes included).
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (&op != terminator && op.use_empty() && !isa<ConstantOp>(op) &&
        (isa<ReshapeOp>(op) ? !placedReshapes.contains(&op)
                            : !graph.nodeOf.count(&op) || !seen[graph.nodeOf.lookup(&op)]))
      op.erase();
  return clones;
}

} // namespace remat
