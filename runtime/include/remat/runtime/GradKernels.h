//===- GradKernels.h - Backward and optimizer kernels -----------*- C++ -*-===//
//
// Kernels that training steps need beyond the forward ones: the backward of
// ops whose gradient is not a short composition of forward kernels, and the
// fused optimizer updates. Same conventions as Kernels.h: outputs are
// preallocated, optional views are empty, gradients are written (not
// accumulated) unless a comment says otherwise.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_GRADKERNELS_H
#define REMAT_RUNTIME_GRADKERNELS_H

#include "remat/runtime/Kernels.h"

namespace remat::rt {

//===----------------------------------------------------------------------===//
// Activation and normalisation backward
//===----------------------------------------------------------------------===//

/// GELU backward from the forward input x: dx = dy * gelu'(x).
void geluBackward(const TensorView &x, const TensorView &dy,
                  const TensorView &dx, bool tanhApproximation);

/// Softmax backward from its output y: dx = y * (dy - sum(dy * y, axis)).
void softmaxBackward(const TensorView &y, const TensorView &dy,
                     const TensorView &dx, int64_t axis);

/// LogSoftmax backward from its output y: dx = dy - exp(y) * sum(dy, axis).
void logSoftmaxBackward(const TensorView &y, const TensorView &dy,
                        const TensorView &dx, int64_t axis);

/// LayerNorm backward over dims [axis, rank), from the forward input and the
/// saved mean / inverse std (as layerNorm writes them). dscale and dbias
/// (optional) have shape x.shape[axis:] (the IR reduces further if the
/// forward scale was broadcast).
void layerNormBackward(const TensorView &x, const TensorView &scale,
                       const TensorView &mean, const TensorView &invStdDev,
                       const TensorView &dy, const TensorView &dx,
                       const TensorView &dscale, const TensorView &dbias,
                       int64_t axis);

/// BatchNorm (training mode) backward through the batch statistics, from the
/// saved batch mean and inverse std. dx, dscale [C], dbias [C] (each
/// optional).
void batchNormTrainingBackward(const TensorView &x, const TensorView &scale,
                               const TensorView &savedMean,
                               const TensorView &savedInvStd,
                               const TensorView &dy, const TensorView &dx,
                               const TensorView &dscale,
                               const TensorView &dbias);

//===----------------------------------------------------------------------===//
// Convolution and pooling backward (same WindowParams as the forward)
//===----------------------------------------------------------------------===//

/// dx [N, C, ...] from dy [N, M, ...] and w [M, C/group, k...].
void convBackwardData(const TensorView &dy, const TensorView &w,
                      const TensorView &dx, const WindowParams &params,
                      int64_t group);

/// dw [M, C/group, k...] from x and dy.
void convBackwardFilter(const TensorView &x, const TensorView &dy,
                        const TensorView &dw, const WindowParams &params,
                        int64_t group);

/// MaxPool backward: dx = 0, then dx[indices[i]] += dy[i] (indices as
/// maxPool writes them: flat offsets into x).
void maxPoolBackward(const TensorView &dy, const TensorView &indices,
                     const TensorView &dx);

/// AveragePool backward: spreads each dy over its window with the forward's
/// divisor.
void averagePoolBackward(const TensorView &dy, const TensorView &dx,
                         const WindowParams &params, bool countIncludePad);

//===----------------------------------------------------------------------===//
// Data movement backward
//===----------------------------------------------------------------------===//

/// Gather backward: dx = 0, then scatter-add dy into dx along `axis` at
/// `indices` (negative indices wrap). Repeated indices accumulate.
void gatherBackward(const TensorView &dy, const TensorView &indices,
                    const TensorView &dx, int64_t axis);

/// Slice backward: dx = 0, then the sliced positions (starts/steps as in
/// slice) receive dy.
void sliceBackward(const TensorView &dy, const TensorView &dx,
                   const Dims &starts,
                   const Dims &steps);

//===----------------------------------------------------------------------===//
// Loss backward
//===----------------------------------------------------------------------===//

/// SoftmaxCrossEntropyLoss backward from the forward's logProb:
/// dscores = (softmax - onehot(label)) * weight[label] * dloss-factor, with
/// ignored targets contributing 0; the factor follows the reduction (mean
/// divides by the same denominator as the forward). dloss is [] or [N, d...]
/// for reduction None.
void softmaxCrossEntropyLossBackward(const TensorView &dloss,
                                     const TensorView &logProb,
                                     const TensorView &labels,
                                     const TensorView &weights,
                                     const TensorView &dscores,
                                     LossReduction reduction,
                                     int64_t ignoreIndex, bool hasIgnoreIndex);

/// NegativeLogLikelihoodLoss backward: dinput is zero except
/// dinput[n, label] = -weight[label] * dloss-factor.
void nllLossBackward(const TensorView &dloss, const TensorView &target,
                     const TensorView &weights, const TensorView &dinput,
                     LossReduction reduction, int64_t ignoreIndex,
                     bool hasIgnoreIndex);

//===----------------------------------------------------------------------===//
// Optimizers (PyTorch's torch.optim formulas exactly). `step` is the 1-based
// step number being taken. All tensors F32 or F64, same shape; in-place use
// (output view == input view) is allowed.
//===----------------------------------------------------------------------===//

struct SgdOptions {
  double lr = 0.01, momentum = 0.0, dampening = 0.0, weightDecay = 0.0;
  bool nesterov = false;
};
/// torch.optim.SGD: g = grad + wd * p; with momentum, buf = g on step 1, else
/// buf = momentum * buf + (1 - dampening) * g; g = nesterov ? g + momentum *
/// buf : buf; p -= lr * g. momentumBuf/newMomentumBuf are empty when
/// momentum == 0.
void sgdUpdate(const TensorView &param, const TensorView &grad,
               const TensorView &momentumBuf, const TensorView &newParam,
               const TensorView &newMomentumBuf, int64_t step,
               const SgdOptions &options);

struct AdamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0.0;
  bool decoupledWeightDecay = false; // AdamW
};
/// torch.optim.Adam / AdamW (non-amsgrad, non-fused): AdamW first scales
/// p *= 1 - lr * wd; Adam adds wd * p to the gradient. Then m = b1 m + (1-b1)
/// g; v = b2 v + (1-b2) g^2; p -= lr / (1 - b1^step) * m /
/// (sqrt(v) / sqrt(1 - b2^step) + eps).
void adamUpdate(const TensorView &param, const TensorView &grad,
                const TensorView &m, const TensorView &v,
                const TensorView &newParam, const TensorView &newM,
                const TensorView &newV, int64_t step,
                const AdamOptions &options);

} // namespace remat::rt

#endif // REMAT_RUNTIME_GRADKERNELS_H
