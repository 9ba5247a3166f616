//===- Kernels.h - The runtime kernel API on the CPU -------------*- C++ -*-===//
//
// The kernels' parameter types, and the kernel API (KernelApi.inc, declared
// once for every backend) in namespace remat::rt: the CPU kernels
// (runtime/cpu). The interpreter and generated code call nothing else; the
// CUDA kernels are the same declarations in remat::rt::cuda
// (cuda/CudaKernels.h).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_KERNELS_H
#define REMAT_RUNTIME_KERNELS_H

#include "remat/runtime/Tensor.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace remat::rt {

//===----------------------------------------------------------------------===//
// Parameter types
//===----------------------------------------------------------------------===//

/// unary(): y = op(x). The ops after Abs read parameters from UnaryParams
/// (ONNX's formulas; a, b, g, lo, hi = alpha, beta, gamma, lower, upper).
enum class UnaryOp {
  Neg, Sqrt, Exp, Log, Reciprocal, Erf, Tanh, Sigmoid, Relu,
  GeluErf,  // x * 0.5 * (1 + erf(x / sqrt(2)))
  GeluTanh, // x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
  Not,      // Bool only
  Abs,
  LeakyRelu,   // x >= 0 ? x : a x
  Elu,         // x >= 0 ? x : a (exp(x) - 1)
  Selu,        // x > 0 ? g x : g a (exp(x) - 1)
  Softplus,    // log(1 + exp(x))
  Softsign,    // x / (1 + |x|)
  HardSigmoid, // max(0, min(1, a x + b))
  Clip,        // min(max(x, lo), hi): hi where lo > hi, as numpy.clip
  Sin, Cos,
};

/// The parameters of the UnaryOps that take any (the rest ignore them).
struct UnaryParams {
  double alpha = 0.0, beta = 0.0, gamma = 0.0;
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
};

/// binary(): out = a op b.
enum class BinaryOp {
  Add, Sub, Mul, Div, Pow,
  Max, Min,
  Equal, Less, Greater, // output dtype Bool
  And, Or,              // Bool only
  PRelu,                // a < 0 ? a * b : a (floats only; b is the slope)
};

/// reduce().
enum class ReduceOp { Sum, Mean, Max };

/// Convolution and pooling windows. `pads` holds [begin_0, ...,
/// begin_{k-1}, end_0, ..., end_{k-1}] as ONNX.
struct WindowParams {
  Dims kernel;    // window (pooling) or weight spatial shape
  Dims strides;
  Dims pads;
  Dims dilations;
};

/// pad(): what fills the positions outside the input (ONNX Pad's `mode`).
enum class PadMode {
  Constant, // the given value
  Reflect,  // mirrored about the edge element (not repeating it)
  Edge,     // the edge element repeated
  Wrap,     // the input repeated periodically
};

/// The losses' `reduction`.
enum class LossReduction { None, Sum, Mean };

/// sgdUpdate() (torch.optim.SGD's hyperparameters).
struct SgdOptions {
  double lr = 0.01, momentum = 0.0, dampening = 0.0, weightDecay = 0.0;
  bool nesterov = false;
};

/// adamUpdate() (torch.optim.Adam / AdamW's hyperparameters).
struct AdamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0.0;
  bool decoupledWeightDecay = false; // AdamW
};

/// scatterND(): how an update combines with the element it lands on (ONNX
/// ScatterND-18's `reduction`).
enum class ScatterReduction { None, Add, Mul, Max, Min };

/// resize(): how values are read (ONNX Resize's `mode`): the nearest index,
/// the two around the coordinate (linear) or the four around it (cubic).
enum class ResizeMode { Nearest, Linear, Cubic };

/// resize(): how an output index maps to an input coordinate (ONNX
/// Resize's `coordinate_transformation_mode`, tf_crop_and_resize refused).
enum class ResizeCoordinates {
  HalfPixel,          // (o + 0.5) / scale - 0.5
  HalfPixelSymmetric, // half_pixel about the centre of the scaled extent
  PytorchHalfPixel,   // half_pixel, but 0 where the output has one element
  AlignCorners,       // o * (in - 1) / (scale * in - 1)
  Asymmetric,         // o / scale
};

/// resize(): which input index nearest mode reads for a coordinate between
/// two (ONNX Resize's `nearest_mode`).
enum class ResizeNearest { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };

/// Per-dim floating-point parameters (at most one per dim, no heap).
using DimScales = InlineVector<double, kMaxRank>;

/// resize() and resizeBackward(). `scales` has one entry per dim: the scale
/// the coordinate transform uses (output / input when the model gave
/// sizes); a dim whose scale is 1 and whose size is unchanged is copied.
struct ResizeParams {
  ResizeMode mode = ResizeMode::Nearest;
  ResizeCoordinates coordinates = ResizeCoordinates::HalfPixel;
  ResizeNearest nearest = ResizeNearest::RoundPreferFloor;
  DimScales scales;
  double cubicCoeffA = -0.75;  // cubic: the kernel's `a` (ONNX cubic_coeff_a)
  bool excludeOutside = false; // cubic: taps outside the input weigh 0
};

//===----------------------------------------------------------------------===//
// The CPU kernels
//===----------------------------------------------------------------------===//

/// On the CPU, step numbers are plain values.
using DropoutStep = uint64_t;
using OptimizerStep = int64_t;

#include "remat/runtime/KernelApi.inc"

} // namespace remat::rt

#endif // REMAT_RUNTIME_KERNELS_H
