//===- Normalization.cu - Softmax, LayerNorm, BatchNorm -------------------===//
//
// The CUDA versions of runtime/cpu/Normalization.cpp with the same formulas:
// statistics in double (two-pass mean and variance), the per-element
// results in the tensor's type. Softmax and LayerNorm give each row to a
// group of lanes (Reduction.cuh); BatchNorm training gives each channel to
// a block, which computes the statistics and then normalises its channel,
// so no scratch is needed.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Common.cuh"
#include "Indexing.cuh"
#include "Reduction.cuh"

#include "common/NormalizationChecks.h"

namespace remat::rt::cuda {
using namespace detail;

namespace {

//===----------------------------------------------------------------------===//
// Softmax / log-softmax
//===----------------------------------------------------------------------===//

/// Row r of the (outer, size, inner) split starts at
/// (r / inner) * size * inner + r % inner and steps by inner.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    softmaxKernel(const T *x, T *y, int64_t rows, int64_t size, int64_t inner,
                  int log2G, bool log) {
  __shared__ double buf[kThreads];
  const int G = 1 << log2G;
  const int lane = threadIdx.x & (G - 1);
  const int groupsPerBlock = kThreads >> log2G;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * groupsPerBlock;
       first < rows;
       first += static_cast<int64_t>(gridDim.x) * groupsPerBlock) {
    const int64_t r = first + (threadIdx.x >> log2G);
    const bool active = r < rows;
    const int64_t base = active ? (r / inner) * size * inner + r % inner : 0;
    const T *xr = x + base;
    T *yr = y + base;

    // Max ignoring NaN (as std::max with the running max first).
    T m = -dInfinity<T>();
    if (active)
      for (int64_t i = lane; i < size; i += G) {
        const T v = xr[i * inner];
        m = m < v ? v : m;
      }
    T maxValue = static_cast<T>(
        groupReduce(static_cast<double>(m), buf, lane, G,
                    [](double a, double b) { return a < b ? b : a; }));
    if (dIsInf(maxValue)) // all -inf (or +inf present): avoid inf - inf
      maxValue = maxValue > 0 ? maxValue : T(0);

    double sum = 0;
    if (active)
      for (int64_t i = lane; i < size; i += G)
        sum += static_cast<double>(dExp(xr[i * inner] - maxValue));
    sum = groupReduce(sum, buf, lane, G, SumOp{});

    if (!active)
      continue;
    if (log) {
      const T logSum = static_cast<T>(::log(sum));
      for (int64_t i = lane; i < size; i += G)
        yr[i * inner] = (xr[i * inner] - maxValue) - logSum;
    } else {
      const T scale = static_cast<T>(1.0 / sum);
      for (int64_t i = lane; i < size; i += G)
        yr[i * inner] = dExp(xr[i * inner] - maxValue) * scale;
    }
  }
}

void softmaxCommon(const char *kernel, const TensorView &x, const TensorView &y,
                   int64_t axis, bool log) {
  const AxisExtents s = checkSoftmax(kernel, x, y, axis);
  const int64_t rows = s.outer * s.inner;
  cudaStream_t stream = context(kernel).stream;
  dispatchFloat(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (rows == 0 || s.size == 0)
      return;
    // Contiguous rows get up to a block of lanes; strided rows (inner > 1)
    // one lane each, so that neighbouring rows read neighbouring elements.
    const int log2G = s.inner == 1 ? log2Lanes(s.size, kThreads) : 0;
    const int64_t groupsPerBlock = kThreads >> log2G;
    softmaxKernel<T><<<gridFor(rows, static_cast<int>(groupsPerBlock)),
                       kThreads, 0, stream>>>(x.as<const T>(), y.as<T>(), rows,
                                              s.size, s.inner, log2G, log);
    checkLaunch(kernel);
  });
}

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

/// Strides reading a LayerNorm parameter at the normalised shape: as stored
/// when it has that many elements (as the CPU), else broadcast.
Strides paramStrides(const TensorView &p, const Shape &normShape,
                     const char *kernel) {
  if (p.numel() == numElements(normShape))
    return contiguousStrides(normShape);
  return broadcastStrides(p.shape, normShape, kernel);
}

/// Rows of n contiguous elements; scale and bias (bias may be null) are read
/// through `params` (operand 0 scale, 1 bias) broadcast to the normalised
/// shape.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    layerNormKernel(const T *x, const T *scale, const T *bias, T *y,
                    FloatRef mean, FloatRef invStdDev, int64_t rows, int64_t n,
                    Indexer<2> params, double epsilon, int log2G) {
  __shared__ double buf[kThreads];
  const int G = 1 << log2G;
  const int lane = threadIdx.x & (G - 1);
  const int groupsPerBlock = kThreads >> log2G;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * groupsPerBlock;
       first < rows;
       first += static_cast<int64_t>(gridDim.x) * groupsPerBlock) {
    const int64_t r = first + (threadIdx.x >> log2G);
    const bool active = r < rows;
    const T *xr = x + (active ? r * n : 0);
    T *yr = y + (active ? r * n : 0);

    // Two-pass mean / variance: no cancellation for large means.
    double sum = 0;
    if (active)
      for (int64_t i = lane; i < n; i += G)
        sum += static_cast<double>(xr[i]);
    const double mu =
        groupReduce(sum, buf, lane, G, SumOp{}) / static_cast<double>(n);
    double sq = 0;
    if (active)
      for (int64_t i = lane; i < n; i += G) {
        const double d = static_cast<double>(xr[i]) - mu;
        sq += d * d;
      }
    sq = groupReduce(sq, buf, lane, G, SumOp{});
    if (!active)
      continue;
    const double inv = 1.0 / ::sqrt(sq / static_cast<double>(n) + epsilon);
    const T muT = static_cast<T>(mu), invT = static_cast<T>(inv);
    for (int64_t i = lane; i < n; i += G) {
      int64_t off[2];
      params.offsets(i, off);
      const T v = (xr[i] - muT) * invT * scale[off[0]];
      yr[i] = bias ? v + bias[off[1]] : v;
    }
    if (lane == 0) {
      if (mean.data)
        mean.store(r, mu);
      if (invStdDev.data)
        invStdDev.store(r, inv);
    }
  }
}

//===----------------------------------------------------------------------===//
// BatchNorm
//===----------------------------------------------------------------------===//

/// The four per-channel parameters, each F32 or F64 independently.
struct ChannelParams {
  FloatRef scale, bias, mean, var;
};

template <typename T>
__global__ void batchNormInferenceKernel(const T *x, T *y, int64_t n,
                                         int64_t channels, int64_t spatial,
                                         ChannelParams p, double epsilon) {
  REMAT_GRID_STRIDE_LOOP(i, n) {
    const int64_t c = (i / spatial) % channels;
    // Folded into y = x * a + shift, in double, as the CPU.
    const double a = p.scale.load(c) / ::sqrt(p.var.load(c) + epsilon);
    const double shift = p.bias.load(c) - p.mean.load(c) * a;
    y[i] = x[i] * static_cast<T>(a) + static_cast<T>(shift);
  }
}

struct BatchNormTrainingArgs {
  ChannelParams params;    // scale, bias, running mean, running var
  FloatRef runningMeanOut; // optional
  FloatRef runningVarOut;  // optional
  FloatRef savedMean;      // optional
  FloatRef savedInvStd;    // optional
  double epsilon, momentum;
  bool unbiasedRunningVar;
};

/// One block per channel: batch statistics (two-pass, double), saved and
/// running statistics, then the channel's normalised output.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    batchNormTrainingKernel(const T *x, T *y, int64_t batch, int64_t channels,
                            int64_t spatial, BatchNormTrainingArgs args) {
  __shared__ double buf[kThreads];
  const int64_t count = batch * spatial;
  const double countD = static_cast<double>(count);
  for (int64_t c = blockIdx.x; c < channels; c += gridDim.x) {
    double sum = 0;
    for (int64_t e = threadIdx.x; e < count; e += blockDim.x)
      sum += static_cast<double>(
          x[((e / spatial) * channels + c) * spatial + e % spatial]);
    const double mu =
        groupReduce(sum, buf, threadIdx.x, kThreads, SumOp{}) / countD;
    double sq = 0;
    for (int64_t e = threadIdx.x; e < count; e += blockDim.x) {
      const double d =
          static_cast<double>(
              x[((e / spatial) * channels + c) * spatial + e % spatial]) -
          mu;
      sq += d * d;
    }
    const double var =
        groupReduce(sq, buf, threadIdx.x, kThreads, SumOp{}) / countD;
    const double invStd = 1.0 / ::sqrt(var + args.epsilon);
    const double a = args.params.scale.load(c) * invStd;
    const double shift = args.params.bias.load(c) - mu * a;
    if (threadIdx.x == 0) {
      if (args.savedMean.data)
        args.savedMean.store(c, mu);
      if (args.savedInvStd.data)
        args.savedInvStd.store(c, invStd);
      const double m = args.momentum;
      if (args.runningMeanOut.data)
        args.runningMeanOut.store(c,
                                  m * args.params.mean.load(c) + (1 - m) * mu);
      // PyTorch tracks the unbiased variance; the ONNX spec the biased one.
      const double tracked = args.unbiasedRunningVar && countD > 1
                                 ? var * (countD / (countD - 1))
                                 : var;
      if (args.runningVarOut.data)
        args.runningVarOut.store(c, m * args.params.var.load(c) +
                                        (1 - m) * tracked);
    }
    const T aT = static_cast<T>(a), shiftT = static_cast<T>(shift);
    for (int64_t e = threadIdx.x; e < count; e += blockDim.x) {
      const int64_t at = ((e / spatial) * channels + c) * spatial + e % spatial;
      y[at] = x[at] * aT + shiftT;
    }
  }
}

FloatRef channelParam(const TensorView &p, int64_t channels, const char *kernel,
                      const char *what) {
  require(!p.empty(), kernel, (std::string(what) + " is required").c_str());
  requireNumel(p, channels, kernel, what);
  return floatRef(p, kernel, what);
}

FloatRef optionalChannelOut(const TensorView &p, int64_t channels,
                            const char *kernel, const char *what) {
  if (!p.empty())
    requireNumel(p, channels, kernel, what);
  return floatRef(p, kernel, what);
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
  const int64_t rows =
      checkLayerNorm(kernel, x, scale, bias, y, mean, invStdDev, axis);
  const Shape normShape(x.shape.begin() + axis, x.shape.end());
  const int64_t n = numElements(normShape);
  const Indexer<2> params =
      makeIndexer<2>(normShape,
                     {paramStrides(scale, normShape, kernel),
                      bias.empty() ? Strides(normShape.size(), 0)
                                   : paramStrides(bias, normShape, kernel)},
                     kernel);
  const FloatRef meanRef = floatRef(mean, kernel, "mean");
  const FloatRef invRef = floatRef(invStdDev, kernel, "invStdDev");
  cudaStream_t stream = context(kernel).stream;
  dispatchFloat(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (rows == 0 || n == 0)
      return;
    const int log2G = log2Lanes(n, kThreads);
    layerNormKernel<T>
        <<<gridFor(rows, kThreads >> log2G), kThreads, 0, stream>>>(
            x.as<const T>(), scale.as<const T>(),
            bias.empty() ? nullptr : bias.as<const T>(), y.as<T>(), meanRef,
            invRef, rows, n, params, epsilon, log2G);
    checkLaunch(kernel);
  });
}

void batchNormInference(const TensorView &x, const TensorView &scale,
                        const TensorView &bias, const TensorView &mean,
                        const TensorView &var, const TensorView &y,
                        double epsilon) {
  const char *kernel = "batchNormInference";
  const ChannelExtents e = checkBatchNorm(kernel, x, y);
  const ChannelParams p{channelParam(scale, e.channels, kernel, "scale"),
                        channelParam(bias, e.channels, kernel, "bias"),
                        channelParam(mean, e.channels, kernel, "mean"),
                        channelParam(var, e.channels, kernel, "var")};
  cudaStream_t stream = context(kernel).stream;
  dispatchFloat(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = x.numel();
    if (n == 0)
      return;
    batchNormInferenceKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
        x.as<const T>(), y.as<T>(), n, e.channels, e.spatial, p, epsilon);
    checkLaunch(kernel);
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
  const int64_t C = e.channels;
  BatchNormTrainingArgs args;
  args.params.scale = channelParam(scale, C, kernel, "scale");
  args.params.bias = channelParam(bias, C, kernel, "bias");
  // The running statistics are read only where their update is written.
  args.params.mean = runningMeanOut.empty()
                         ? FloatRef()
                         : channelParam(runningMean, C, kernel, "runningMean");
  args.params.var = runningVarOut.empty()
                        ? FloatRef()
                        : channelParam(runningVar, C, kernel, "runningVar");
  args.runningMeanOut =
      optionalChannelOut(runningMeanOut, C, kernel, "runningMean");
  args.runningVarOut =
      optionalChannelOut(runningVarOut, C, kernel, "runningVar");
  args.savedMean = optionalChannelOut(savedMean, C, kernel, "savedMean");
  args.savedInvStd = optionalChannelOut(savedInvStd, C, kernel, "savedInvStd");
  args.epsilon = epsilon;
  args.momentum = momentum;
  args.unbiasedRunningVar = unbiasedRunningVar;
  cudaStream_t stream = context(kernel).stream;
  dispatchFloat(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (C == 0)
      return;
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(C, 65535));
    batchNormTrainingKernel<T><<<blocks, kThreads, 0, stream>>>(
        x.as<const T>(), y.as<T>(), e.batch, C, e.spatial, args);
    checkLaunch(kernel);
  });
}

} // namespace remat::rt::cuda
