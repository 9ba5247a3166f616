//===- Kernels.h - The runtime kernel API ------------------------*- C++ -*-===//
//
// One function per kernel. Every backend implements this API (runtime/cpu
// today); the interpreter and generated code call nothing else. Conventions:
//  - outputs are preallocated by the caller with their final shape and dtype;
//  - an optional operand or result is an empty view (`data == nullptr`);
//  - axes are non-negative (the compiler normalises them);
//  - elementwise kernels broadcast numpy-style to the output's shape;
//  - floating-point math is implemented for F32 and F64; data movement
//    (copy, transpose, concat, split, slice, gather, expand, where, cast) for
//    every dtype.
// Semantics follow the ONNX operator of the same name unless stated.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_KERNELS_H
#define REMAT_RUNTIME_KERNELS_H

#include "remat/runtime/Tensor.h"

#include <cstdint>
#include <vector>

namespace remat::rt {

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

enum class UnaryOp {
  Neg, Sqrt, Exp, Log, Reciprocal, Erf, Tanh, Sigmoid, Relu,
  GeluErf,  // x * 0.5 * (1 + erf(x / sqrt(2)))
  GeluTanh, // x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
  Not,      // Bool only
  Abs,
};
/// y = op(x); x and y have the same shape and dtype. Neg/Abs/Relu also on
/// integer dtypes.
void unary(UnaryOp op, const TensorView &x, const TensorView &y);

enum class BinaryOp {
  Add, Sub, Mul, Div, Pow,
  Max, Min,
  Equal, Less, Greater, // output dtype Bool
  And, Or,              // Bool only
};
/// out = a op b with numpy broadcasting of a and b to out.shape. Arithmetic on
/// F32/F64/I64/I32 (integer Div truncates toward zero, as ONNX). Pow: float
/// base with float or integer exponent.
void binary(BinaryOp op, const TensorView &a, const TensorView &b,
            const TensorView &out);

/// out = cond ? x : y, broadcasting all three to out.shape; cond is Bool.
void where(const TensorView &cond, const TensorView &x, const TensorView &y,
           const TensorView &out);

/// Element type conversion (any dtype to any dtype). Float to integer
/// truncates toward zero; anything to Bool is `!= 0`.
void cast(const TensorView &x, const TensorView &y);

/// Byte copy of x into y (same numel and dtype; shapes may differ: reshape).
void copy(const TensorView &x, const TensorView &y);

/// Fills y with `value` converted to y's dtype.
void fill(const TensorView &y, double value);

//===----------------------------------------------------------------------===//
// Linear algebra (OpenBLAS on CPU)
//===----------------------------------------------------------------------===//

/// Batched matmul: a [..., M, K] (or [..., K, M] if transA), b [..., K, N]
/// (or [..., N, K] if transB), out [..., M, N]. Ranks >= 2; batch dims
/// broadcast numpy-style to out's batch dims. F32 and F64.
void matmul(const TensorView &a, const TensorView &b, const TensorView &out,
            bool transA, bool transB);

//===----------------------------------------------------------------------===//
// Normalisation and softmax
//===----------------------------------------------------------------------===//

/// Softmax / log-softmax over one axis (ONNX opset >= 13 semantics).
void softmax(const TensorView &x, const TensorView &y, int64_t axis);
void logSoftmax(const TensorView &x, const TensorView &y, int64_t axis);

/// LayerNormalization: normalises over dims [axis, rank). scale and bias
/// (bias optional) have shape x.shape[axis:] (or broadcast to it). mean and
/// invStdDev (optional) have x.shape[:axis] followed by ones.
void layerNorm(const TensorView &x, const TensorView &scale,
               const TensorView &bias, const TensorView &y,
               const TensorView &mean, const TensorView &invStdDev,
               int64_t axis, double epsilon);

/// BatchNormalization, inference mode: y = (x - mean) / sqrt(var + eps) *
/// scale + bias, per channel (dim 1).
void batchNormInference(const TensorView &x, const TensorView &scale,
                        const TensorView &bias, const TensorView &mean,
                        const TensorView &var, const TensorView &y,
                        double epsilon);

/// BatchNormalization, training mode: normalises with the batch statistics
/// (biased variance) and writes the updated running statistics
///   runningMeanOut = momentum * runningMean + (1 - momentum) * batchMean
///   runningVarOut  = momentum * runningVar  + (1 - momentum) * batchVar
/// where batchVar is the biased variance (ONNX opset 15), or the unbiased one
/// (times n/(n-1), as torch.nn.BatchNorm) when unbiasedRunningVar is set; the
/// output is always normalised with the biased variance. savedMean and
/// savedInvStd (optional) receive the batch mean and 1/sqrt(var + eps).
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

enum class ReduceOp { Sum, Mean, Max };
/// Reduces x over `axes` (sorted, unique, non-negative). out has x's rank with
/// reduced dims set to 1 (the caller reshapes for keepdims=0; the data layout
/// is identical). An empty `axes` reduces nothing (copy).
void reduce(ReduceOp op, const TensorView &x, const TensorView &out,
            const Dims &axes);

//===----------------------------------------------------------------------===//
// Convolution and pooling (N, C, spatial...). 1 to 3 spatial dims.
//===----------------------------------------------------------------------===//

/// `pads` holds [begin_0, ..., begin_{k-1}, end_0, ..., end_{k-1}] as ONNX.
struct WindowParams {
  Dims kernel;    // window (pooling) or weight spatial shape
  Dims strides;
  Dims pads;
  Dims dilations;
};

/// Conv: x [N, C, ...], w [M, C/group, k...], bias [M] optional,
/// y [N, M, ...]. Implemented as im2col + GEMM.
void conv(const TensorView &x, const TensorView &w, const TensorView &bias,
          const TensorView &y, const WindowParams &params, int64_t group);

/// MaxPool; padding positions never win. indices (optional, I64) receives
/// the flat index into x of each maximum (ONNX storage_order 0).
void maxPool(const TensorView &x, const TensorView &y,
             const TensorView &indices, const WindowParams &params);

/// AveragePool; countIncludePad chooses the divisor at the borders.
void averagePool(const TensorView &x, const TensorView &y,
                 const WindowParams &params, bool countIncludePad);

/// GlobalAveragePool: y [N, C, 1, ...].
void globalAveragePool(const TensorView &x, const TensorView &y);

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

/// y = x permuted: y.shape[i] = x.shape[perm[i]].
void transpose(const TensorView &x, const TensorView &y,
               const Dims &perm);

void concat(TensorViewList inputs, const TensorView &y,
            int64_t axis);

/// Splits x along `axis` into the outputs in order (their sizes along axis
/// add up to x's).
void split(const TensorView &x, TensorViewList outputs,
           int64_t axis);

/// Strided slice: y[i...] = x[starts + i * steps] per dim; starts are already
/// clamped and non-negative, steps non-zero (negative steps walk backwards);
/// y's shape gives the counts. One entry per dim of x.
void slice(const TensorView &x, const TensorView &y,
           const Dims &starts,
           const Dims &steps);

/// ONNX Gather: y = x indexed by `indices` (I64 or I32, negative values count
/// from the end) along `axis`. y.shape = x.shape[:axis] + indices.shape +
/// x.shape[axis+1:]. Out-of-range indices throw RuntimeError.
void gather(const TensorView &x, const TensorView &indices,
            const TensorView &y, int64_t axis);

/// Broadcasts x to y.shape (numpy rules).
void expand(const TensorView &x, const TensorView &y);

//===----------------------------------------------------------------------===//
// Stochastic
//===----------------------------------------------------------------------===//

/// Dropout with a counter-based RNG (Philox-4x32-10): element i's keep
/// decision depends only on (seed, streamId, step, i), so re-running the op
/// reproduces the mask. y = x * mask / (1 - ratio); mask (optional, Bool).
/// ratio == 0 copies x and sets the mask to all true.
void dropout(const TensorView &x, const TensorView &y, const TensorView &mask,
             double ratio, uint64_t seed, uint64_t streamId, uint64_t step);

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

enum class LossReduction { None, Sum, Mean };

/// SoftmaxCrossEntropyLoss: scores [N, C, d...], labels [N, d...] (I64/I32),
/// weights [C] optional. loss is [] for Sum/Mean, [N, d...] for None.
/// logProb (optional) has scores' shape. Mean divides by the summed weights
/// of non-ignored targets (by their count without weights).
void softmaxCrossEntropyLoss(const TensorView &scores, const TensorView &labels,
                             const TensorView &weights, const TensorView &loss,
                             const TensorView &logProb, LossReduction reduction,
                             int64_t ignoreIndex, bool hasIgnoreIndex);

/// NegativeLogLikelihoodLoss over log-probabilities, same conventions.
void nllLoss(const TensorView &input, const TensorView &target,
             const TensorView &weights, const TensorView &loss,
             LossReduction reduction, int64_t ignoreIndex,
             bool hasIgnoreIndex);

} // namespace remat::rt

#endif // REMAT_RUNTIME_KERNELS_H
