//===- CudaKernels.h - The runtime kernel API on CUDA -----------*- C++ -*-===//
//
// The CUDA backend of Kernels.h and GradKernels.h: the same functions with the
// same parameters and semantics, in namespace remat::rt::cuda, so generated
// code switches backends by changing one namespace alias. Views hold device
// pointers. Differences from the CPU API, all so that a captured CUDA Graph
// stays valid across steps:
//  - dropout reads its step from a device pointer;
//  - sgdUpdate / adamUpdate have an overload reading the step number from a
//    device pointer (the form generated code uses);
//  - conditions the CPU kernels detect from data (an index or label out of
//    range, an integer division by zero) cannot throw from the GPU: the
//    kernel records the first one in a device status word and
//    checkDeviceErrors() (called after each step) throws it.
//
// Every kernel enqueues its work on the stream given to initialize() and
// returns without waiting; none allocates device memory or synchronizes.
// Scratch space (im2col columns, partial sums) comes from the workspace; a
// kernel whose scratch does not fit throws RuntimeError naming the bytes it
// needs. Argument checks on shapes and dtypes throw RuntimeError on the host,
// as on the CPU.
//
// Numerics follow the CPU kernels (statistics accumulate in double, the
// same formulas, no fused multiply-add contraction), so data movement,
// dropout, casts and the optimizers give bitwise the CPU's results; GEMMs
// (cuBLAS, full FP32 without TF32), transcendental functions and reduction
// orders differ in the last bits. Scatter-adds with repeated targets
// (gatherBackward, maxPoolBackward with overlapping windows) use atomics, so
// their summation order is not deterministic.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CUDA_CUDAKERNELS_H
#define REMAT_RUNTIME_CUDA_CUDAKERNELS_H

#include "remat/runtime/GradKernels.h"
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

/// Waits for the stream, then throws RuntimeError if a kernel recorded a
/// data error (index or label out of range, integer division by zero,
/// optimizer step < 1) since the last check, and clears it. Synchronizes:
/// call it outside graph capture, e.g. after each step.
void checkDeviceErrors();

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

void unary(UnaryOp op, const TensorView &x, const TensorView &y);
void binary(BinaryOp op, const TensorView &a, const TensorView &b,
            const TensorView &out);
void where(const TensorView &cond, const TensorView &x, const TensorView &y,
           const TensorView &out);
void cast(const TensorView &x, const TensorView &y);
void copy(const TensorView &x, const TensorView &y);
void fill(const TensorView &y, double value);

//===----------------------------------------------------------------------===//
// Linear algebra (cuBLAS)
//===----------------------------------------------------------------------===//

void matmul(const TensorView &a, const TensorView &b, const TensorView &out,
            bool transA, bool transB);

//===----------------------------------------------------------------------===//
// Normalisation and softmax
//===----------------------------------------------------------------------===//

void softmax(const TensorView &x, const TensorView &y, int64_t axis);
void logSoftmax(const TensorView &x, const TensorView &y, int64_t axis);
void layerNorm(const TensorView &x, const TensorView &scale,
               const TensorView &bias, const TensorView &y,
               const TensorView &mean, const TensorView &invStdDev,
               int64_t axis, double epsilon);
void batchNormInference(const TensorView &x, const TensorView &scale,
                        const TensorView &bias, const TensorView &mean,
                        const TensorView &var, const TensorView &y,
                        double epsilon);
void batchNormTraining(const TensorView &x, const TensorView &scale,
                       const TensorView &bias, const TensorView &runningMean,
                       const TensorView &runningVar, const TensorView &y,
                       const TensorView &runningMeanOut,
                       const TensorView &runningVarOut,
                       const TensorView &savedMean,
                       const TensorView &savedInvStd, double epsilon,
                       double momentum, bool unbiasedRunningVar);

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

void reduce(ReduceOp op, const TensorView &x, const TensorView &out,
            const Dims &axes);

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

void conv(const TensorView &x, const TensorView &w, const TensorView &bias,
          const TensorView &y, const WindowParams &params, int64_t group);
void maxPool(const TensorView &x, const TensorView &y,
             const TensorView &indices, const WindowParams &params);
void averagePool(const TensorView &x, const TensorView &y,
                 const WindowParams &params, bool countIncludePad);
void globalAveragePool(const TensorView &x, const TensorView &y);

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

void transpose(const TensorView &x, const TensorView &y,
               const Dims &perm);
void concat(TensorViewList inputs, const TensorView &y,
            int64_t axis);
void split(const TensorView &x, TensorViewList outputs,
           int64_t axis);
void slice(const TensorView &x, const TensorView &y,
           const Dims &starts,
           const Dims &steps);
void gather(const TensorView &x, const TensorView &indices, const TensorView &y,
            int64_t axis);
void expand(const TensorView &x, const TensorView &y);

//===----------------------------------------------------------------------===//
// Stochastic
//===----------------------------------------------------------------------===//

/// As rt::dropout, with the step read from device memory when the kernel
/// runs (`step` must stay valid until then).
void dropout(const TensorView &x, const TensorView &y, const TensorView &mask,
             double ratio, uint64_t seed, uint64_t streamId,
             const uint64_t *step);

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// Without a logProb output, only each target's log-probability is computed
/// (no scores-sized scratch; Sum/Mean take 16 bytes per target of scratch).
void softmaxCrossEntropyLoss(const TensorView &scores, const TensorView &labels,
                             const TensorView &weights, const TensorView &loss,
                             const TensorView &logProb, LossReduction reduction,
                             int64_t ignoreIndex, bool hasIgnoreIndex);
void nllLoss(const TensorView &input, const TensorView &target,
             const TensorView &weights, const TensorView &loss,
             LossReduction reduction, int64_t ignoreIndex, bool hasIgnoreIndex);

//===----------------------------------------------------------------------===//
// Activation and normalisation backward
//===----------------------------------------------------------------------===//

void geluBackward(const TensorView &x, const TensorView &dy,
                  const TensorView &dx, bool tanhApproximation);
void softmaxBackward(const TensorView &y, const TensorView &dy,
                     const TensorView &dx, int64_t axis);
void logSoftmaxBackward(const TensorView &y, const TensorView &dy,
                        const TensorView &dx, int64_t axis);
void layerNormBackward(const TensorView &x, const TensorView &scale,
                       const TensorView &mean, const TensorView &invStdDev,
                       const TensorView &dy, const TensorView &dx,
                       const TensorView &dscale, const TensorView &dbias,
                       int64_t axis);
void batchNormTrainingBackward(const TensorView &x, const TensorView &scale,
                               const TensorView &savedMean,
                               const TensorView &savedInvStd,
                               const TensorView &dy, const TensorView &dx,
                               const TensorView &dscale,
                               const TensorView &dbias);

//===----------------------------------------------------------------------===//
// Convolution and pooling backward
//===----------------------------------------------------------------------===//

void convBackwardData(const TensorView &dy, const TensorView &w,
                      const TensorView &dx, const WindowParams &params,
                      int64_t group);
void convBackwardFilter(const TensorView &x, const TensorView &dy,
                        const TensorView &dw, const WindowParams &params,
                        int64_t group);
void maxPoolBackward(const TensorView &dy, const TensorView &indices,
                     const TensorView &dx);
void averagePoolBackward(const TensorView &dy, const TensorView &dx,
                         const WindowParams &params, bool countIncludePad);

//===----------------------------------------------------------------------===//
// Data movement backward
//===----------------------------------------------------------------------===//

void gatherBackward(const TensorView &dy, const TensorView &indices,
                    const TensorView &dx, int64_t axis);
void sliceBackward(const TensorView &dy, const TensorView &dx,
                   const Dims &starts,
                   const Dims &steps);

//===----------------------------------------------------------------------===//
// Loss backward
//===----------------------------------------------------------------------===//

void softmaxCrossEntropyLossBackward(const TensorView &dloss,
                                     const TensorView &logProb,
                                     const TensorView &labels,
                                     const TensorView &weights,
                                     const TensorView &dscores,
                                     LossReduction reduction,
                                     int64_t ignoreIndex, bool hasIgnoreIndex);
void nllLossBackward(const TensorView &dloss, const TensorView &target,
                     const TensorView &weights, const TensorView &dinput,
                     LossReduction reduction, int64_t ignoreIndex,
                     bool hasIgnoreIndex);

//===----------------------------------------------------------------------===//
// Optimizers. The int64_t overloads take the step number on the host, as on
// the CPU (fine eagerly, or where the step does not matter); the pointer
// overloads read the 1-based step number (a 0-d I64 tensor) on the device,
// which keeps a captured graph valid across steps. With a device step,
// Adam's bias corrections are computed on the GPU (pow may differ from the
// host's in the last bit), and SGD reads momentumBuf only when the step is
// > 1 and momentumBuf is given.
//===----------------------------------------------------------------------===//

void sgdUpdate(const TensorView &param, const TensorView &grad,
               const TensorView &momentumBuf, const TensorView &newParam,
               const TensorView &newMomentumBuf, int64_t step,
               const SgdOptions &options);
void sgdUpdate(const TensorView &param, const TensorView &grad,
               const TensorView &momentumBuf, const TensorView &newParam,
               const TensorView &newMomentumBuf, const int64_t *step,
               const SgdOptions &options);
void adamUpdate(const TensorView &param, const TensorView &grad,
                const TensorView &m, const TensorView &v,
                const TensorView &newParam, const TensorView &newM,
                const TensorView &newV, int64_t step,
                const AdamOptions &options);
void adamUpdate(const TensorView &param, const TensorView &grad,
                const TensorView &m, const TensorView &v,
                const TensorView &newParam, const TensorView &newM,
                const TensorView &newV, const int64_t *step,
                const AdamOptions &options);

} // namespace remat::rt::cuda

#endif // REMAT_RUNTIME_CUDA_CUDAKERNELS_H
