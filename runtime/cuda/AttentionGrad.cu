//===- AttentionGrad.cu - Fused attention backward (FlashAttention-2) -----===//
//
// Three kernels, none with atomics (deterministic):
//  1. rowDot: D[row] = sum(dout * out) per query row, into workspace scratch
//     (B * Hq * Sq accumulators: float, double for F64);
//  2. key/value gradients: one block per (batch, kv head, tile of kBlockRows
//     keys), a quad per key row holding k, v, dk and dv in registers; it
//     walks the query heads of its group in order and their queries in
//     staged tiles, recomputing P = exp(score - logsumexp) (the forward's
//     logsumexp makes it exact, no rescaling), and accumulates
//     dv += P_dropped * dout and dk += dS * q with dS = P * (dP - D);
//  3. query gradients: one block per (batch, query head, tile of query
//     rows), walking key tiles like the forward, dq += dS * k.
// Splitting dk/dv from dq recomputes P twice but lets each gradient row
// have a single writer instead of float atomics. Causal tiles that see
// nothing are skipped in both.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Attention.cuh"

namespace remat::rt::cuda {
using namespace detail;

namespace {

/// Lanes sharing one row in rowDotKernel: a row of 64 elements is one
/// coalesced read per operand, and two rows share a warp.
constexpr int kRowDotLanes = 16;

/// D[r] = dout[r, :] . out[r, :] in the accumulation type. kRowDotLanes
/// lanes per row, each summing a strided share, combined by shuffles in a
/// fixed order (deterministic).
template <typename T>
__global__ void rowDotKernel(const T *dout, const T *out, Acc<T> *rowDot,
                             int64_t rows, int64_t dim) {
  const int lane = threadIdx.x % kRowDotLanes;
  const int64_t groups = static_cast<int64_t>(gridDim.x) * blockDim.x /
                         kRowDotLanes;
  // Every lane of a warp runs the same number of iterations (whole warps
  // per stride, rows past the end computed as empty), so the shuffles
  // below always have all 32 lanes.
  const int64_t first =
      (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) /
      kRowDotLanes;
  const int64_t iterations = (rows + groups - 1) / groups;
  for (int64_t it = 0; it < iterations; ++it) {
    const int64_t r = first + it * groups;
    Acc<T> sum = 0;
    if (r < rows)
      for (int64_t d = lane; d < dim; d += kRowDotLanes)
        sum = fma_(toAcc(dout[r * dim + d]), toAcc(out[r * dim + d]), sum);
#pragma unroll
    for (int offset = kRowDotLanes / 2; offset > 0; offset /= 2)
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (r < rows && lane == 0)
      rowDot[r] = sum;
  }
}

/// The probability of a staged (query, key) pair from its score and the
/// row's logsumexp: 0 for a hidden pair (also when the whole row is).
template <typename A> __device__ inline A recomputedProbability(A s, A lse) {
  return s == -dInfinity<A>() ? A(0) : dExp(s - lse);
}

template <typename T, int kMaxD>
__global__ void __launch_bounds__(kAttentionThreads)
    attentionKeyValueGradKernel(AttentionArgs<T> a, const T *dout,
                                const Acc<T> *logsumexp, const Acc<T> *rowDot,
                                T *dk, T *dv) {
  using A = Acc<T>;
  constexpr int kSlice = kMaxD / kLanes;
  static_assert(kMaxD % (4 * kLanes) == 0, "sliceElement's chunks");
  extern __shared__ __align__(16) unsigned char sharedBytes[];
  A *queryTile = reinterpret_cast<A *>(sharedBytes);
  A *doutTile = queryTile + kStageRows * kMaxD;
  A *lseTile = doutTile + kStageRows * kMaxD;
  A *rowDotTile = lseTile + kStageRows;

  const int lane = threadIdx.x % kLanes;
  const int64_t tiles = (a.keySeq + kBlockRows - 1) / kBlockRows;
  const int64_t bkv = blockIdx.x / tiles; // b * Hkv + kv head
  const int64_t b = bkv / a.kvHeads, kvHead = bkv % a.kvHeads;
  const int64_t group = a.queryHeads / a.kvHeads;
  const int64_t firstKey = (blockIdx.x % tiles) * kBlockRows;
  const int64_t j = firstKey + threadIdx.x / kLanes;
  const bool keyValid = j < a.keySeq;
  const uint64_t step = a.dropout ? *a.step : 0;

  A k[kSlice], v[kSlice], dkAcc[kSlice], dvAcc[kSlice];
  loadSlice<kSlice>(k, a.k + (bkv * a.keySeq + j) * a.headDim, a.headDim,
                    keyValid, lane);
  loadSlice<kSlice>(v, a.v + (bkv * a.keySeq + j) * a.valueDim, a.valueDim,
                    keyValid, lane);
#pragma unroll
  for (int c = 0; c < kSlice; ++c)
    dkAcc[c] = dvAcc[c] = 0;

  // Causal: queries before the tile's first key see none of its keys.
  const int64_t queryBegin = a.causal ? firstKey : 0;
  // The group's query heads in a fixed order: a deterministic sum.
  for (int64_t g = 0; g < group; ++g) {
    const int64_t h = kvHead * group + g;
    const int64_t bh = b * a.queryHeads + h;
    const T *queries = a.q + bh * a.querySeq * a.headDim;
    const T *douts = dout + bh * a.querySeq * a.valueDim;
    for (int64_t firstQuery = queryBegin; firstQuery < a.querySeq;
         firstQuery += kStageRows) {
      __syncthreads(); // the previous tile is consumed
      stageRows<kStageRows, kMaxD>(queryTile, queries, firstQuery, a.querySeq,
                                   a.headDim);
      stageRows<kStageRows, kMaxD>(doutTile, douts, firstQuery, a.querySeq,
                                   a.valueDim);
      if (threadIdx.x < kStageRows) {
        const int64_t i = firstQuery + threadIdx.x;
        const bool valid = i < a.querySeq;
        lseTile[threadIdx.x] =
            valid ? logsumexp[bh * a.querySeq + i] : -dInfinity<A>();
        rowDotTile[threadIdx.x] = valid ? rowDot[bh * a.querySeq + i] : A(0);
      }
      __syncthreads();

      uint32_t keep = 0xffffffffu;
      if (a.dropout)
        keep = quadKeepBits(a, step, (bh * a.querySeq + firstQuery) * a.keySeq +
                                         j,
                            a.keySeq, keyValid ? a.querySeq - firstQuery : 0,
                            lane);
      for (int t = 0; t < kStageRows; ++t) {
        const int64_t i = firstQuery + t;
        const A *qRow = queryTile + t * kMaxD;
        const A *doutRow = doutTile + t * kMaxD;
        const A dot = quadSum(sliceDot(k, qRow, lane));
        const A s = attentionScore(a, dot, b, h, i, j, keyValid);
        const A p = recomputedProbability(s, lseTile[t]);
        A dp = quadSum(sliceDot(v, doutRow, lane)); // dout . v
        A pv = p;                                   // what reached out
        if (a.dropout) {
          const bool kept = (keep >> t) & 1u;
          pv = kept ? p * a.keepScale : A(0);
          dp = kept ? dp * a.keepScale : A(0);
        }
        const A ds = p * (dp - rowDotTile[t]);
#pragma unroll
        for (int c = 0; c < kSlice; ++c) {
          dvAcc[c] = fma_(pv, doutRow[sliceElement(lane, c)], dvAcc[c]);
          dkAcc[c] = fma_(ds, qRow[sliceElement(lane, c)], dkAcc[c]);
        }
      }
    }
  }

  if (!keyValid)
    return;
  if (dk != nullptr)
    storeSlice<kSlice>(dk + (bkv * a.keySeq + j) * a.headDim, dkAcc, a.scale,
                       a.headDim, lane);
  if (dv != nullptr)
    storeSlice<kSlice>(dv + (bkv * a.keySeq + j) * a.valueDim, dvAcc, A(1),
                       a.valueDim, lane);
}

template <typename T, int kMaxD>
__global__ void __launch_bounds__(kAttentionThreads)
    attentionQueryGradKernel(AttentionArgs<T> a, const T *dout,
                             const Acc<T> *logsumexp, const Acc<T> *rowDot,
                             T *dq) {
  using A = Acc<T>;
  constexpr int kSlice = kMaxD / kLanes;
  static_assert(kMaxD % (4 * kLanes) == 0, "sliceElement's chunks");
  extern __shared__ __align__(16) unsigned char sharedBytes[];
  A *keyTile = reinterpret_cast<A *>(sharedBytes);
  A *valueTile = keyTile + kStageRows * kMaxD;

  const int lane = threadIdx.x % kLanes;
  const int64_t tiles = (a.querySeq + kBlockRows - 1) / kBlockRows;
  const int64_t bh = blockIdx.x / tiles;
  const int64_t b = bh / a.queryHeads, h = bh % a.queryHeads;
  const int64_t kvHead = b * a.kvHeads + h / (a.queryHeads / a.kvHeads);
  const int64_t firstRow = (blockIdx.x % tiles) * kBlockRows;
  const int64_t i = firstRow + threadIdx.x / kLanes;
  const bool rowValid = i < a.querySeq;
  const uint64_t step = a.dropout ? *a.step : 0;

  A q[kSlice], doutRow[kSlice], dqAcc[kSlice];
  loadSlice<kSlice>(q, a.q + (bh * a.querySeq + i) * a.headDim, a.headDim,
                    rowValid, lane);
  loadSlice<kSlice>(doutRow, dout + (bh * a.querySeq + i) * a.valueDim,
                    a.valueDim, rowValid, lane);
#pragma unroll
  for (int c = 0; c < kSlice; ++c)
    dqAcc[c] = 0;
  const A lse = rowValid ? logsumexp[bh * a.querySeq + i] : -dInfinity<A>();
  const A rowD = rowValid ? rowDot[bh * a.querySeq + i] : A(0);

  const T *keys = a.k + kvHead * a.keySeq * a.headDim;
  const T *values = a.v + kvHead * a.keySeq * a.valueDim;
  const int64_t keyEnd = visibleKeyEnd(a, firstRow);
  for (int64_t firstKey = 0; firstKey < keyEnd; firstKey += kStageRows) {
    __syncthreads();
    stageRows<kStageRows, kMaxD>(keyTile, keys, firstKey, a.keySeq,
                                 a.headDim);
    stageRows<kStageRows, kMaxD>(valueTile, values, firstKey, a.keySeq,
                                 a.valueDim);
    __syncthreads();

    uint32_t keep = 0xffffffffu;
    if (a.dropout)
      keep = quadKeepBits(a, step, (bh * a.querySeq + i) * a.keySeq + firstKey,
                          1, rowValid ? a.keySeq - firstKey : 0, lane);
#pragma unroll 4
    for (int t = 0; t < kStageRows; ++t) {
      const A *kRow = keyTile + t * kMaxD;
      const A dot = quadSum(sliceDot(q, kRow, lane));
      const A s = attentionScore(a, dot, b, h, i, firstKey + t, rowValid);
      const A p = recomputedProbability(s, lse);
      A dp = quadSum(sliceDot(doutRow, valueTile + t * kMaxD, lane));
      if (a.dropout)
        dp = (keep >> t) & 1u ? dp * a.keepScale : A(0);
      const A ds = p * (dp - rowD);
#pragma unroll
      for (int c = 0; c < kSlice; ++c)
        dqAcc[c] = fma_(ds, kRow[sliceElement(lane, c)], dqAcc[c]);
    }
  }

  if (!rowValid)
    return;
  storeSlice<kSlice>(dq + (bh * a.querySeq + i) * a.headDim, dqAcc, a.scale,
                     a.headDim, lane);
}

unsigned blockCount(int64_t blocks, const char *kernel) {
  require(blocks <= 0x7fffffff, kernel, "too many tiles for one grid");
  return static_cast<unsigned>(blocks);
}

} // namespace

void attentionBackward(const TensorView &q, const TensorView &k,
                       const TensorView &v, const TensorView &mask,
                       const TensorView &out, const TensorView &logsumexp,
                       const TensorView &dout, const TensorView &dq,
                       const TensorView &dk, const TensorView &dv,
                       double scale, bool causal, double dropoutRatio,
                       uint64_t seed, uint64_t streamId, DropoutStep step) {
  const char *kernel = "attentionBackward";
  // dq, dk and dv are each absent (empty) when nothing reads that gradient.
  const common::AttentionDims d = common::checkAttentionBackward(
      kernel, q, k, v, mask, out, logsumexp, dout, dq, dk, dv, scale,
      dropoutRatio);
  cudaStream_t stream = context(kernel).stream;
  dispatchAttentionDType(q.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = Acc<T>;
    AttentionArgs<T> a =
        attentionArgs<T>(d, kernel, q, k, v, mask, scale, causal);
    setDropout(a, kernel, dropoutRatio, seed, streamId, step);

    // With no query rows or no keys, nothing reaches the gradients.
    const int64_t queryRows = a.batch * a.queryHeads * a.querySeq;
    if (queryRows == 0 || a.keySeq == 0) {
      zeroAsync(dq.data, dq.bytes(), kernel);
      zeroAsync(dk.data, dk.bytes(), kernel);
      zeroAsync(dv.data, dv.bytes(), kernel);
      return;
    }
    Scratch scratch(kernel);
    A *rowDot = scratch.take<A>(static_cast<size_t>(queryRows));
    rowDotKernel<T><<<gridFor(queryRows * kRowDotLanes), kThreads, 0,
                      stream>>>(
        dout.as<const T>(), out.as<const T>(), rowDot, queryRows, a.valueDim);
    checkLaunch(kernel);
    if (attentionBackwardFast(a, dout.as<const T>(), logsumexp.as<const A>(),
                              rowDot, dq.as<T>(), dk.as<T>(), dv.as<T>(),
                              stream))
      return;

    dispatchHeadDim(std::max(a.headDim, a.valueDim), kernel, [&](auto maxD) {
      constexpr int kMaxD = decltype(maxD)::value;
      const A *lse = logsumexp.as<const A>();

      const size_t kvShared = (2 * kStageRows * kMaxD + 2 * kStageRows) * sizeof(A);
      auto *kvKernel = attentionKeyValueGradKernel<T, kMaxD>;
      if (!dk.empty() || !dv.empty()) {
        allowSharedMemory(kvKernel, kvShared, kernel);
        const int64_t kvBlocks = a.batch * a.kvHeads *
                                 ((a.keySeq + kBlockRows - 1) / kBlockRows);
        kvKernel<<<blockCount(kvBlocks, kernel), kAttentionThreads, kvShared,
                   stream>>>(a, dout.as<const T>(), lse, rowDot, dk.as<T>(),
                             dv.as<T>());
        checkLaunch(kernel);
      }

      const size_t qShared = 2 * kStageRows * kMaxD * sizeof(A);
      auto *qKernel = attentionQueryGradKernel<T, kMaxD>;
      if (!dq.empty()) {
        allowSharedMemory(qKernel, qShared, kernel);
        const int64_t qBlocks = a.batch * a.queryHeads *
                                ((a.querySeq + kBlockRows - 1) / kBlockRows);
        qKernel<<<blockCount(qBlocks, kernel), kAttentionThreads, qShared,
                  stream>>>(a, dout.as<const T>(), lse, rowDot, dq.as<T>());
        checkLaunch(kernel);
      }
    });
  });
}

} // namespace remat::rt::cuda
