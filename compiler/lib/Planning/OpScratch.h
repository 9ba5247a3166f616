//===- OpScratch.h - Workspace scratch of a step's ops -----------*- C++ -*-===//
//
// The plan's workspace must hold the scratch of whichever op needs most
// (im2col columns, double accumulators, index lists): the CPU kernels take
// it from the workspace and fail rather than allocate. The figures come from
// the runtime's own *ScratchBytes functions (remat/runtime/KernelScratch.h),
// called through the op's kernel binding (remat/Target/KernelBindings.h)
// with the arguments its kernel will get, so planner and kernel cannot
// disagree.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_PLANNING_OPSCRATCH_H
#define REMAT_PLANNING_OPSCRATCH_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"

#include <cstdint>

namespace remat {

/// Bytes of workspace scratch the kernel of `op` needs (0 for most ops).
int64_t opScratchBytes(mlir::Operation *op);

/// The largest opScratchBytes over the ops of `func`.
int64_t maxOpScratchBytes(mlir::func::FuncOp func);

} // namespace remat

#endif // REMAT_PLANNING_OPSCRATCH_H
