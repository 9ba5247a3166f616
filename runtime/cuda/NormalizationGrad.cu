//===- NormalizationGrad.cu - LayerNorm and BatchNorm backward ------------===//
//
// The CUDA versions of runtime/cpu/NormalizationGrad.cpp. With
// xhat = (x - mean) * invStd and g = dy * scale over the m elements sharing
// a mean, dx = invStd * (g - mean(g) - xhat * mean(g * xhat)); dscale and
// dbias sum dy * xhat and dy over everything else. LayerNorm: a group of
// lanes per row for dx, then column reductions over the rows (Reduction.cuh)
// for dscale / dbias. BatchNorm: a block per channel does both. As in the
// forward (Normalization.cu), the statistics type A is fp32 with compensated
// sums, or double when the data or an F32/F64 side array is F64.
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

template <typename T, typename A>
__global__ void __launch_bounds__(kThreads)
    layerNormBackwardKernel(const T *x, const T *scale, Indexer<1> scaleIx,
                            FloatRef mean, FloatRef invStdDev, const T *dy,
                            T *dx, int64_t rows, int64_t n, int log2G) {
  __shared__ SumOf<A> buf[kThreads];
  const int G = 1 << log2G;
  const int lane = threadIdx.x & (G - 1);
  const int groupsPerBlock = kThreads >> log2G;
  const A invN = A(1) / static_cast<A>(n);
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * groupsPerBlock;
       first < rows;
       first += static_cast<int64_t>(gridDim.x) * groupsPerBlock) {
    const int64_t r = first + (threadIdx.x >> log2G);
    const bool active = r < rows;
    const int64_t base = active ? r * n : 0;
    const A mu = active ? mean.load<A>(r) : A(0);
    const A inv = active ? invStdDev.load<A>(r) : A(0);
    SumOf<A> sumG{}, sumGX{};
    if (active)
      for (int64_t i = lane; i < n; i += G) {
        const A xhat = (static_cast<A>(toCompute(x[base + i])) - mu) * inv;
        const A gi = static_cast<A>(toCompute(dy[base + i])) *
                     static_cast<A>(toCompute(scale[scaleIx.offset(i)]));
        sumG += gi;
        sumGX += gi * xhat;
      }
    const A meanG = sumValue(groupReduce(sumG, buf, lane, G, SumOp{})) * invN;
    const A meanGX =
        sumValue(groupReduce(sumGX, buf, lane, G, SumOp{})) * invN;
    if (!active)
      continue;
    for (int64_t i = lane; i < n; i += G) {
      const A xhat = (static_cast<A>(toCompute(x[base + i])) - mu) * inv;
      dx[base + i] = fromCompute<T>(static_cast<ComputeType<T>>(
          inv * (static_cast<A>(toCompute(dy[base + i])) *
                     static_cast<A>(toCompute(scale[scaleIx.offset(i)])) -
                 meanG - xhat * meanGX)));
    }
  }
}

/// dscale[i] (withXhat) or dbias[i] term for row r of the [rows, n] data.
template <typename T, typename A> struct LayerNormParamGradLoad {
  const T *x, *dy;
  FloatRef mean, invStdDev;
  int64_t n;
  bool withXhat;
  __device__ int64_t base(int64_t i) const { return i; }
  __device__ A at(int64_t i, int64_t r) const {
    const A d = static_cast<A>(toCompute(dy[r * n + i]));
    if (!withXhat)
      return d;
    const A xhat = (static_cast<A>(toCompute(x[r * n + i])) -
                    mean.load<A>(r)) *
                   invStdDev.load<A>(r);
    return d * xhat;
  }
};

/// Stores a reduced sum into an F32/F64 array.
struct FloatStore {
  FloatRef out;
  template <typename S> __device__ void operator()(int64_t i, S sum) const {
    out.store(i, sumValue(sum));
  }
};

struct BatchNormBackwardArgs {
  FloatRef scale, savedMean, savedInvStd, dscale, dbias;
};

/// One block per channel: the two channel sums, then dx.
template <typename T, typename A>
__global__ void __launch_bounds__(kThreads)
    batchNormBackwardKernel(const T *x, const T *dy, T *dx, int64_t batch,
                            int64_t channels, int64_t spatial,
                            BatchNormBackwardArgs args) {
  __shared__ SumOf<A> buf[kThreads];
  const int64_t count = batch * spatial;
  const A countA = static_cast<A>(count);
  for (int64_t c = blockIdx.x; c < channels; c += gridDim.x) {
    const A mu = args.savedMean.load<A>(c);
    const A inv = args.savedInvStd.load<A>(c);
    SumOf<A> s{}, sx{};
    for (int64_t e = threadIdx.x; e < count; e += blockDim.x) {
      const int64_t at = ((e / spatial) * channels + c) * spatial + e % spatial;
      const A d = static_cast<A>(toCompute(dy[at]));
      s += d;
      sx += d * (static_cast<A>(toCompute(x[at])) - mu) * inv;
    }
    const A sum = sumValue(groupReduce(s, buf, threadIdx.x, kThreads, SumOp{}));
    const A sumX =
        sumValue(groupReduce(sx, buf, threadIdx.x, kThreads, SumOp{}));
    if (threadIdx.x == 0) {
      if (args.dscale.data)
        args.dscale.store(c, sumX);
      if (args.dbias.data)
        args.dbias.store(c, sum);
    }
    if (!dx)
      continue;
    const A a = args.scale.load<A>(c) * inv;
    const A meanDy = sum / countA, meanDyX = sumX / countA;
    for (int64_t e = threadIdx.x; e < count; e += blockDim.x) {
      const int64_t at = ((e / spatial) * channels + c) * spatial + e % spatial;
      const A xhat = (static_cast<A>(toCompute(x[at])) - mu) * inv;
      dx[at] = fromCompute<T>(static_cast<ComputeType<T>>(
          a * (static_cast<A>(toCompute(dy[at])) - meanDy - xhat * meanDyX)));
    }
  }
}

} // namespace

void layerNormBackward(const TensorView &x, const TensorView &scale,
                       const TensorView &mean, const TensorView &invStdDev,
                       const TensorView &dy, const TensorView &dx,
                       const TensorView &dscale, const TensorView &dbias,
                       int64_t axis) {
  const char *kernel = "layerNormBackward";
  const LayerNormRows r = checkLayerNormBackward(kernel, x, scale, mean,
                                                 invStdDev, dy, dx, axis);
  const Shape &normShape = r.normShape;
  const int64_t n = r.n, rows = r.rows;
  if (!dscale.empty())
    requireNumel(dscale, n, kernel, "dscale");
  if (!dbias.empty())
    requireNumel(dbias, n, kernel, "dbias");
  const FloatRef meanRef = floatRefLike(mean, x.dtype, kernel, "mean");
  const FloatRef invRef =
      floatRefLike(invStdDev, x.dtype, kernel, "invStdDev");
  const FloatRef dscaleRef = floatRefLike(dscale, x.dtype, kernel, "dscale");
  const FloatRef dbiasRef = floatRefLike(dbias, x.dtype, kernel, "dbias");
  // A broadcast scale is read at the normalised shape (the CPU expands it).
  const Indexer<1> scaleIx = makeIndexer1(
      normShape,
      scale.numel() == n ? contiguousStrides(normShape)
                         : broadcastStrides(scale.shape, normShape, kernel),
      kernel);
  cudaStream_t stream = context(kernel).stream;
  const bool inDouble =
      statisticsInDouble(x.dtype, {meanRef, invRef, dscaleRef, dbiasRef});
  dispatchWithStatistics(x.dtype, inDouble, kernel, [&](auto tag, auto aTag) {
    using T = typename decltype(tag)::type;
    using A = typename decltype(aTag)::type;
    if (n == 0)
      return;
    // Parameter gradients first (column sums over the rows): dx may
    // overwrite dy in place.
    for (int withXhat = 0; withXhat < 2; ++withXhat) {
      const FloatRef out = withXhat ? dscaleRef : dbiasRef;
      if (!out.data)
        continue;
      const LayerNormParamGradLoad<T, A> load{
          x.as<const T>(), dy.as<const T>(), meanRef, invRef, n, withXhat != 0};
      launchReduction<SumOf<A>>(kernel, load, SumOp{}, SumOf<A>{},
                                FloatStore{out}, n, rows, false);
    }
    if (!dx.empty() && rows > 0) {
      const int log2G = log2Lanes(n, kThreads);
      layerNormBackwardKernel<T, A>
          <<<gridFor(rows, kThreads >> log2G), kThreads, 0, stream>>>(
              x.as<const T>(), scale.as<const T>(), scaleIx, meanRef, invRef,
              dy.as<const T>(), dx.as<T>(), rows, n, log2G);
      checkLaunch(kernel);
    }
  });
}

void batchNormTrainingBackward(const TensorView &x, const TensorView &scale,
                               const TensorView &savedMean,
                               const TensorView &savedInvStd,
                               const TensorView &dy, const TensorView &dx,
                               const TensorView &dscale,
                               const TensorView &dbias) {
  const char *kernel = "batchNormTrainingBackward";
  const ChannelExtents e = checkBatchNormBackward(kernel, x, scale, savedMean,
                                                  savedInvStd, dy, dx);
  const int64_t N = e.batch, C = e.channels, spatial = e.spatial;
  if (!dscale.empty())
    requireNumel(dscale, C, kernel, "dscale");
  if (!dbias.empty())
    requireNumel(dbias, C, kernel, "dbias");
  BatchNormBackwardArgs args{floatRef(scale, kernel, "scale"),
                             floatRef(savedMean, kernel, "savedMean"),
                             floatRef(savedInvStd, kernel, "savedInvStd"),
                             floatRef(dscale, kernel, "dscale"),
                             floatRef(dbias, kernel, "dbias")};
  cudaStream_t stream = context(kernel).stream;
  const bool inDouble = statisticsInDouble(
      x.dtype, {args.scale, args.savedMean, args.savedInvStd, args.dscale,
                args.dbias});
  dispatchWithStatistics(x.dtype, inDouble, kernel, [&](auto tag, auto aTag) {
    using T = typename decltype(tag)::type;
    using A = typename decltype(aTag)::type;
    if (C == 0)
      return;
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(C, 65535));
    batchNormBackwardKernel<T, A><<<blocks, kThreads, 0, stream>>>(
        x.as<const T>(), dy.as<const T>(), dx.empty() ? nullptr : dx.as<T>(), N,
        C, spatial, args);
    checkLaunch(kernel);
  });
}

} // namespace remat::rt::cuda
