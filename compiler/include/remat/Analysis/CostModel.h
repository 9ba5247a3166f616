//===- CostModel.h - Estimated time of ops on a target ----------*- C++ -*-===//
//
// time = max(FLOPs / peak FLOP/s for the op's dtype, bytes / bandwidth)
//        + launch overhead,
// for a target whose figures are in one table (CostModel.cpp). FLOPs come
// from the ops (CostOpInterface); bytes are what the op reads and writes.
// Measured times (--cost-table FILE) replace the estimates op by op.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_COSTMODEL_H
#define REMAT_ANALYSIS_COSTMODEL_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace remat {

/// Peak figures of one device, per second.
struct TargetSpec {
  llvm::StringRef name;
  double fp64Flops;
  double fp32Flops;
  double bf16Flops; // also fp16
  double bytesPerSecond;
  double launchSeconds;
};

/// The known targets: h100, h200, a100, cpu.
llvm::ArrayRef<TargetSpec> knownTargets();
const TargetSpec *lookupTarget(llvm::StringRef name);

struct OpCost {
  double flops = 0;
  double bytes = 0;
  double seconds = 0;
};

class CostModel {
public:
  explicit CostModel(const TargetSpec &target) : target(target) {}

  /// Loads measured per-op times: a JSON object {"ops": {KEY: seconds}},
  /// where KEY is costKey(op). Returns false with a message on a malformed
  /// file.
  bool loadCostTable(llvm::StringRef path, std::string &error);

  OpCost estimate(mlir::Operation *op) const;
  const TargetSpec &getTarget() const { return target; }

  /// "remat.matmul(2x64x128xf32,128x384xf32)": op name and operand types,
  /// which determine its cost.
  static std::string costKey(mlir::Operation *op);

private:
  const TargetSpec &target;
  llvm::StringMap<double> measured;
};

} // namespace remat

#endif // REMAT_ANALYSIS_COSTMODEL_H
