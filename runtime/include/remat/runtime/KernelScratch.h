//===- KernelScratch.h - Scratch bytes each CPU kernel needs -----*- C++ -*-===//
//
// One function per kernel that needs scratch, taking the kernel's own
// arguments (views may have null data: only dtypes and shapes are read).
// The kernel reserves exactly this many bytes of the workspace
// (Workspace.h), and the planner sizes the plan's workspace as the largest
// figure over the step's ops (through the kernel bindings, with the
// wrappers below), so the two cannot disagree. Kernels not listed need none.
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

/// matmul: none for F32 and F64; for F16 and BF16 the fp32 panels its
/// operands are converted into, bounded whatever their sizes
/// (cpu/HalfGemm.h). Takes the kernel's own arguments.
size_t matmulScratchBytes(const TensorView &a, const TensorView &b,
                          const TensorView &out, bool transA, bool transB);

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

size_t gatherElementsBackwardScratchBytes(const TensorView &dx);

/// softmaxCrossEntropyLossBackward and nllLossBackward (labels: [N, d...]).
size_t lossBackwardScratchBytes(const TensorView &labels);

/// attention and attentionBackward: tiles of a few query rows and keys, and
/// for the backward one key/value head's gradient accumulators, so
/// O(block x sequence), never O(Sq x Sk). Defined with the kernels
/// (cpu/Attention.cpp), whose tile sizes they depend on.
size_t attentionScratchBytes(const TensorView &q, const TensorView &k,
                             const TensorView &v);
size_t attentionBackwardScratchBytes(const TensorView &q, const TensorView &k,
                                     const TensorView &v);

//===----------------------------------------------------------------------===//
// The same figures with each kernel's own parameter list, named after the
// kernel: what the compiler's kernel bindings call with the op's arguments
// (REMAT_KERNEL_WITH_SCRATCH in compiler/include/remat/Target/
// KernelBindings.h), so the planner sizes the workspace from the very call
// the kernel will get. Each forwards to the function the kernel itself uses.
//===----------------------------------------------------------------------===//

inline size_t convScratchBytes(const TensorView &x, const TensorView &w,
                               const TensorView &, const TensorView &y,
                               const WindowParams &params, int64_t group) {
  return convScratchBytes(x, w, y, params, group);
}
inline size_t maxPoolBackwardScratchBytes(const TensorView &,
                                          const TensorView &,
                                          const TensorView &dx,
                                          const WindowParams &) {
  return poolBackwardScratchBytes(dx);
}
inline size_t averagePoolBackwardScratchBytes(const TensorView &,
                                              const TensorView &dx,
                                              const WindowParams &, bool) {
  return poolBackwardScratchBytes(dx);
}
inline size_t reduceScratchBytes(ReduceOp, const TensorView &x,
                                 const TensorView &out, const Dims &axes) {
  return reduceScratchBytes(x, out, axes);
}
inline size_t layerNormScratchBytes(const TensorView &x,
                                    const TensorView &scale,
                                    const TensorView &bias, const TensorView &,
                                    const TensorView &, const TensorView &,
                                    int64_t axis, double) {
  return layerNormScratchBytes(x, scale, bias, axis);
}
inline size_t layerNormBackwardScratchBytes(
    const TensorView &x, const TensorView &scale, const TensorView &,
    const TensorView &, const TensorView &, const TensorView &,
    const TensorView &, const TensorView &, int64_t axis) {
  return layerNormBackwardScratchBytes(x, scale, axis);
}
inline size_t batchNormInferenceScratchBytes(
    const TensorView &x, const TensorView &, const TensorView &,
    const TensorView &, const TensorView &, const TensorView &, double) {
  return batchNormInferenceScratchBytes(x);
}
inline size_t batchNormTrainingScratchBytes(
    const TensorView &x, const TensorView &, const TensorView &,
    const TensorView &, const TensorView &, const TensorView &,
    const TensorView &, const TensorView &, const TensorView &,
    const TensorView &, double, double, bool) {
  return batchNormTrainingScratchBytes(x);
}
inline size_t batchNormTrainingBackwardScratchBytes(
    const TensorView &x, const TensorView &, const TensorView &,
    const TensorView &, const TensorView &, const TensorView &,
    const TensorView &, const TensorView &) {
  return batchNormTrainingBackwardScratchBytes(x);
}
inline size_t gatherScratchBytes(const TensorView &, const TensorView &indices,
                                 const TensorView &, int64_t) {
  return gatherScratchBytes(indices);
}
inline size_t gatherBackwardScratchBytes(const TensorView &,
                                         const TensorView &indices,
                                         const TensorView &dx, int64_t) {
  return gatherBackwardScratchBytes(indices, dx);
}
inline size_t gatherElementsBackwardScratchBytes(const TensorView &,
                                                 const TensorView &,
                                                 const TensorView &dx,
                                                 int64_t) {
  return gatherElementsBackwardScratchBytes(dx);
}
inline size_t softmaxCrossEntropyLossBackwardScratchBytes(
    const TensorView &, const TensorView &, const TensorView &labels,
    const TensorView &, const TensorView &, LossReduction, int64_t, bool) {
  return lossBackwardScratchBytes(labels);
}
inline size_t nllLossBackwardScratchBytes(const TensorView &,
                                          const TensorView &target,
                                          const TensorView &,
                                          const TensorView &, LossReduction,
                                          int64_t, bool) {
  return lossBackwardScratchBytes(target);
}
inline size_t attentionScratchBytes(const TensorView &q, const TensorView &k,
                                    const TensorView &v, const TensorView &,
                                    const TensorView &, const TensorView &,
                                    double, bool, double, uint64_t, uint64_t,
                                    DropoutStep) {
  return attentionScratchBytes(q, k, v);
}
inline size_t attentionBackwardScratchBytes(
    const TensorView &q, const TensorView &k, const TensorView &v,
    const TensorView &, const TensorView &, const TensorView &,
    const TensorView &, const TensorView &, const TensorView &,
    const TensorView &, double, bool, double, uint64_t, uint64_t,
    DropoutStep) {
  return attentionBackwardScratchBytes(q, k, v);
}

//===----------------------------------------------------------------------===//
// N-dimensional indexing (defined with the kernels, cpu/ScatterGather.cpp)
//===----------------------------------------------------------------------===//

/// gatherNDBackward: a float accumulator for 16-bit dx (f32 and f64
/// accumulate in dx itself).
size_t gatherNDBackwardScratchBytes(const TensorView &dx);
inline size_t gatherNDBackwardScratchBytes(const TensorView &,
                                           const TensorView &,
                                           const TensorView &dx, int64_t) {
  return gatherNDBackwardScratchBytes(dx);
}

} // namespace remat::rt

#endif // REMAT_RUNTIME_KERNELSCRATCH_H
