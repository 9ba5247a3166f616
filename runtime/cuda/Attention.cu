//===- Attention.cu - Fused attention forward (FlashAttention-2) ----------===//
//
// One block per (batch, query head, tile of kBlockRows query rows); each
// quad of threads owns one query row (Attention.cuh). The block walks the
// keys in tiles of kStageRows, staging K and V in shared memory, and keeps
// per row a running maximum m, a running sum l of exp(score - m) and the
// unnormalised output in registers (online softmax), rescaling them when the
// maximum grows. So the Sq x Sk scores never exist, in memory or in full in
// registers. With `causal`, key tiles wholly above the diagonal are not
// visited. A row whose keys are all hidden keeps l = 0: output 0,
// logsumexp -inf.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Attention.cuh"

namespace remat::rt::cuda {
using namespace detail;

namespace {

template <typename T, int kMaxD>
__global__ void __launch_bounds__(kAttentionThreads)
    attentionForwardKernel(AttentionArgs<T> a, T *out, Acc<T> *logsumexp) {
  using A = Acc<T>;
  constexpr int kSlice = kMaxD / kLanes;
  static_assert(kMaxD % (4 * kLanes) == 0, "sliceElement's chunks");
  extern __shared__ __align__(16) unsigned char sharedBytes[];
  A *keyTile = reinterpret_cast<A *>(sharedBytes);
  A *valueTile = keyTile + kStageRows * kMaxD;

  const int lane = threadIdx.x % kLanes;
  const int64_t tiles = (a.querySeq + kBlockRows - 1) / kBlockRows;
  const int64_t bh = blockIdx.x / tiles; // b * Hq + h
  const int64_t b = bh / a.queryHeads, h = bh % a.queryHeads;
  const int64_t kvHead = b * a.kvHeads + h / (a.queryHeads / a.kvHeads);
  const int64_t firstRow = (blockIdx.x % tiles) * kBlockRows;
  const int64_t i = firstRow + threadIdx.x / kLanes;
  const bool rowValid = i < a.querySeq;
  const uint64_t step = a.dropout ? *a.step : 0;

  A q[kSlice];
  loadSlice<kSlice>(q, a.q + (bh * a.querySeq + i) * a.headDim, a.headDim,
                    rowValid, lane);
  A o[kSlice];
#pragma unroll
  for (int c = 0; c < kSlice; ++c)
    o[c] = 0;
  A m = -dInfinity<A>(), l = 0;

  const T *keys = a.k + kvHead * a.keySeq * a.headDim;
  const T *values = a.v + kvHead * a.keySeq * a.valueDim;
  // Causal: no row of this tile sees a key past its last row.
  const int64_t keyEnd = visibleKeyEnd(a, firstRow);
  for (int64_t firstKey = 0; firstKey < keyEnd; firstKey += kStageRows) {
    __syncthreads(); // the previous tile is consumed
    stageRows<kStageRows, kMaxD>(keyTile, keys, firstKey, a.keySeq,
                                 a.headDim);
    stageRows<kStageRows, kMaxD>(valueTile, values, firstKey, a.keySeq,
                                 a.valueDim);
    __syncthreads();

    A s[kStageRows];
    A tileMax = -dInfinity<A>();
#pragma unroll
    for (int t = 0; t < kStageRows; ++t) {
      const A dot = quadSum(sliceDot(q, keyTile + t * kMaxD, lane));
      s[t] = attentionScore(a, dot, b, h, i, firstKey + t, rowValid);
      tileMax = s[t] > tileMax ? s[t] : tileMax;
    }
    uint32_t keep = 0xffffffffu;
    if (a.dropout)
      keep = quadKeepBits(a, step, (bh * a.querySeq + i) * a.keySeq + firstKey,
                          1, rowValid ? a.keySeq - firstKey : 0, lane);

    const A mNew = m > tileMax ? m : tileMax;
    // With every key so far hidden, subtract 0 instead of -inf (no NaN).
    const A shift = mNew == -dInfinity<A>() ? A(0) : mNew;
    const A rescale = dExp(m - shift); // 0 while m is -inf
    l *= rescale;
#pragma unroll
    for (int c = 0; c < kSlice; ++c)
      o[c] *= rescale;
#pragma unroll
    for (int t = 0; t < kStageRows; ++t) {
      const A p = dExp(s[t] - shift);
      l += p;
      // Dropout scales what reaches the output, not the normaliser.
      const A pv = a.dropout ? ((keep >> t) & 1u ? p * a.keepScale : A(0)) : p;
#pragma unroll
      for (int c = 0; c < kSlice; ++c)
        o[c] = fma_(pv, valueTile[t * kMaxD + sliceElement(lane, c)], o[c]);
    }
    m = mNew;
  }

  if (!rowValid)
    return;
  const A inverse = l > 0 ? A(1) / l : A(0);
  storeSlice<kSlice>(out + (bh * a.querySeq + i) * a.valueDim, o, inverse,
                     a.valueDim, lane);
  // logsumexp is absent when nothing differentiates this op.
  if (lane == 0 && logsumexp != nullptr)
    logsumexp[bh * a.querySeq + i] = l > 0 ? m + dLog(l) : -dInfinity<A>();
}

} // namespace

void attention(const TensorView &q, const TensorView &k, const TensorView &v,
               const TensorView &mask, const TensorView &out,
               const TensorView &logsumexp, double scale, bool causal,
               double dropoutRatio, uint64_t seed, uint64_t streamId,
               DropoutStep step) {
  const char *kernel = "attention";
  const common::AttentionDims d = common::checkAttention(
      kernel, q, k, v, mask, out, logsumexp, scale, dropoutRatio);
  cudaStream_t stream = context(kernel).stream;
  dispatchAttentionDType(q.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    AttentionArgs<T> a =
        attentionArgs<T>(d, kernel, q, k, v, mask, scale, causal);
    setDropout(a, kernel, dropoutRatio, seed, streamId, step);
    const int64_t rows = a.batch * a.queryHeads;
    if (rows == 0 || a.querySeq == 0 || a.valueDim == 0)
      return;
    const int64_t blocks =
        rows * ((a.querySeq + kBlockRows - 1) / kBlockRows);
    require(blocks <= 0x7fffffff, kernel, "too many query tiles for one grid");
    if (attentionForwardFast(a, out.as<T>(), logsumexp.as<Acc<T>>(), stream))
      return;
    dispatchHeadDim(std::max(a.headDim, a.valueDim), kernel, [&](auto maxD) {
      constexpr int kMaxD = decltype(maxD)::value;
      const size_t shared = 2 * kStageRows * kMaxD * sizeof(Acc<T>);
      auto *f = attentionForwardKernel<T, kMaxD>;
      allowSharedMemory(f, shared, kernel);
      f<<<static_cast<unsigned>(blocks), kAttentionThreads, shared, stream>>>(
          a, out.as<T>(), logsumexp.as<Acc<T>>());
      checkLaunch(kernel);
    });
  });
}

} // namespace remat::rt::cuda
