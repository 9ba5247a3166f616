//===- CudaKernels.h - The runtime kernel API on CUDA -----------*- C++ -*-===//
//
// The CUDA backend of the kernel API: KernelApi.inc's declarations, the
// same functions with the same parameters and semantics, in namespace
// remat::rt::cuda, so generated code switches backends by changing one
// namespace alias. Views hold device pointers. Differences from the CPU,
// all so that a captured CUDA Graph stays valid across steps:
//  - dropout reads its step from a device pointer (DropoutStep);
//  - sgdUpdate / adamUpdate read the step number from a device pointer
//    (OptimizerStep), and have an overload taking it on the host;
//  - conditions the CPU kernels detect from data (an index or label out of
//    range, an integer division by zero) cannot throw from the GPU: the
//    kernel records the first one in a device status word and
//    checkDeviceErrors() (called after each step) throws it.
//
// Every kernel enqueues its work on the stream given to initialize() and
// returns without waiting; none allocates device memory or synchronizes.
// Scratch space (im2col columns, partial sums) comes from the workspace; a
// kernel whose scratch does not fit throws RuntimeError naming the bytes it
// needs. (softmaxCrossEntropyLoss without a logProb output computes only
// each target's log-probability: no scores-sized scratch; Sum/Mean take 16
// bytes per target.) Argument checks on shapes and dtypes throw RuntimeError on the host,
// as on the CPU.
//
// Numerics follow the CPU kernels (statistics accumulate in double, the
// same formulas, no fused multiply-add contraction), so data movement,
// dropout, casts and the optimizers give bitwise the CPU's results; GEMMs
// (cuBLAS, full FP32 without TF32), transcendental functions and reduction
// orders differ in the last bits. No kernel adds floats with atomics: the
// backward ops whose inputs collect several terms (gatherBackward through a
// stable sort by row, maxPoolBackward, averagePoolBackward, padBackward,
// gatherElementsBackward, col2im) gather them per dx element, row or line in
// a fixed order, so two runs give the same bits.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CUDA_CUDAKERNELS_H
#define REMAT_RUNTIME_CUDA_CUDAKERNELS_H

#include "remat/runtime/Kernels.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace remat::rt::cuda {

//===----------------------------------------------------------------------===//
// Context: one stream and one workspace per process.
//===----------------------------------------------------------------------===//

/// The smallest workspace initialize() accepts (the status word and a
/// little cuBLAS and scratch space).
constexpr size_t kMinWorkspaceBytes = 4096;

/// Binds the kernels to `stream` and `workspace` (device memory, 256-byte
/// aligned, at least kMinWorkspaceBytes). The workspace is split into a
/// status word (256 bytes), the cuBLAS workspace (a quarter of the rest, at
/// most 32 MiB; set with cublasSetWorkspace so GEMMs can be graph-captured)
/// and kernel scratch (the remainder). Creates the cuBLAS handle. Calling it
/// again rebinds (after an implicit shutdown()).
void initialize(cudaStream_t stream, void *workspace, size_t workspaceBytes);

/// The stream kernels run on. Throws if initialize() was not called.
cudaStream_t stream();

/// Destroys the cuBLAS handle and forgets the stream and workspace (the
/// caller still owns and frees them). Safe to call when not initialized.
void shutdown();

/// Bytes of the workspace available to kernels as scratch.
size_t scratchBytes();

/// Per-kernel timing (OpProfile.cu), active when the environment sets
/// REMAT_CUDA_PROFILE (profiling()): profileStepDone() closes a step
/// (synchronizes), and profileReport() writes the per-kernel table to
/// stderr. No-ops otherwise.
bool profiling();
void profileStepDone(cudaStream_t stream);
void profileReport();

/// Waits for the stream, then throws RuntimeError if a kernel recorded a
/// data error (index or label out of range, integer division by zero,
/// optimizer step < 1) since the last check, and clears it. Synchronizes:
/// call it outside graph capture, e.g. after each step.
void checkDeviceErrors();

//===----------------------------------------------------------------------===//
// The kernels. Optimizers read the 1-based step number (a 0-d I64 tensor) on
// the device, which keeps a captured graph valid across steps: Adam's bias
// corrections are then computed on the GPU (pow may differ from the host's
// in the last bit), and SGD reads momentumBuf only when the step is > 1 and
// momentumBuf is given.
//===----------------------------------------------------------------------===//

using DropoutStep = const uint64_t *;
using OptimizerStep = const int64_t *;

#include "remat/runtime/KernelApi.inc"

/// The optimizers with the step number on the host, as on the CPU (fine
/// eagerly, or where the step does not matter).
void sgdUpdate(const TensorView &param, const TensorView &grad,
               const TensorView &momentumBuf, const TensorView &newParam,
               const TensorView &newMomentumBuf, int64_t step,
               const SgdOptions &options, const TensorView &lossScale = {},
               const TensorView &foundInf = {});
void adamUpdate(const TensorView &param, const TensorView &grad,
                const TensorView &m, const TensorView &v,
                const TensorView &newParam, const TensorView &newM,
                const TensorView &newV, int64_t step,
                const AdamOptions &options, const TensorView &lossScale = {},
                const TensorView &foundInf = {});

} // namespace remat::rt::cuda

#endif // REMAT_RUNTIME_CUDA_CUDAKERNELS_H
