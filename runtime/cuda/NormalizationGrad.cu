//===- NormalizationGrad.cu - LayerNorm and BatchNorm backward ------------===//
//
// The CUDA versions of runtime/cpu/NormalizationGrad.cpp. With
// xhat = (x - mean) * invStd and g = dy * scale over the m elements sharing
// a mean, dx = invStd * (g - mean(g) - xhat * mean(g * xhat)); dscale and
// dbias sum dy * xhat and dy over everything else. LayerNorm with fp32
// statistics and rows that fit in registers (the transformer case): one
// pass, each row's x and dy read once for dx and for per-block column sums
// of dscale / dbias, which a small column reduction then adds up
// (layerNormBackwardRowsKernel). Otherwise a group of lanes per row for dx,
// then column reductions over the rows (Reduction.cuh) for dscale / dbias.
// BatchNorm: a block per channel does both. As in the forward
// (Normalization.cu), the statistics type A is fp32 with compensated sums,
// or double when the data or an F32/F64 side array is F64.
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
__global__ void __launch_bounds__(kThreads, 1)
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

/// One row's data as layerNormBackwardRowsKernel holds it: x, dy and the
/// statistics.
template <int PER> struct LayerNormGradRow {
  float x[PER][kRowVec], dy[PER][kRowVec];
  float mu, inv;
};

/// LayerNorm backward for rows held in registers (planRows; fp32
/// statistics): one pass over memory. Block b takes rows [b * rowsPerBlock,
/// (b + 1) * rowsPerBlock), its groups of L lanes one row each at a time,
/// with two row buffers so that the next row's loads are in flight during
/// this row's arithmetic. A group reads the row's x and dy once, reduces
/// the row's two sums and writes dx. Each lane also sums dy (dbias) and
/// dy * xhat (dscale) over its rows for its own columns, compensated; when
/// `partial` is set, the block's groups combine those in group order and
/// the block writes them to partial[(2 b) n + column] (dbias) and
/// partial[(2 b + 1) n + column] (dscale), which a column reduction then
/// adds in block order. A row is in registers before its dx is written, so
/// dx may alias dy or x.
template <typename T, int PER>
__global__ void __launch_bounds__(kRowThreads)
    layerNormBackwardRowsKernel(const T *x, const T *scale, FloatRef mean,
                                FloatRef invStdDev, const T *dy,
                                T *dx, int64_t rows, int n, int L,
                                int64_t rowsPerBlock, float *partial) {
  constexpr int V = kRowVec;
  using Sums = SumPair<CompensatedSum>;
  __shared__ Sums buf[kRowThreads / 32];
  const int group = static_cast<int>(threadIdx.x) / L;
  const int lane = static_cast<int>(threadIdx.x) - group * L;
  const int groups = static_cast<int>(blockDim.x) / L;
  const int nVec = n / V;
  const float invN = 1.0f / static_cast<float>(n);

  // This lane's columns: their scale, and the sums over its rows.
  float s[PER][V];
  loadRowVectors<PER>(scale, lane, L, nVec, s);
  CompensatedSum colDy[PER][V], colDyX[PER][V];
#pragma unroll
  for (int k = 0; k < PER; ++k)
#pragma unroll
    for (int e = 0; e < V; ++e) {
      colDy[k][e] = CompensatedSum(0.0f);
      colDyX[k][e] = CompensatedSum(0.0f);
    }

  const int64_t r0 = static_cast<int64_t>(blockIdx.x) * rowsPerBlock;
  const int64_t r1 = r0 + rowsPerBlock < rows ? r0 + rowsPerBlock : rows;
  // Rows from r1 on, and vectors past the row's end, load as zeros: they
  // add zeros to every sum (leaving its value as it was), so the sums below
  // need no per-element conditions.
  auto load = [&](LayerNormGradRow<PER> &row, int64_t r) {
    if (r >= r1) {
      row = LayerNormGradRow<PER>{};
      return;
    }
    loadRowVectors<PER>(x + r * n, lane, L, nVec, row.x);
    loadRowVectors<PER>(dy + r * n, lane, L, nVec, row.dy);
    row.mu = mean.load<float>(r);
    row.inv = invStdDev.load<float>(r);
  };
  // Called by every group (groupReduce synchronises the block when L > 32);
  // rows from r1 on are idle.
  auto backward = [&](const LayerNormGradRow<PER> &row, int64_t r) {
    const bool active = r < r1;
    Sums local{CompensatedSum(0.0f), CompensatedSum(0.0f)};
    float xhat[PER][V];
#pragma unroll
    for (int k = 0; k < PER; ++k)
#pragma unroll
      for (int e = 0; e < V; ++e) {
        xhat[k][e] = (row.x[k][e] - row.mu) * row.inv;
        const float g = row.dy[k][e] * s[k][e];
        local.a += g;
        local.b += g * xhat[k][e];
        colDy[k][e] += row.dy[k][e];
        colDyX[k][e] += row.dy[k][e] * xhat[k][e];
      }
    if (!dx)
      return;
    const Sums total = groupReduce(local, buf, lane, L, SumOp{});
    const float meanG = total.a.value() * invN;
    const float meanGX = total.b.value() * invN;
    if (!active)
      return;
#pragma unroll
    for (int k = 0; k < PER; ++k) {
      const int j = lane + k * L;
      if (j >= nVec)
        continue;
      float out[V];
#pragma unroll
      for (int e = 0; e < V; ++e)
        out[e] = row.inv *
                 (row.dy[k][e] * s[k][e] - meanG - xhat[k][e] * meanGX);
      storeVec<V>(dx + r * n + static_cast<int64_t>(j) * V, out);
    }
  };

  LayerNormGradRow<PER> a{}, b{};
  load(a, r0 + group);
  for (int64_t first = r0; first < r1; first += 2 * groups) {
    const int64_t r = first + group;
    load(b, r + groups);
    backward(a, r);
    if (first + groups >= r1)
      break; // (the same for every group)
    load(a, r + 2 * groups);
    backward(b, r + groups);
  }
  if (!partial)
    return;

  // The groups' column sums, combined in group order by group 0.
  if (groups > 1) {
    __shared__ Sums cols[kRowThreads];
#pragma unroll
    for (int k = 0; k < PER; ++k)
#pragma unroll
      for (int e = 0; e < V; ++e) {
        __syncthreads();
        cols[threadIdx.x] = Sums{colDy[k][e], colDyX[k][e]};
        __syncthreads();
        if (group == 0)
          for (int g = 1; g < groups; ++g) {
            colDy[k][e] += cols[g * L + lane].a;
            colDyX[k][e] += cols[g * L + lane].b;
          }
      }
    if (group != 0)
      return;
  }
  float *outDy = partial + static_cast<int64_t>(2 * blockIdx.x) * n;
  float *outDyX = outDy + n;
#pragma unroll
  for (int k = 0; k < PER; ++k) {
    const int j = lane + k * L;
    if (j >= nVec)
      continue;
    float sumDy[V], sumDyX[V];
#pragma unroll
    for (int e = 0; e < V; ++e) {
      sumDy[e] = colDy[k][e].value();
      sumDyX[e] = colDyX[k][e].value();
    }
    storeVec<V>(outDy + j * V, sumDy);
    storeVec<V>(outDyX + j * V, sumDyX);
  }
}

/// Stores the column sums of layerNormBackwardRowsKernel's partial rows:
/// outputs [0, n) are dbias, [n, 2n) dscale.
struct LayerNormParamStore {
  FloatRef dbias, dscale;
  int64_t n;
  __device__ void operator()(int64_t o, CompensatedSum sum) const {
    if (o < n) {
      if (dbias.data)
        dbias.store(o, sum.value());
    } else if (dscale.data) {
      dscale.store(o - n, sum.value());
    }
  }
};

/// Runs the one-pass LayerNorm backward (layerNormBackwardRowsKernel) when
/// its layout fits: planRows(n), a scale of n elements (not broadcast), the
/// data aligned for 4-element vectors and the workspace holding at least
/// one block's partial sums. Returns false (nothing launched) otherwise.
template <typename T>
bool layerNormBackwardRows(const char *kernel, const TensorView &x,
                           const TensorView &scale, FloatRef meanRef,
                           FloatRef invRef,
                           const TensorView &dy, const TensorView &dx,
                           FloatRef dscaleRef, FloatRef dbiasRef, int64_t rows,
                           int64_t n) {
  // Two warps per row where it fits, at most 4 vectors per lane: the
  // column sums take registers too.
  constexpr int kMaxPer = 4;
  const RowPlan plan = planRows(n, 64, kMaxPer);
  if (!plan.ok || scale.numel() != n)
    return false;
  for (const TensorView *v : {&x, &scale, &dy, &dx})
    if (!vecAligned<T, kRowVec>(v->data))
      return false;
  const bool params = dscaleRef.data || dbiasRef.data;
  if (!params && dx.empty())
    return true; // nothing asked for
  Scratch scratch(kernel);
  int64_t maxBlocks = INT32_MAX;
  if (params) {
    // One row of partial sums per block: at most what the scratch holds.
    const int64_t perBlock = 2 * n * static_cast<int64_t>(sizeof(float));
    maxBlocks =
        static_cast<int64_t>(scratch.available() / 256 * 256) / perBlock;
    if (maxBlocks < 1)
      return false;
  }
  cudaStream_t stream = context(kernel).stream;
  int64_t blocks = 0;
  float *partial = nullptr;
  dispatchPer<kMaxPer>(plan.per, [&](auto perTag) {
    constexpr int PER = decltype(perTag)::value;
    auto *k = &layerNormBackwardRowsKernel<T, PER>;
    // One wave of blocks (fewer partial sums than a block per few rows).
    const int64_t perBlock = rowsPerBlock(
        rows, plan.groups,
        std::min(maxBlocks, residentBlocks(k, plan.threads(), kernel)));
    blocks = (rows + perBlock - 1) / perBlock;
    if (params)
      partial = scratch.take<float>(static_cast<size_t>(blocks * 2 * n));
    k<<<static_cast<unsigned>(blocks), plan.threads(), 0, stream>>>(
        x.as<const T>(), scale.as<const T>(), meanRef, invRef,
        dy.as<const T>(), dx.empty() ? nullptr : dx.as<T>(), rows,
        static_cast<int>(n), plan.lanes, perBlock, partial);
  });
  checkLaunch(kernel);
  if (params)
    launchReduction<CompensatedSum>(
        kernel, PartialLoad<float>{partial, 2 * n}, SumOp{}, CompensatedSum{},
        LayerNormParamStore{dbiasRef, dscaleRef, n}, 2 * n, blocks, false,
        &scratch);
  return true;
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
    if constexpr (std::is_same_v<A, float>)
      if (rows > 0 &&
          layerNormBackwardRows<T>(kernel, x, scale, meanRef, invRef, dy, dx,
                                   dscaleRef, dbiasRef, rows, n))
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
