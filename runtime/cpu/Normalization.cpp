//===- Normalization.cpp - Softmax, LayerNorm, BatchNorm ------------------===//
//
// Statistics (softmax sums, means, variances) accumulate in double: cheap at
// these sizes, and it keeps F32 results close to a float64 reference. The
// elementwise parts compute in the storage type's compute type (float for
// F16/BF16, FloatStorage.h). BatchNorm's data may be 16-bit while its
// per-channel parameters and statistics are F32 or F64.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"
#include "Scratch.h"
#include "common/NormalizationChecks.h"
#include "common/StridedLoop.h"

#include <cmath>
#include <limits>

namespace remat::rt {
using namespace cpu;

namespace {

/// Softmax of one row of n elements `stride` apart (log-softmax if `log`).
template <typename T>
void softmaxRow(const T *x, T *y, int64_t n, int64_t stride, bool log) {
  using C = ComputeType<T>;
  C maxValue = -std::numeric_limits<C>::infinity();
  for (int64_t i = 0; i < n; ++i)
    maxValue = std::max(maxValue, toCompute(x[i * stride]));
  if (std::isinf(maxValue)) // all -inf (or +inf present): avoid inf - inf
    maxValue = maxValue > 0 ? maxValue : C(0);
  // y holds the exponentials between the passes when it has their
  // precision; a 16-bit y would round them twice, so they are recomputed.
  constexpr bool keepExp = !kIsHalfStorage<T>;
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    C e = std::exp(toCompute(x[i * stride]) - maxValue);
    if constexpr (keepExp)
      if (!log)
        y[i * stride] = e;
    sum += e;
  }
  if (log) {
    // (x - max) first: adding max to log(sum) would round away the low bits
    // of large inputs.
    const C logSum = static_cast<C>(std::log(sum));
    for (int64_t i = 0; i < n; ++i)
      y[i * stride] =
          fromCompute<T>((toCompute(x[i * stride]) - maxValue) - logSum);
  } else {
    const C scale = static_cast<C>(1.0 / sum);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (keepExp)
        y[i * stride] *= scale;
      else
        y[i * stride] = fromCompute<T>(
            std::exp(toCompute(x[i * stride]) - maxValue) * scale);
    }
  }
}

void softmaxCommon(const char *kernel, const TensorView &x, const TensorView &y,
                   int64_t axis, bool log) {
  const AxisExtents s = checkSoftmax(kernel, x, y, axis);
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *px = x.as<const T>();
    T *py = y.as<T>();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t j = 0; j < s.inner; ++j) {
        const int64_t base = o * s.size * s.inner + j;
        softmaxRow(px + base, py + base, s.size, s.inner, log);
      }
  });
}

/// Materialises a parameter (LayerNorm scale/bias) broadcast to `shape`,
/// unless it already has that many elements.
template <typename T>
const T *broadcastParam(const TensorView &p, const Shape &shape,
                        Scratch &scratch) {
  if (p.numel() == numElements(shape))
    return p.as<const T>();
  T *storage = scratch.take<T>(numElements(shape));
  const T *src = p.as<const T>();
  std::array<Strides, 2> strides = {
      broadcastStrides(p.shape, shape, "layerNorm"), contiguousStrides(shape)};
  forEachRun<2>(shape, strides,
                [&](const std::array<int64_t, 2> &off,
                    const std::array<int64_t, 2> &st, int64_t n) {
                  for (int64_t i = 0; i < n; ++i)
                    storage[off[1] + i] = src[off[0] + i * st[0]];
                });
  return storage;
}

template <typename T>
void layerNormImpl(const TensorView &x, const TensorView &scale,
                   const TensorView &bias, const TensorView &y,
                   const TensorView &mean, const TensorView &invStdDev,
                   int64_t axis, double epsilon, Scratch &scratch) {
  const Shape normShape(x.shape.begin() + axis, x.shape.end());
  const int64_t n = numElements(normShape);
  const int64_t rows = n == 0 ? 0 : x.numel() / n;
  using C = ComputeType<T>;
  const T *g = broadcastParam<T>(scale, normShape, scratch);
  const T *b = bias.empty() ? nullptr
                            : broadcastParam<T>(bias, normShape, scratch);
  const T *px = x.as<const T>();
  T *py = y.as<T>();
  for (int64_t r = 0; r < rows; ++r) {
    const T *xr = px + r * n;
    T *yr = py + r * n;
    // Two-pass mean / variance: no cancellation for large means.
    double sum = 0;
    for (int64_t i = 0; i < n; ++i)
      sum += toCompute(xr[i]);
    const double mu = sum / static_cast<double>(n);
    double sq = 0;
    for (int64_t i = 0; i < n; ++i) {
      double d = toCompute(xr[i]) - mu;
      sq += d * d;
    }
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(n) + epsilon);
    const C muC = static_cast<C>(mu), invC = static_cast<C>(inv);
    if (b)
      for (int64_t i = 0; i < n; ++i)
        yr[i] = fromCompute<T>((toCompute(xr[i]) - muC) * invC *
                                   toCompute(g[i]) +
                               toCompute(b[i]));
    else
      for (int64_t i = 0; i < n; ++i)
        yr[i] = fromCompute<T>((toCompute(xr[i]) - muC) * invC *
                               toCompute(g[i]));
    if (!mean.empty())
      storeFromDouble(mean, r, mu, "layerNorm");
    if (!invStdDev.empty())
      storeFromDouble(invStdDev, r, inv, "layerNorm");
  }
}

/// A per-channel parameter as doubles, in the next buffer of `scratch`.
double *loadParam(const TensorView &p, int64_t channels, const char *kernel,
                  const char *what, Scratch &scratch) {
  requireNumel(p, channels, kernel, what);
  double *values = scratch.take<double>(channels);
  for (int64_t c = 0; c < channels; ++c)
    values[c] = loadAsDouble(p, c, kernel);
  return values;
}

/// y = x * a[c] + b[c] over an [N, C, spatial] tensor, in x's compute
/// type; with `mean`, y = (x - mean[c]) * a[c] + b[c].
template <typename T>
void applyChannelAffine(const TensorView &x, const TensorView &y,
                        const double *a, const double *b,
                        const double *mean = nullptr) {
  using Compute = ComputeType<T>;
  const int64_t N = x.shape[0], C = x.shape[1];
  const int64_t spatial = C == 0 || N == 0 ? 0 : x.numel() / (N * C);
  const T *px = x.as<const T>();
  T *py = y.as<T>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const Compute ac = static_cast<Compute>(a[c]);
      const Compute bc = static_cast<Compute>(b[c]);
      // Without a mean, x - 0 is x exactly (-0 included): one loop serves.
      const Compute mc = static_cast<Compute>(mean ? mean[c] : 0.0);
      const int64_t base = (n * C + c) * spatial;
      for (int64_t i = 0; i < spatial; ++i)
        py[base + i] = fromCompute<T>((toCompute(px[base + i]) - mc) * ac + bc);
    }
}

} // namespace

void softmax(const TensorView &x, const TensorView &y, int64_t axis) {
  softmaxCommon("softmax", x, y, axis, false);
}

void logSoftmax(const TensorView &x, const TensorView &y, int64_t axis) {
  softmaxCommon("logSoftmax", x, y, axis, true);
}

void layerNorm(const TensorView &x, const TensorView &scale,
               const TensorView &bias, const TensorView &y,
               const TensorView &mean, const TensorView &invStdDev,
               int64_t axis, double epsilon) {
  const char *kernel = "layerNorm";
  checkLayerNorm(kernel, x, scale, bias, y, mean, invStdDev, axis);
  Scratch scratch(kernel, layerNormScratchBytes(x, scale, bias, axis));
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    layerNormImpl<typename decltype(tag)::type>(x, scale, bias, y, mean,
                                                invStdDev, axis, epsilon,
                                                scratch);
  });
}

void batchNormInference(const TensorView &x, const TensorView &scale,
                        const TensorView &bias, const TensorView &mean,
                        const TensorView &var, const TensorView &y,
                        double epsilon) {
  const char *kernel = "batchNormInference";
  const int64_t C = checkBatchNorm(kernel, x, y).channels;
  Scratch scratch(kernel, batchNormInferenceScratchBytes(x));
  double *g = loadParam(scale, C, kernel, "scale", scratch);
  double *b = loadParam(bias, C, kernel, "bias", scratch);
  const double *mu = loadParam(mean, C, kernel, "mean", scratch);
  const double *v = loadParam(var, C, kernel, "var", scratch);
  // Fold into y = x * a + shift per channel.
  for (int64_t c = 0; c < C; ++c) {
    g[c] /= std::sqrt(v[c] + epsilon);
    b[c] -= mu[c] * g[c];
  }
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    applyChannelAffine<typename decltype(tag)::type>(x, y, g, b);
  });
}

void batchNormTraining(const TensorView &x, const TensorView &scale,
                       const TensorView &bias, const TensorView &runningMean,
                       const TensorView &runningVar, const TensorView &y,
                       const TensorView &runningMeanOut,
                       const TensorView &runningVarOut,
                       const TensorView &savedMean,
                       const TensorView &savedInvStd, double epsilon,
                       double momentum, bool unbiasedRunningVar) {
  const char *kernel = "batchNormTraining";
  const ChannelExtents e = checkBatchNorm(kernel, x, y);
  const int64_t N = e.batch, C = e.channels, spatial = e.spatial;
  const double count = static_cast<double>(N * spatial);

  // Batch statistics per channel, two-pass in double.
  Scratch scratch(kernel, batchNormTrainingScratchBytes(x));
  double *mu = scratch.take<double>(C), *var = scratch.take<double>(C);
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *px = x.as<const T>();
    for (int64_t c = 0; c < C; ++c) {
      double sum = 0;
      for (int64_t n = 0; n < N; ++n) {
        const T *p = px + (n * C + c) * spatial;
        for (int64_t i = 0; i < spatial; ++i)
          sum += toCompute(p[i]);
      }
      mu[c] = sum / count;
      double sq = 0;
      for (int64_t n = 0; n < N; ++n) {
        const T *p = px + (n * C + c) * spatial;
        for (int64_t i = 0; i < spatial; ++i) {
          double d = toCompute(p[i]) - mu[c];
          sq += d * d;
        }
      }
      var[c] = sq / count;
    }
  });

  if (!savedMean.empty())
    requireNumel(savedMean, C, kernel, "savedMean");
  if (!savedInvStd.empty())
    requireNumel(savedInvStd, C, kernel, "savedInvStd");
  double *a = loadParam(scale, C, kernel, "scale", scratch);
  double *shift = loadParam(bias, C, kernel, "bias", scratch);
  for (int64_t c = 0; c < C; ++c) {
    const double invStd = 1.0 / std::sqrt(var[c] + epsilon);
    a[c] *= invStd;
    if (!savedMean.empty())
      storeFromDouble(savedMean, c, mu[c], kernel);
    if (!savedInvStd.empty())
      storeFromDouble(savedInvStd, c, invStd, kernel);
  }
  // y = (x - mean) * a + bias in the compute type, not x * a + (bias -
  // mean * a): with a tiny variance a is large, and the folded form
  // cancels two large terms (1e-4 off in fp32 for a one-element channel).
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    applyChannelAffine<typename decltype(tag)::type>(x, y, a, shift, mu);
  });

  // One buffer serves both running statistics, read just before each update.
  double *running = scratch.take<double>(C);
  auto updateRunning = [&](const TensorView &in, const TensorView &out,
                           const double *batch, const char *what) {
    if (out.empty())
      return;
    requireNumel(out, C, kernel, what);
    requireNumel(in, C, kernel, what);
    for (int64_t c = 0; c < C; ++c)
      running[c] = loadAsDouble(in, c, kernel);
    for (int64_t c = 0; c < C; ++c)
      storeFromDouble(out, c,
                      momentum * running[c] + (1 - momentum) * batch[c],
                      kernel);
  };
  updateRunning(runningMean, runningMeanOut, mu, "runningMean");
  // PyTorch tracks the unbiased variance; the ONNX spec the biased one.
  double *trackedVar = scratch.take<double>(C);
  for (int64_t c = 0; c < C; ++c)
    trackedVar[c] = unbiasedRunningVar && count > 1
                        ? var[c] * (count / (count - 1))
                        : var[c];
  updateRunning(runningVar, runningVarOut, trackedVar, "runningVar");
}

} // namespace remat::rt
