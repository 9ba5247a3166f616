//===- KernelScratch.h - Scratch bytes each CPU kernel needs -----*- C++ -*-===//
//
// One function per kernel that needs scratch, taking the kernel's own
// arguments (views may have null data: only dtypes and shapes are read).
// The kernel reserves exactly this many bytes of the workspace
// (Workspace.h), and the planner sizes the plan's workspace as the largest
// figure over the step's ops (compiler/lib/Planning/OpScratch.cpp), so the
// two cannot disagree. Kernels not listed need none.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_KERNELSCRATCH_H
#define REMAT_RUNTIME_KERNELSCRATCH_H

#include "remat/runtime/Kernels.h"
#include "remat/runtime/Workspace.h"

#include <cstddef>
#include <cstdint>

namespace remat::rt {

/// Bytes of one scratch buffer of `count` T: rounded up to the alignment so
/// that the next buffer is aligned too.
template <typename T> constexpr size_t scratchPiece(int64_t count) {
  const size_t bytes = static_cast<size_t>(count > 0 ? count : 0) * sizeof(T);
  return (bytes + kScratchAlignment - 1) / kScratchAlignment *
         kScratchAlignment;
}

/// A double accumulator for a scatter into `dx` (none when dx is F64: the
/// kernel accumulates in place).
size_t accumulatorScratchBytes(const TensorView &dx);

size_t convScratchBytes(const TensorView &x, const TensorView &w,
                        const TensorView &y, const WindowParams &params,
                        int64_t group);
size_t convBackwardDataScratchBytes(const TensorView &dy, const TensorView &w,
                                    const TensorView &dx,
                                    const WindowParams &params, int64_t group);
size_t convBackwardFilterScratchBytes(const TensorView &x,
                                      const TensorView &dy,
                                      const TensorView &dw,
                                      const WindowParams &params,
                                      int64_t group);
/// maxPoolBackward and averagePoolBackward.
size_t poolBackwardScratchBytes(const TensorView &dx);

size_t reduceScratchBytes(const TensorView &x, const TensorView &out,
                          const Dims &axes);

size_t layerNormScratchBytes(const TensorView &x, const TensorView &scale,
                             const TensorView &bias, int64_t axis);
size_t layerNormBackwardScratchBytes(const TensorView &x,
                                     const TensorView &scale, int64_t axis);
size_t batchNormInferenceScratchBytes(const TensorView &x);
size_t batchNormTrainingScratchBytes(const TensorView &x);
size_t batchNormTrainingBackwardScratchBytes(const TensorView &x);

size_t gatherScratchBytes(const TensorView &indices);
size_t gatherBackwardScratchBytes(const TensorView &indices,
                                  const TensorView &dx);

/// softmaxCrossEntropyLossBackward and nllLossBackward (labels: [N, d...]).
size_t lossBackwardScratchBytes(const TensorView &labels);

} // namespace remat::rt

#endif // REMAT_RUNTIME_KERNELSCRATCH_H
