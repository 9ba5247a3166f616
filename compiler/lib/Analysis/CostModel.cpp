//===- CostModel.cpp - Estimated time of ops on a target ------------------===//

#include "remat/Analysis/CostModel.h"
#include "remat/Dialect/RematOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;

namespace remat {

// Dense (no sparsity) peak throughput and memory bandwidth from the vendors'
// published specifications:
//  - H100 SXM5 80GB: NVIDIA H100 Tensor Core GPU datasheet (2023): FP64 34
//    TFLOP/s (67 with tensor cores), FP32 67 TFLOP/s, BF16/FP16 tensor core
//    989.4 TFLOP/s dense (1979 "with sparsity"), HBM3 3.35 TB/s.
//  - H200 SXM 141GB: NVIDIA H200 Tensor Core GPU datasheet (2024): same
//    compute as H100 SXM, HBM3e 4.8 TB/s.
//  - A100 SXM4 80GB: NVIDIA A100 Tensor Core GPU datasheet (2021): FP64 9.7
//    TFLOP/s (19.5 tensor core), FP32 19.5 TFLOP/s, BF16/FP16 tensor core
//    312 TFLOP/s dense, HBM2e 2.039 TB/s.
//  - Launch overhead on the GPUs: ~2 us per kernel when the step is replayed
//    as a CUDA Graph (NVIDIA developer blog "Getting Started with CUDA
//    Graphs", 2019: launch cost per kernel drops to the low microseconds).
//  - cpu: a 2-core AVX2/FMA machine at 3 GHz (the CI and development
//    machines): 2 cores x 2 FMA units x 8 fp32 lanes x 2 flops x 3e9 =
//    192 GFLOP/s fp32, half that in fp64, no native bf16 (computed as fp32);
//    ~20 GB/s DRAM bandwidth (dual-channel DDR4-2666 sustains ~20 GB/s in
//    STREAM); ~1 us per kernel call.
static const TargetSpec kTargets[] = {
    {"h100", 34e12, 67e12, 989.4e12, 3.35e12, 2e-6},
    {"h200", 34e12, 67e12, 989.4e12, 4.8e12, 2e-6},
    {"a100", 9.7e12, 19.5e12, 312e12, 2.039e12, 2e-6},
    {"cpu", 96e9, 192e9, 192e9, 20e9, 1e-6},
};

ArrayRef<TargetSpec> knownTargets() { return kTargets; }

const TargetSpec *lookupTarget(StringRef name) {
  for (const TargetSpec &t : kTargets)
    if (t.name == name)
      return &t;
  return nullptr;
}

static double tensorBytes(Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return 0;
  Type element = tensor.getElementType();
  double elementBytes =
      element.isInteger(1) ? 1.0 : std::max(1u, element.getIntOrFloatBitWidth() / 8);
  return static_cast<double>(tensor.getNumElements()) * elementBytes;
}

std::string CostModel::costKey(Operation *op) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << op->getName().getStringRef() << "(";
  llvm::interleave(op->getOperandTypes(), os,
                   [&](Type t) {
                     auto tensor = llvm::cast<RankedTensorType>(t);
                     for (int64_t d : tensor.getShape())
                       os << d << "x";
                     os << tensor.getElementType();
                   },
                   ",");
  os << ")";
  return key;
}

bool CostModel::loadCostTable(StringRef path, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error = path.str() + ": cannot read the cost table";
    return false;
  }
  llvm::Expected<llvm::json::Value> json = llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    error = path.str() + ": not JSON: " + llvm::toString(json.takeError());
    return false;
  }
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Object *ops = root ? root->getObject("ops") : nullptr;
  if (!ops) {
    error = path.str() + ": expected an object with an \"ops\" object";
    return false;
  }
  for (const auto &entry : *ops) {
    std::optional<double> seconds = entry.second.getAsNumber();
    if (!seconds || *seconds < 0) {
      error = path.str() + ": entry '" + entry.first.str() +
              "' must be a non-negative number of seconds";
      return false;
    }
    measured[entry.first.str()] = *seconds;
  }
  return true;
}

OpCost CostModel::estimate(Operation *op) const {
  OpCost cost;
  // Reshapes alias their input and constants are set up once: neither moves
  // data during a step.
  if (isa<ReshapeOp, ConstantOp>(op))
    return cost;
  for (Type t : op->getOperandTypes())
    cost.bytes += tensorBytes(t);
  for (Type t : op->getResultTypes())
    cost.bytes += tensorBytes(t);
  if (auto costed = dyn_cast<CostOpInterface>(op))
    cost.flops = costed.getFlops();

  if (!measured.empty()) {
    auto it = measured.find(costKey(op));
    if (it != measured.end()) {
      cost.seconds = it->second;
      return cost;
    }
  }
  double peak = target.fp32Flops;
  for (Type t : op->getResultTypes())
    if (auto tensor = llvm::dyn_cast<RankedTensorType>(t)) {
      Type element = tensor.getElementType();
      if (element.isF64())
        peak = target.fp64Flops;
      else if (element.isBF16() || element.isF16())
        peak = target.bf16Flops;
      break;
    }
  cost.seconds = std::max(cost.flops / peak, cost.bytes / target.bytesPerSecond) +
                 target.launchSeconds;
  return cost;
}

} // namespace remat
