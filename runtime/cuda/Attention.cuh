//===- Attention.cuh - Shared pieces of the fused attention kernels -*- CUDA
//-*-===//
//
// The forward (Attention.cu) and backward (AttentionGrad.cu) kernels share
// one thread layout: a *quad* of four consecutive threads owns one row (a
// query, or in the key/value-gradient kernel a key), each thread holding a
// quarter of the row's head dimension in registers, in interleaved chunks of
// four (sliceElement). A dot product is four partial sums combined with two
// shuffles, so the quad's threads hold bitwise the same score and take the
// same softmax decisions without exchanging anything else. The other
// operand's rows are staged in shared memory, converted once to the
// accumulation type (float; double for F64 inputs).
//
// Every sum runs in a fixed order and every output element has one writer
// (no atomics), so two runs are bitwise equal.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CUDA_ATTENTION_CUH
#define REMAT_RUNTIME_CUDA_ATTENTION_CUH

#include "remat/runtime/Philox.h"

#include "Common.cuh"

#include "common/AttentionChecks.h"
#include "common/Strides.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace remat::rt::cuda::detail {

//===----------------------------------------------------------------------===//
// Tiling
//===----------------------------------------------------------------------===//

/// Threads sharing one row (a quad).
constexpr int kLanes = 4;
/// Rows owned by one block (64 rows x 4 lanes = 256 threads).
constexpr int kBlockRows = 64;
constexpr int kAttentionThreads = kBlockRows * kLanes;
/// Rows of the other operand staged in shared memory per step; 32 keeps a
/// tile's scores (or dropout bits) in one register array / one 32-bit word.
constexpr int kStageRows = 32;
/// The largest head size (of query/key and of value) the kernels take.
constexpr int kMaxHeadDim = 128;

/// The head-dimension index of a thread's c-th register element: lane l
/// owns d = 16 * (c / 4) + 4 * l + c % 4, so each thread reads 16 contiguous
/// bytes of a staged row (vector loads) and a quad 64 contiguous bytes (no
/// shared-memory bank conflicts). Head-size bounds are multiples of 16.
__host__ __device__ constexpr int sliceElement(int lane, int c) {
  return (c / 4) * (4 * kLanes) + 4 * lane + c % 4;
}

//===----------------------------------------------------------------------===//
// Element types: F32, F64, and F16/BF16 storage with float accumulation.
//===----------------------------------------------------------------------===//

template <typename T> struct AccumulatorOf { using type = float; };
template <> struct AccumulatorOf<double> { using type = double; };
template <typename T> using Acc = typename AccumulatorOf<T>::type;

__device__ inline float toAcc(float v) { return v; }
__device__ inline double toAcc(double v) { return v; }
__device__ inline float toAcc(__half v) { return __half2float(v); }
__device__ inline float toAcc(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ inline T fromAcc(Acc<T> v) {
  if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(v);
  else
    return v;
}

/// Explicit fused multiply-adds: the runtime is compiled with --fmad=false
/// (elementwise kernels round like the CPU), but attention is GEMM-like and
/// its results are compared with a tolerance anyway.
__device__ inline float fma_(float a, float b, float c) { return fmaf(a, b, c); }
__device__ inline double fma_(double a, double b, double c) {
  return fma(a, b, c);
}

/// Calls f(Tag<T>{}) for the storage type of `dtype`.
template <typename F>
void dispatchAttentionDType(DType dtype, const char *kernel, F &&f) {
  switch (dtype) {
  case DType::F32: f(Tag<float>{}); return;
  case DType::F64: f(Tag<double>{}); return;
  case DType::F16: f(Tag<__half>{}); return;
  case DType::BF16: f(Tag<__nv_bfloat16>{}); return;
  default: unsupportedDType(kernel, dtype);
  }
}

/// Calls f(std::integral_constant<int, kMaxD>{}) with the smallest compiled
/// head-size bound >= dim (registers per thread grow with it).
template <typename F>
void dispatchHeadDim(int64_t dim, const char *kernel, F &&f) {
  if (dim <= 32)
    f(std::integral_constant<int, 32>{});
  else if (dim <= 64)
    f(std::integral_constant<int, 64>{});
  else if (dim <= kMaxHeadDim)
    f(std::integral_constant<int, kMaxHeadDim>{});
  else
    fail(kernel, "head size " + std::to_string(dim) +
                     " is above the CUDA kernels' maximum of " +
                     std::to_string(kMaxHeadDim));
}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

/// Shapes, mask and dropout of one call, shared by all kernels (by value).
template <typename T> struct AttentionArgs {
  const T *q, *k, *v;
  const T *mask; // null without a mask
  int64_t batch, queryHeads, kvHeads, querySeq, keySeq, headDim, valueDim;
  /// Element strides of the mask broadcast to [B, Hq, Sq, Sk] (0 along
  /// broadcast dims), so it is read in place.
  int64_t maskStride[4];
  Acc<T> scale;
  bool causal;
  bool dropout;
  PhiloxKey dropoutKey;
  uint64_t dropoutThreshold;
  Acc<T> keepScale; // 1 / (1 - ratio)
  const uint64_t *step;
};

/// The kernels' arguments for operands that common::checkAttention or
/// checkAttentionBackward (runtime/common/AttentionChecks.h, shared with the
/// CPU kernel) has accepted; without dropout.
template <typename T>
AttentionArgs<T> attentionArgs(const common::AttentionDims &d,
                               const char *kernel, const TensorView &q,
                               const TensorView &k, const TensorView &v,
                               const TensorView &mask, double scale,
                               bool causal) {
  AttentionArgs<T> a{};
  a.q = q.as<const T>();
  a.k = k.as<const T>();
  a.v = v.as<const T>();
  a.batch = d.batch;
  a.queryHeads = d.queryHeads;
  a.kvHeads = d.keyValueHeads;
  a.querySeq = d.querySeq;
  a.keySeq = d.keySeq;
  a.headDim = d.headDim;
  a.valueDim = d.valueDim;
  if (!mask.empty()) {
    const Strides strides = broadcastStrides(mask.shape, d.scores(), kernel);
    for (int dim = 0; dim < 4; ++dim)
      a.maskStride[dim] = strides[dim];
    a.mask = mask.as<const T>();
  }
  a.scale = static_cast<Acc<T>>(scale);
  a.causal = causal;
  return a;
}

/// Adds dropout (ratio in [0, 1)) to `a`, keyed as remat.dropout.
template <typename T>
void setDropout(AttentionArgs<T> &a, const char *kernel, double ratio,
                uint64_t seed, uint64_t streamId, const uint64_t *step) {
  if (ratio == 0)
    return;
  require(step != nullptr, kernel, "the step pointer is null");
  a.dropout = true;
  a.dropoutKey = dropoutKey(seed, streamId);
  a.dropoutThreshold = dropoutThreshold(1.0 - ratio);
  a.keepScale = static_cast<Acc<T>>(1.0 / (1.0 - ratio));
  a.step = step;
}

//===----------------------------------------------------------------------===//
// Device helpers
//===----------------------------------------------------------------------===//

/// The sum of the quad's four partial sums, bitwise equal in all four
/// threads (IEEE addition is commutative). Every thread of the warp must
/// call it.
template <typename A> __device__ inline A quadSum(A v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  v += __shfl_xor_sync(0xffffffffu, v, 2);
  return v;
}

/// This thread's share of the dot product of a register slice with a staged
/// row.
template <int kSlice, typename A>
__device__ inline A sliceDot(const A (&slice)[kSlice], const A *row,
                             int lane) {
  A sum = 0;
#pragma unroll
  for (int c = 0; c < kSlice; ++c)
    sum = fma_(slice[c], row[sliceElement(lane, c)], sum);
  return sum;
}

/// Loads this thread's slice of a global row of `dim` elements (zero past
/// dim, or everywhere if the row does not exist).
template <int kSlice, typename T>
__device__ inline void loadSlice(Acc<T> (&slice)[kSlice], const T *row,
                                 int64_t dim, bool valid, int lane) {
#pragma unroll
  for (int c = 0; c < kSlice; ++c) {
    const int d = sliceElement(lane, c);
    slice[c] = valid && d < dim ? toAcc(row[d]) : Acc<T>(0);
  }
}

/// Writes this thread's slice of a global row (times `factor`).
template <int kSlice, typename T>
__device__ inline void storeSlice(T *row, const Acc<T> (&slice)[kSlice],
                                  Acc<T> factor, int64_t dim, int lane) {
#pragma unroll
  for (int c = 0; c < kSlice; ++c) {
    const int d = sliceElement(lane, c);
    if (d < dim)
      row[d] = fromAcc<T>(slice[c] * factor);
  }
}

/// Copies rows [first, first + kRows) of a row-major [rows, dim] matrix
/// into `tile` ([kRows][kMaxD], accumulation type), zero past rows and dim.
/// Consecutive threads read consecutive elements (coalesced).
template <int kRows, int kMaxD, typename T>
__device__ inline void stageRows(Acc<T> *tile, const T *matrix, int64_t first,
                                 int64_t rows, int64_t dim) {
  for (int idx = threadIdx.x; idx < kRows * kMaxD; idx += blockDim.x) {
    const int r = idx / kMaxD, d = idx % kMaxD;
    const int64_t row = first + r;
    tile[idx] = row < rows && d < dim ? toAcc(matrix[row * dim + d])
                                      : Acc<T>(0);
  }
}

/// The score of query i against key j (scale * dot + mask), or -inf where
/// the pair is hidden (key past the sequence, causal j > i, row absent).
template <typename T>
__device__ inline Acc<T> attentionScore(const AttentionArgs<T> &a,
                                        Acc<T> dot, int64_t b, int64_t h,
                                        int64_t i, int64_t j, bool visible) {
  if (!visible || j >= a.keySeq || i >= a.querySeq || (a.causal && j > i))
    return -dInfinity<Acc<T>>();
  Acc<T> s = dot * a.scale;
  if (a.mask)
    s += toAcc(a.mask[b * a.maskStride[0] + h * a.maskStride[1] +
                      i * a.maskStride[2] + j * a.maskStride[3]]);
  return s;
}

/// The end of the keys that query rows [firstRow, firstRow + kBlockRows) can
/// see: with `causal`, none past the last row.
template <typename T>
__device__ inline int64_t visibleKeyEnd(const AttentionArgs<T> &a,
                                        int64_t firstRow) {
  const int64_t lastRow = firstRow + kBlockRows - 1;
  return a.causal && lastRow + 1 < a.keySeq ? lastRow + 1 : a.keySeq;
}

/// The dropout keep bits of kStageRows consecutive elements along one axis
/// of the [B, Hq, Sq, Sk] probabilities: bit t for element first + t *
/// stride (t < count), drawn exactly as remat.dropout draws element index
/// `first + t * stride`. Each lane of the quad draws a quarter; the quad
/// then shares them, so all four threads return the same word.
template <typename T>
__device__ inline uint32_t quadKeepBits(const AttentionArgs<T> &a,
                                        uint64_t step, int64_t first,
                                        int64_t stride, int64_t count,
                                        int lane) {
  uint32_t bits = 0;
#pragma unroll
  for (int u = 0; u < kStageRows / kLanes; ++u) {
    const int t = u * kLanes + lane;
    if (t < count) {
      const uint64_t element = static_cast<uint64_t>(first + t * stride);
      const PhiloxCounter words = dropoutBits(a.dropoutKey, element / 4, step);
      // Select the word without indexing (keeps `words` in registers).
      const unsigned w = static_cast<unsigned>(element % 4);
      const uint32_t word = w == 0   ? words.word[0]
                            : w == 1 ? words.word[1]
                            : w == 2 ? words.word[2]
                                     : words.word[3];
      if (dropoutKeeps(word, a.dropoutThreshold))
        bits |= 1u << t;
    }
  }
  bits |= __shfl_xor_sync(0xffffffffu, bits, 1);
  bits |= __shfl_xor_sync(0xffffffffu, bits, 2);
  return bits;
}

//===----------------------------------------------------------------------===//
// Fast paths
//===----------------------------------------------------------------------===//

// The kernels above take every call the checks accept. The fast paths below
// take the common shapes (no dropout, head sizes the tiles fit) with far
// higher throughput: tensor cores (mma.sync) for 16-bit storage
// (AttentionTensorCore.cu), register-tiled FMA for fp32 (AttentionTiled.cu).
// Each returns false, having launched nothing, when it does not take the
// call. out, logsumexp, dq, dk and dv may each be null (absent); rowDot is
// the backward's D = rowsum(dout * out), already computed on `stream`.

inline bool aligned16(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

/// The calls both fast paths take, apart from their own limits and the
/// result pointers: no dropout, equal head sizes of 32, 64 or 128, no empty
/// dim, whole query-head groups, 16-byte aligned q, k and v.
template <typename T> bool fastPathTakes(const AttentionArgs<T> &a) {
  return !a.dropout && a.headDim == a.valueDim &&
         (a.headDim == 32 || a.headDim == 64 || a.headDim == 128) &&
         a.batch > 0 && a.queryHeads > 0 && a.kvHeads > 0 &&
         a.queryHeads % a.kvHeads == 0 && a.querySeq > 0 && a.keySeq > 0 &&
         aligned16(a.q) && aligned16(a.k) && aligned16(a.v);
}

bool attentionForwardFast(const AttentionArgs<float> &a, float *out,
                          float *logsumexp, cudaStream_t stream);
bool attentionForwardFast(const AttentionArgs<__half> &a, __half *out,
                          float *logsumexp, cudaStream_t stream);
bool attentionForwardFast(const AttentionArgs<__nv_bfloat16> &a,
                          __nv_bfloat16 *out, float *logsumexp,
                          cudaStream_t stream);
inline bool attentionForwardFast(const AttentionArgs<double> &, double *,
                                 double *, cudaStream_t) {
  return false;
}

bool attentionBackwardFast(const AttentionArgs<float> &a, const float *dout,
                           const float *logsumexp, const float *rowDot,
                           float *dq, float *dk, float *dv,
                           cudaStream_t stream);
bool attentionBackwardFast(const AttentionArgs<__half> &a, const __half *dout,
                           const float *logsumexp, const float *rowDot,
                           __half *dq, __half *dk, __half *dv,
                           cudaStream_t stream);
bool attentionBackwardFast(const AttentionArgs<__nv_bfloat16> &a,
                           const __nv_bfloat16 *dout, const float *logsumexp,
                           const float *rowDot, __nv_bfloat16 *dq,
                           __nv_bfloat16 *dk, __nv_bfloat16 *dv,
                           cudaStream_t stream);
inline bool attentionBackwardFast(const AttentionArgs<double> &,
                                  const double *, const double *,
                                  const double *, double *, double *, double *,
                                  cudaStream_t) {
  return false;
}

} // namespace remat::rt::cuda::detail

#endif // REMAT_RUNTIME_CUDA_ATTENTION_CUH
