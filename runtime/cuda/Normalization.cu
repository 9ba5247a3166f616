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
// scratch is needed. Two paths read their input once: contiguous softmax
// rows long enough for a block and short enough for its shared memory (a
// vocabulary of fp32 scores fits an H100's) are cached there
// (softmaxRowCachedKernel), and LayerNorm rows with fp32 statistics are held
// in registers, a warp per row where it fits (layerNormRowsKernel).
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
__global__ void __launch_bounds__(kThreads, 1)
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

/// Rows at least this long (contiguous) get a block each.
constexpr int64_t kBlockRowMin = 512;

/// Softmax of contiguous rows (inner == 1) that fit in shared memory, a
/// block per row: x is read once. The block copies its row into shared
/// memory, taking the max as it goes, then takes the sum of exp(x - max)
/// and the outputs from there, with softmaxKernel's formulas (two passes
/// over the cached row: an online max-and-sum in the copying pass measured
/// slower, its exps and rescaling adding to the copy). Global accesses are
/// 16-byte vectors from the row's first 16-byte boundary on (the cache is
/// shifted to the same alignment), the few elements before it and after
/// the last whole vector scalar; every pass gives each thread the same
/// elements, so a thread reads back only what it wrote. y is vectorised
/// when it has x's alignment.
template <typename T>
__global__ void __launch_bounds__(1024)
    softmaxRowCachedKernel(const T *x, T *y, int64_t rows, int64_t size,
                           bool log) {
  using C = ComputeType<T>;
  constexpr int V = 16 / sizeof(T);
  using P = Vec<T, V>;
  extern __shared__ __align__(16) unsigned char rowCache[];
  __shared__ C maxBuf[32];
  __shared__ SumOf<C> sumBuf[32];
  const int threads = static_cast<int>(blockDim.x);
  const int t = static_cast<int>(threadIdx.x);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *xr = x + r * size;
    T *yr = y + r * size;
    const int misaligned =
        static_cast<int>(reinterpret_cast<uintptr_t>(xr) % 16 / sizeof(T));
    const int toBoundary = (V - misaligned) % V;
    const int head = size < toBoundary ? static_cast<int>(size)
                                       : toBoundary; // before the vectors
    const int64_t vectors = (size - head) / V;
    const int64_t tail = head + vectors * V; // first element after them
    const int scalars = head + static_cast<int>(size - tail);
    // This thread's scalar element (head, then tail), if any.
    const int64_t si = t < head ? t : tail + (t - head);
    T *cache = reinterpret_cast<T *>(rowCache) + (V - head) % V;
    const bool vectorY = reinterpret_cast<uintptr_t>(yr) % 16 ==
                         reinterpret_cast<uintptr_t>(xr) % 16;

    // Copy in, with the max (ignoring NaN, as std::max with the running max
    // first). Four vectors in flight per thread.
    C m = -dInfinity<C>();
    auto take = [&](const P &p) {
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const C c = toCompute(p.e[e]);
        m = m < c ? c : m;
      }
    };
    if (t < scalars) {
      const T v = xr[si];
      cache[si] = v;
      const C c = toCompute(v);
      m = m < c ? c : m;
    }
    int64_t j = t;
    for (; j + 3 * threads < vectors; j += 4 * threads) {
      P p[4];
#pragma unroll
      for (int u = 0; u < 4; ++u)
        p[u] = *reinterpret_cast<const P *>(xr + head + (j + u * threads) * V);
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        *reinterpret_cast<P *>(cache + head + (j + u * threads) * V) = p[u];
        take(p[u]);
      }
    }
    for (; j < vectors; j += threads) {
      const P p = *reinterpret_cast<const P *>(xr + head + j * V);
      *reinterpret_cast<P *>(cache + head + j * V) = p;
      take(p);
    }

    C maxValue = groupReduce(m, maxBuf, t, threads,
                             [](C a, C b) { return a < b ? b : a; });
    if (dIsInf(maxValue)) // all -inf (or +inf present): avoid inf - inf
      maxValue = maxValue > 0 ? maxValue : C(0);
    SumOf<C> partial{};
    if (t < scalars)
      partial += dExp(toCompute(cache[si]) - maxValue);
    for (j = t; j < vectors; j += threads) {
      const P p = *reinterpret_cast<const P *>(cache + head + j * V);
#pragma unroll
      for (int e = 0; e < V; ++e)
        partial += dExp(toCompute(p.e[e]) - maxValue);
    }
    const C sum = sumValue(groupReduce(partial, sumBuf, t, threads, SumOp{}));

    const C logSum = log ? dLog(sum) : C(0);
    const C scale = log ? C(0) : C(1) / sum;
    auto out = [&](T v) {
      return log ? fromCompute<T>((toCompute(v) - maxValue) - logSum)
                 : fromCompute<T>(dExp(toCompute(v) - maxValue) * scale);
    };
    if (t < scalars)
      yr[si] = out(cache[si]);
    for (j = t; j < vectors; j += threads) {
      const P p = *reinterpret_cast<const P *>(cache + head + j * V);
      P q;
#pragma unroll
      for (int e = 0; e < V; ++e)
        q.e[e] = out(p.e[e]);
      if (vectorY) {
        *reinterpret_cast<P *>(yr + head + j * V) = q;
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e)
          yr[head + j * V + e] = q.e[e];
      }
    }
    __syncthreads(); // the next row's copy may shift the cache
  }
}

/// The most dynamic shared memory a block may opt into on this device.
int optInSharedMemory(const char *kernel) {
  int device = 0, bytes = 0;
  checkCuda(cudaGetDevice(&device), kernel, "cudaGetDevice");
  checkCuda(cudaDeviceGetAttribute(
                &bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
            kernel, "cudaDeviceGetAttribute");
  return bytes;
}

/// Runs softmaxRowCachedKernel if the rows are contiguous, long enough and
/// fit in shared memory; false (nothing launched) otherwise.
template <typename T>
bool softmaxRowCached(const char *kernel, const TensorView &x,
                      const TensorView &y, int64_t rows, int64_t size,
                      int64_t inner, bool log) {
  constexpr int V = 16 / sizeof(T);
  if (inner != 1 || size < kBlockRowMin)
    return false;
  // The row, its shift to x's alignment, and the kernel's static buffers.
  const int64_t bytes = (size + V) * static_cast<int64_t>(sizeof(T));
  using C = ComputeType<T>;
  constexpr int64_t kStaticBytes = 32 * (sizeof(C) + sizeof(SumOf<C>));
  if (bytes + kStaticBytes > optInSharedMemory(kernel))
    return false;
  allowSharedMemory(softmaxRowCachedKernel<T>, static_cast<size_t>(bytes),
                    kernel);
  // About four vectors per thread, in whole warps.
  const int64_t vectors = size / V;
  const int threads = static_cast<int>(
      std::clamp<int64_t>((vectors / 4 + 31) / 32 * 32, 64, 1024));
  const unsigned blocks =
      static_cast<unsigned>(std::min<int64_t>(rows, INT32_MAX));
  softmaxRowCachedKernel<T>
      <<<blocks, threads, static_cast<size_t>(bytes), context(kernel).stream>>>(
          x.as<const T>(), y.as<T>(), rows, size, log);
  checkLaunch(kernel);
  return true;
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
    if (softmaxRowCached<T>(kernel, x, y, rows, s.size, s.inner, log))
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

/// LayerNorm for rows held in registers (planRows; fp32 statistics): x is
/// read once. Block b takes rows [b * rowsPerBlock, (b + 1) * rowsPerBlock),
/// its groups of L lanes one row each at a time, with two row buffers so
/// that the next row's loads are in flight during this row's arithmetic;
/// the two-pass mean and variance come from the registers, with
/// layerNormKernel's formulas. Each lane loads the scale and bias of its
/// columns once (both stored at the normalised shape).
template <typename T, int PER>
__global__ void __launch_bounds__(kRowThreads, 1)
    layerNormRowsKernel(const T *x, const T *scale, const T *bias, T *y,
                        FloatRef mean, FloatRef invStdDev, int64_t rows, int n,
                        float epsilon, int L, int64_t rowsPerBlock) {
  constexpr int V = kRowVec;
  __shared__ CompensatedSum buf[kRowThreads / 32];
  const int group = static_cast<int>(threadIdx.x) / L;
  const int lane = static_cast<int>(threadIdx.x) - group * L;
  const int groups = static_cast<int>(blockDim.x) / L;
  const int nVec = n / V;
  const float count = static_cast<float>(n);
  float sc[PER][V], bi[PER][V];
  loadRowVectors<PER>(scale, lane, L, nVec, sc);
  if (bias)
    loadRowVectors<PER>(bias, lane, L, nVec, bi);

  const int64_t r0 = static_cast<int64_t>(blockIdx.x) * rowsPerBlock;
  const int64_t r1 = r0 + rowsPerBlock < rows ? r0 + rowsPerBlock : rows;
  // Rows from r1 on, and vectors past the row's end, load as zeros (adding
  // a zero leaves a compensated sum's value as it was).
  auto load = [&](float(&row)[PER][V], int64_t r) {
    if (r < r1) {
      loadRowVectors<PER>(x + r * n, lane, L, nVec, row);
    } else {
#pragma unroll
      for (int k = 0; k < PER; ++k)
#pragma unroll
        for (int e = 0; e < V; ++e)
          row[k][e] = 0.0f;
    }
  };
  // Called by every group (groupReduce synchronises the block when L > 32);
  // rows from r1 on are idle.
  auto normalise = [&](const float(&row)[PER][V], int64_t r) {
    const bool active = r < r1;
    // Two-pass mean / variance: no cancellation for large means.
    CompensatedSum sum(0.0f);
#pragma unroll
    for (int k = 0; k < PER; ++k)
#pragma unroll
      for (int e = 0; e < V; ++e)
        sum += row[k][e];
    const float mu = groupReduce(sum, buf, lane, L, SumOp{}).value() / count;
    CompensatedSum sq(0.0f);
#pragma unroll
    for (int k = 0; k < PER; ++k) {
      const bool inRow = lane + k * L < nVec; // (zeros past the end)
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const float d = inRow ? row[k][e] - mu : 0.0f;
        sq += d * d;
      }
    }
    const float var = groupReduce(sq, buf, lane, L, SumOp{}).value() / count;
    if (!active)
      return;
    const float inv = 1.0f / sqrtf(var + epsilon);
#pragma unroll
    for (int k = 0; k < PER; ++k) {
      const int j = lane + k * L;
      if (j >= nVec)
        continue;
      float out[V];
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const float v = (row[k][e] - mu) * inv * sc[k][e];
        out[e] = bias ? v + bi[k][e] : v;
      }
      storeVec<V>(y + r * n + static_cast<int64_t>(j) * V, out);
    }
    if (lane == 0) {
      if (mean.data)
        mean.store(r, mu);
      if (invStdDev.data)
        invStdDev.store(r, inv);
    }
  };

  float a[PER][V] = {}, b[PER][V] = {};
  load(a, r0 + group);
  for (int64_t first = r0; first < r1; first += 2 * groups) {
    const int64_t r = first + group;
    load(b, r + groups);
    normalise(a, r);
    if (first + groups >= r1)
      break; // (the same for every group)
    load(a, r + 2 * groups);
    normalise(b, r + groups);
  }
}

/// Runs layerNormRowsKernel when its layout fits (planRows(n); x, y, scale
/// and bias aligned for 4-element vectors, scale and bias not broadcast);
/// false (nothing launched) otherwise.
template <typename T>
bool layerNormRows(const char *kernel, const TensorView &x,
                   const TensorView &scale, const TensorView &bias,
                   const TensorView &y, FloatRef meanRef, FloatRef invRef,
                   int64_t rows, int64_t n, float epsilon) {
  constexpr int kMaxPer = 8;
  // A warp per row where it fits: shuffles only, and (measured on an H200
  // at GPT-2's 768) more rows in flight than wider groups.
  const RowPlan plan = planRows(n, 32, kMaxPer);
  if (!plan.ok || scale.numel() != n || (!bias.empty() && bias.numel() != n))
    return false;
  for (const TensorView *v : {&x, &y, &scale, &bias})
    if (!vecAligned<T, kRowVec>(v->data))
      return false;
  cudaStream_t stream = context(kernel).stream;
  dispatchPer<kMaxPer>(plan.per, [&](auto perTag) {
    constexpr int PER = decltype(perTag)::value;
    auto *k = &layerNormRowsKernel<T, PER>;
    const int64_t perBlock = rowsPerBlock(
        rows, plan.groups, residentBlocks(k, plan.threads(), kernel));
    k<<<static_cast<unsigned>((rows + perBlock - 1) / perBlock),
        plan.threads(), 0, stream>>>(
        x.as<const T>(), scale.as<const T>(),
        bias.empty() ? nullptr : bias.as<const T>(), y.as<T>(), meanRef,
        invRef, rows, static_cast<int>(n), epsilon, plan.lanes, perBlock);
  });
  checkLaunch(kernel);
  return true;
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
    if constexpr (std::is_same_v<A, float>)
      if (layerNormRows<T>(kernel, x, scale, bias, y, meanRef, invRef, rows,
                           n, static_cast<float>(epsilon)))
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
