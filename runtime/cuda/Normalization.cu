//===- Normalization.cu - Softmax, LayerNorm, BatchNorm -------------------===//
//
// The CUDA versions of runtime/cpu/Normalization.cpp with the same formulas:
// two-pass mean and variance, the per-element results in the data's compute
// type. Softmax sums in SumOf<C> (compensated fp32 for F32/F16/BF16 data).
// LayerNorm and BatchNorm compute their statistics in A: fp32 (compensated
// sums), or double when the data or one of the F32/F64 side arrays
// (statistics, BatchNorm's parameters) is F64, as the CPU does
// (statisticsInDouble). Softmax and LayerNorm give each row to a group of
// lanes (Reduction.cuh); BatchNorm training gives each channel to a block,
// which computes the statistics and then normalises its channel, so no
// scratch is needed.
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
  using C = ComputeType<T>;
  __shared__ C maxBuf[kThreads];
  __shared__ SumOf<C> sumBuf[kThreads];
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
    C m = -dInfinity<C>();
    if (active)
      for (int64_t i = lane; i < size; i += G) {
        const C v = toCompute(xr[i * inner]);
        m = m < v ? v : m;
      }
    C maxValue = groupReduce(m, maxBuf, lane, G,
                             [](C a, C b) { return a < b ? b : a; });
    if (dIsInf(maxValue)) // all -inf (or +inf present): avoid inf - inf
      maxValue = maxValue > 0 ? maxValue : C(0);

    SumOf<C> partial{};
    if (active)
      for (int64_t i = lane; i < size; i += G)
        partial += dExp(toCompute(xr[i * inner]) - maxValue);
    const C sum = sumValue(groupReduce(partial, sumBuf, lane, G, SumOp{}));

    if (!active)
      continue;
    if (log) {
      const C logSum = dLog(sum);
      for (int64_t i = lane; i < size; i += G)
        yr[i * inner] =
            fromCompute<T>((toCompute(xr[i * inner]) - maxValue) - logSum);
    } else {
      const C scale = C(1) / sum;
      for (int64_t i = lane; i < size; i += G)
        yr[i * inner] =
            fromCompute<T>(dExp(toCompute(xr[i * inner]) - maxValue) * scale);
    }
  }
}

void softmaxCommon(const char *kernel, const TensorView &x, const TensorView &y,
                   int64_t axis, bool log) {
  const AxisExtents s = checkSoftmax(kernel, x, y, axis);
  const int64_t rows = s.outer * s.inner;
  cudaStream_t stream = context(kernel).stream;
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
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
/// shape. Statistics in A, the normalised values in T's compute type.
template <typename T, typename A>
__global__ void __launch_bounds__(kThreads)
    layerNormKernel(const T *x, const T *scale, const T *bias, T *y,
                    FloatRef mean, FloatRef invStdDev, int64_t rows, int64_t n,
                    Indexer<2> params, A epsilon, int log2G) {
  using C = ComputeType<T>;
  __shared__ SumOf<A> buf[kThreads];
  const int G = 1 << log2G;
  const int lane = threadIdx.x & (G - 1);
  const int groupsPerBlock = kThreads >> log2G;
  const A count = static_cast<A>(n);
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * groupsPerBlock;
       first < rows;
       first += static_cast<int64_t>(gridDim.x) * groupsPerBlock) {
    const int64_t r = first + (threadIdx.x >> log2G);
    const bool active = r < rows;
    const T *xr = x + (active ? r * n : 0);
    T *yr = y + (active ? r * n : 0);

    // Two-pass mean / variance: no cancellation for large means.
    SumOf<A> sum{};
    if (active)
      for (int64_t i = lane; i < n; i += G)
        sum += static_cast<A>(toCompute(xr[i]));
    const A mu = sumValue(groupReduce(sum, buf, lane, G, SumOp{})) / count;
    SumOf<A> sq{};
    if (active)
      for (int64_t i = lane; i < n; i += G) {
        const A d = static_cast<A>(toCompute(xr[i])) - mu;
        sq += d * d;
      }
    const A var = sumValue(groupReduce(sq, buf, lane, G, SumOp{})) / count;
    if (!active)
      continue;
    const A inv = A(1) / dSqrt(var + epsilon);
    const C muC = static_cast<C>(mu), invC = static_cast<C>(inv);
    for (int64_t i = lane; i < n; i += G) {
      int64_t off[2];
      params.offsets(i, off);
      const C v = (toCompute(xr[i]) - muC) * invC * toCompute(scale[off[0]]);
      yr[i] = fromCompute<T>(bias ? v + toCompute(bias[off[1]]) : v);
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

template <typename T, typename A>
__global__ void batchNormInferenceKernel(const T *x, T *y, int64_t n,
                                         int64_t channels, int64_t spatial,
                                         ChannelParams p, A epsilon) {
  using C = ComputeType<T>;
  REMAT_GRID_STRIDE_LOOP(i, n) {
    const int64_t c = (i / spatial) % channels;
    // Folded into y = x * a + shift, in A, as the CPU folds in double.
    const A a = p.scale.load<A>(c) / dSqrt(p.var.load<A>(c) + epsilon);
    const A shift = p.bias.load<A>(c) - p.mean.load<A>(c) * a;
    y[i] = fromCompute<T>(toCompute(x[i]) * static_cast<C>(a) +
                          static_cast<C>(shift));
  }
}

template <typename A> struct BatchNormTrainingArgs {
  ChannelParams params;    // scale, bias, running mean, running var
  FloatRef runningMeanOut; // optional
  FloatRef runningVarOut;  // optional
  FloatRef savedMean;      // optional
  FloatRef savedInvStd;    // optional
  A epsilon, momentum;
  bool unbiasedRunningVar;
};

/// One block per channel: batch statistics (two-pass, in A), saved and
/// running statistics, then the channel's normalised output.
template <typename T, typename A>
__global__ void __launch_bounds__(kThreads)
    batchNormTrainingKernel(const T *x, T *y, int64_t batch, int64_t channels,
                            int64_t spatial, BatchNormTrainingArgs<A> args) {
  using C = ComputeType<T>;
  __shared__ SumOf<A> buf[kThreads];
  const ChannelParams &p = args.params;
  const int64_t count = batch * spatial;
  const A countA = static_cast<A>(count);
  for (int64_t c = blockIdx.x; c < channels; c += gridDim.x) {
    SumOf<A> sum{};
    for (int64_t e = threadIdx.x; e < count; e += blockDim.x)
      sum += static_cast<A>(toCompute(
          x[((e / spatial) * channels + c) * spatial + e % spatial]));
    const A mu =
        sumValue(groupReduce(sum, buf, threadIdx.x, kThreads, SumOp{})) /
        countA;
    SumOf<A> sq{};
    for (int64_t e = threadIdx.x; e < count; e += blockDim.x) {
      const A d = static_cast<A>(toCompute(
                      x[((e / spatial) * channels + c) * spatial +
                        e % spatial])) -
                  mu;
      sq += d * d;
    }
    const A var =
        sumValue(groupReduce(sq, buf, threadIdx.x, kThreads, SumOp{})) /
        countA;
    const A invStd = A(1) / dSqrt(var + args.epsilon);
    const A a = p.scale.load<A>(c) * invStd;
    if (threadIdx.x == 0) {
      if (args.savedMean.data)
        args.savedMean.store(c, mu);
      if (args.savedInvStd.data)
        args.savedInvStd.store(c, invStd);
      const A m = args.momentum;
      if (args.runningMeanOut.data)
        args.runningMeanOut.store(
            c, m * p.mean.load<A>(c) + (A(1) - m) * mu);
      // PyTorch tracks the unbiased variance; the ONNX spec the biased one.
      const A tracked = args.unbiasedRunningVar && countA > A(1)
                            ? var * (countA / (countA - A(1)))
                            : var;
      if (args.runningVarOut.data)
        args.runningVarOut.store(
            c, m * p.var.load<A>(c) + (A(1) - m) * tracked);
    }
    // (x - mean) * a + bias, not x * a + (bias - mean * a): when the
    // variance is tiny, a is large and the second form cancels two large
    // terms (1e-4 off in fp32 for a one-element channel).
    const C aC = static_cast<C>(a), muC = static_cast<C>(mu),
            biasC = static_cast<C>(p.bias.load<A>(c));
    for (int64_t e = threadIdx.x; e < count; e += blockDim.x) {
      const int64_t at = ((e / spatial) * channels + c) * spatial + e % spatial;
      y[at] = fromCompute<T>((toCompute(x[at]) - muC) * aC + biasC);
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
  const FloatRef meanRef = floatRefLike(mean, x.dtype, kernel, "mean");
  const FloatRef invRef =
      floatRefLike(invStdDev, x.dtype, kernel, "invStdDev");
  cudaStream_t stream = context(kernel).stream;
  const bool inDouble = statisticsInDouble(x.dtype, {meanRef, invRef});
  dispatchWithStatistics(x.dtype, inDouble, kernel, [&](auto tag, auto aTag) {
    using T = typename decltype(tag)::type;
    using A = typename decltype(aTag)::type;
    if (rows == 0 || n == 0)
      return;
    const int log2G = log2Lanes(n, kThreads);
    layerNormKernel<T, A>
        <<<gridFor(rows, kThreads >> log2G), kThreads, 0, stream>>>(
            x.as<const T>(), scale.as<const T>(),
            bias.empty() ? nullptr : bias.as<const T>(), y.as<T>(), meanRef,
            invRef, rows, n, params, static_cast<A>(epsilon), log2G);
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
  const bool inDouble =
      statisticsInDouble(x.dtype, {p.scale, p.bias, p.mean, p.var});
  dispatchWithStatistics(x.dtype, inDouble, kernel, [&](auto tag, auto aTag) {
    using T = typename decltype(tag)::type;
    using A = typename decltype(aTag)::type;
    const int64_t n = x.numel();
    if (n == 0)
      return;
    batchNormInferenceKernel<T, A><<<gridFor(n), kThreads, 0, stream>>>(
        x.as<const T>(), y.as<T>(), n, e.channels, e.spatial, p,
        static_cast<A>(epsilon));
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
  ChannelParams params;
  params.scale = channelParam(scale, C, kernel, "scale");
  params.bias = channelParam(bias, C, kernel, "bias");
  // The running statistics are read only where their update is written.
  params.mean = runningMeanOut.empty()
                    ? FloatRef()
                    : channelParam(runningMean, C, kernel, "runningMean");
  params.var = runningVarOut.empty()
                   ? FloatRef()
                   : channelParam(runningVar, C, kernel, "runningVar");
  const FloatRef meanOut =
      optionalChannelOut(runningMeanOut, C, kernel, "runningMean");
  const FloatRef varOut =
      optionalChannelOut(runningVarOut, C, kernel, "runningVar");
  const FloatRef saved = optionalChannelOut(savedMean, C, kernel, "savedMean");
  const FloatRef savedInv =
      optionalChannelOut(savedInvStd, C, kernel, "savedInvStd");
  const bool inDouble = statisticsInDouble(
      x.dtype, {params.scale, params.bias, params.mean, params.var, meanOut,
                varOut, saved, savedInv});
  cudaStream_t stream = context(kernel).stream;
  dispatchWithStatistics(x.dtype, inDouble, kernel, [&](auto tag, auto aTag) {
    using T = typename decltype(tag)::type;
    using A = typename decltype(aTag)::type;
    if (C == 0)
      return;
    const BatchNormTrainingArgs<A> args{params,
                                        meanOut,
                                        varOut,
                                        saved,
                                        savedInv,
                                        static_cast<A>(epsilon),
                                        static_cast<A>(momentum),
                                        unbiasedRunningVar};
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(C, 65535));
    batchNormTrainingKernel<T, A><<<blocks, kThreads, 0, stream>>>(
        x.as<const T>(), y.as<T>(), e.batch, C, e.spatial, args);
    checkLaunch(kernel);
  });
}

} // namespace remat::rt::cuda
