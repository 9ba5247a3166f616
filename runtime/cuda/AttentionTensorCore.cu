//===- AttentionTensorCore.cu - 16-bit fused attention on tensor cores ----===//
//
// FlashAttention-2 for F16/BF16 storage on tensor cores (mma.sync m16n8k16,
// fp32 accumulation; sm_80 and later). It takes the common calls (no
// dropout, headDim == valueDim in {32, 64, 128}, 16-byte aligned operands)
// from the general kernels of Attention.cu and AttentionGrad.cu, with their
// semantics (hidden pairs, fully hidden rows give output 0 and logsumexp
// -inf) and their determinism: every output element has one writer and
// every sum a fixed order, no atomics.
//
// Three kernels, each a block of four warps whose warp w owns 16 rows of the
// block's 64 (rows 16w..16w+15) and computes with warp-wide mma.sync:
//  - forward: 64 query rows of one (batch, head) x key tiles of 64. Q stays
//    in registers (A fragments); K, V and the mask tile are staged in shared
//    memory with cp.async, double buffered (the next tile loads while this
//    one is computed). S = Q K^T, online softmax on the fp32 accumulators
//    (row max and sum across the quad that shares a row), P rounded to 16
//    bits in registers is the A operand of O += P V.
//  - key/value gradients: 64 keys of one (batch, kv head) x the group's query
//    heads and their query tiles (64; 32 at head size 128) in order, from
//    the diagonal on with `causal`; K and V as A operands (in registers; read
//    from shared memory at each use at head size 128), S^T = K Q^T,
//    P^T = exp(S^T - lse), dV += P^T dO, dP^T = V dO^T,
//    dS^T = P^T (dP^T - D), dK += dS^T Q.
//  - query gradients: 64 query rows x key tiles (64; 32 at head size 128);
//    Q and dO in registers, S = Q K^T, dP = dO V^T, dS = P (dP - D),
//    dQ += dS K.
// All three stage their streamed tiles with the same double-buffered
// cp.async pipeline. dK and dQ are scaled by `scale` once at the end.
// Results are staged in shared memory and written with 16-byte stores.
// Rows past the sequences are zero-filled in shared memory; pairs that are
// hidden (past a sequence, causal j > i) get score -inf, checked only in the
// tiles that have such pairs.
//
// Fragments (PTX ISA, mma.m16n8k16 .f16/.bf16): lane = 4 g + t, g in 0..7,
// t in 0..3; element (row, col):
//   A 16x16:   a0 (g, 2t..2t+1)  a1 (g+8, 2t..)  a2 (g, 2t+8..)  a3 (g+8, 2t+8..)
//   B 16x8:    b0 (k 2t..2t+1, n g)  b1 (k 2t+8..2t+9, n g)
//   C 16x8:    c0 c1 (g, 2t..2t+1)   c2 c3 (g+8, 2t..2t+1)
// So the C fragments of two adjacent 8-column tiles, rounded to 16 bits, are
// the A fragment with those 16 columns as k (FA2's register reuse), and a
// quad (the four lanes of one g) holds whole rows. ldmatrix fills fragments
// from row-major shared tiles: A of a [rows][k] tile as is, B of X^T for X
// stored [n][k] (K, V, Q, dO rows) as is, B of X stored [k][n] with .trans.
// Shared rows are padded by 8 elements (16 bytes), so the eight rows one
// ldmatrix phase reads fall in distinct banks.
//
// Softmax in fp32 with ex2.approx (exp(x) = 2^(x log2 e)); differences are
// taken before scaling by log2 e, so finite masks as large as -3.4e38 stay
// finite (and underflow to 0 probabilities as in the general kernels).
//
//===----------------------------------------------------------------------===//

#include "Attention.cuh"

#include <climits>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace remat::rt::cuda::detail {

namespace {

//===----------------------------------------------------------------------===//
// Tiling
//===----------------------------------------------------------------------===//

constexpr int kTcWarps = 4;
constexpr int kTcThreads = 32 * kTcWarps;
/// Rows a block owns (queries, or keys in the key/value-gradient kernel).
constexpr int kTcRows = 16 * kTcWarps;
/// Padding of each shared-memory row, in 16-bit elements.
constexpr int kPad = 8;
constexpr float kLog2e = 1.4426950408889634f;

/// Resident blocks per multiprocessor each kernel's register budget is set
/// for (__launch_bounds__: 65536 registers / 128 threads / blocks, so 168
/// registers at 3 blocks and 255 at 2); the tightest budgets without
/// spills at head size 64 (ptxas --resource-usage, sm_80 and sm_90).
constexpr int forwardBlocksPerSM(int d) { return d <= 64 ? 3 : 2; }
constexpr int queryGradBlocksPerSM(int d) { return d <= 64 ? 3 : 2; }
constexpr int keyValueGradBlocksPerSM(int) { return 2; }

//===----------------------------------------------------------------------===//
// PTX wrappers
//===----------------------------------------------------------------------===//

__device__ inline uint32_t smemAddress(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/// Copies 16 bytes global -> shared asynchronously; when !valid, writes
/// zeros and reads nothing.
__device__ inline void copyAsync16(void *dst, const void *src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                   smemAddress(dst)),
               "l"(src), "r"(valid ? 16 : 0));
}

/// The same for 4 bytes.
__device__ inline void copyAsync4(void *dst, const void *src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(
                   smemAddress(dst)),
               "l"(src), "r"(valid ? 4 : 0));
}

__device__ inline void commitCopies() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/// Waits for this thread's copies (a __syncthreads must follow before other
/// threads read them).
__device__ inline void waitCopies() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

/// Four 8x8 16-bit matrices from shared memory; lanes 8m..8m+7 give the row
/// addresses of matrix m, and lane 4g + t receives row g, columns 2t..2t+1
/// of each (with .trans, rows 2t..2t+1 of column g).
__device__ inline void loadMatrices(uint32_t (&r)[4], uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}
__device__ inline void loadMatricesTransposed(uint32_t (&r)[4],
                                              uint32_t address) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(address));
}

/// c += a * b for one 16x8x16 step (fp32 accumulators).
template <typename T>
__device__ inline void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                           uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>)
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// 2^x (ex2.approx: relative error about 2^-22; 2^-inf = 0).
__device__ inline float exp2Approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

//===----------------------------------------------------------------------===//
// Element helpers
//===----------------------------------------------------------------------===//

/// Two floats rounded to T, `lo` in the low half (the lower column index,
/// as the fragments want).
template <typename T> __device__ inline uint32_t pack(float lo, float hi) {
  uint32_t bits;
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 v = __floats2half2_rn(lo, hi);
    memcpy(&bits, &v, sizeof bits);
  } else {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    memcpy(&bits, &v, sizeof bits);
  }
  return bits;
}

/// Two adjacent elements of a shared tile (4-byte aligned) as floats.
template <typename T> __device__ inline float2 loadPair(const T *p) {
  if constexpr (std::is_same_v<T, __half>)
    return __half22float2(*reinterpret_cast<const __half2 *>(p));
  else
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(p));
}

__device__ inline float negativeInfinity() { return -dInfinity<float>(); }

/// Element offset, within a tile of row stride kStride, of the row address
/// this lane gives ldmatrix for a 16x16 block whose matrices are ordered
/// (rows 0-7, cols 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15): without
/// .trans the A fragment of the block; with .trans, for a [k][n] tile, the
/// B fragments (b0 b1) of columns 0-7 and then of columns 8-15.
template <int kStride> __device__ inline int laneOffsetA(int lane) {
  const int m = lane / 8;
  return ((m & 1) * 8 + lane % 8) * kStride + (m >> 1) * 8;
}

/// The same for matrices ordered (0-7, 0-7), (0-7, 8-15), (8-15, 0-7),
/// (8-15, 8-15): without .trans, for an [n][k] tile (rows are the n), the B
/// fragments (b0 b1) of rows 0-7 and then of rows 8-15.
template <int kStride> __device__ inline int laneOffsetB(int lane) {
  const int m = lane / 8;
  return ((m >> 1) * 8 + lane % 8) * kStride + (m & 1) * 8;
}

//===----------------------------------------------------------------------===//
// Warp-level products
//===----------------------------------------------------------------------===//

/// acc (16 x 8 kN) += A (16 x 16 kK) * X^T, X an [8 kN][16 kK] row-major
/// shared tile (rows are the n). loadA(kk, a) gives A's k-chunk kk;
/// xAddress is the tile's shared address plus laneOffsetB (in bytes).
template <typename T, int kK, int kN, int kStride, typename LoadA>
__device__ inline void mmaTransposedB(float (&acc)[kN][4], LoadA &&loadA,
                                      uint32_t xAddress) {
  static_assert(kN % 2 == 0, "n-tiles go in pairs");
#pragma unroll
  for (int kk = 0; kk < kK; ++kk) {
    uint32_t a[4];
    loadA(kk, a);
#pragma unroll
    for (int np = 0; np < kN / 2; ++np) {
      uint32_t b[4];
      loadMatrices(b, xAddress + (16 * np * kStride + 16 * kk) * 2);
      mma<T>(acc[2 * np], a, b[0], b[1]);
      mma<T>(acc[2 * np + 1], a, b[2], b[3]);
    }
  }
}

/// acc (16 x 8 kN) += P (16 x 16 kK) * X, P given as the fp32 C fragments of
/// its 2 kK eight-column tiles (rounded to T here), X a [16 kK][8 kN]
/// row-major shared tile (rows are the k). xAddress: the tile's shared
/// address plus laneOffsetA (in bytes).
template <typename T, int kK, int kN, int kStride>
__device__ inline void mmaFromAccumulators(float (&acc)[kN][4],
                                           const float (&p)[2 * kK][4],
                                           uint32_t xAddress) {
  static_assert(kN % 2 == 0, "n-tiles go in pairs");
#pragma unroll
  for (int kk = 0; kk < kK; ++kk) {
    const uint32_t a[4] = {pack<T>(p[2 * kk][0], p[2 * kk][1]),
                           pack<T>(p[2 * kk][2], p[2 * kk][3]),
                           pack<T>(p[2 * kk + 1][0], p[2 * kk + 1][1]),
                           pack<T>(p[2 * kk + 1][2], p[2 * kk + 1][3])};
#pragma unroll
    for (int np = 0; np < kN / 2; ++np) {
      uint32_t b[4];
      loadMatricesTransposed(b, xAddress + (16 * kk * kStride + 16 * np) * 2);
      mma<T>(acc[2 * np], a, b[0], b[1]);
      mma<T>(acc[2 * np + 1], a, b[2], b[3]);
    }
  }
}

template <int kN> __device__ inline void zero(float (&acc)[kN][4]) {
#pragma unroll
  for (int n = 0; n < kN; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      acc[n][e] = 0.f;
}

//===----------------------------------------------------------------------===//
// Staging
//===----------------------------------------------------------------------===//

/// Starts copying rows [first, first + kRows) of a row-major [count][D]
/// matrix into a shared tile of row stride D + kPad; rows past `count` are
/// zero (their products must be 0, not NaN).
template <int kRows, int D, typename T>
__device__ inline void copyRows(T *tile, const T *matrix, int first,
                                int count) {
  constexpr int kChunks = D / 8; // 16-byte chunks per row
  constexpr int kRowsPerRound = kTcThreads / kChunks;
  static_assert(kTcThreads % kChunks == 0 && kRows % kRowsPerRound == 0,
                "whole copy rounds");
  // Round n copies row r + n * kRowsPerRound: constant offsets from one
  // address per thread.
  const int r = threadIdx.x / kChunks, col = threadIdx.x % kChunks * 8;
  T *dst = tile + r * (D + kPad) + col;
  const T *src = matrix + (first + r) * D + col;
#pragma unroll
  for (int round = 0; round < kRows / kRowsPerRound; ++round) {
    const bool valid = first + r + round * kRowsPerRound < count;
    copyAsync16(dst + round * kRowsPerRound * (D + kPad),
                valid ? src + round * kRowsPerRound * D : matrix, valid);
  }
}

/// Stages the mask entries of query rows [row0, row0 + kRows) and keys
/// [col0, col0 + kCols) (one (batch, head): `mask` points there) into a
/// shared tile of row stride kCols + kPad, zero outside the sequences.
/// `async`: 16-byte cp.async chunks (the host checked that the last stride
/// is 1, every other stride, the key count and the address are multiples of
/// 8 elements / 16 bytes); else element loads that work for any strides.
template <int kRows, int kCols, typename T>
__device__ inline void copyMask(T *tile, const T *mask,
                                const AttentionArgs<T> &a, int row0, int col0,
                                bool async) {
  constexpr int kStride = kCols + kPad;
  const int rows = static_cast<int>(a.querySeq);
  const int cols = static_cast<int>(a.keySeq);
  if (async) {
    constexpr int kChunks = kCols / 8;
    constexpr int kRowsPerRound = kTcThreads / kChunks;
    static_assert(kTcThreads % kChunks == 0 && kRows % kRowsPerRound == 0,
                  "whole copy rounds");
    const int r = threadIdx.x / kChunks, col = threadIdx.x % kChunks * 8;
    const int j = col0 + col;
    T *dst = tile + r * kStride + col;
    const T *src = mask + (row0 + r) * a.maskStride[2] + j;
#pragma unroll
    for (int round = 0; round < kRows / kRowsPerRound; ++round) {
      const bool valid = row0 + r + round * kRowsPerRound < rows && j < cols;
      copyAsync16(dst + round * kRowsPerRound * kStride,
                  valid ? src + round * kRowsPerRound * a.maskStride[2] : mask,
                  valid);
    }
  } else {
    const T zeroValue = fromAcc<T>(0.f);
#pragma unroll 4
    for (int e = threadIdx.x; e < kRows * kCols; e += kTcThreads) {
      const int r = e / kCols, c = e % kCols;
      const int i = row0 + r, j = col0 + c;
      tile[r * kStride + c] =
          i < rows && j < cols
              ? mask[i * a.maskStride[2] + j * a.maskStride[3]]
              : zeroValue;
    }
  }
}

/// Writes a warp's 16 x D accumulator rows (times `factor`, rounded to T)
/// to rows [firstRow, firstRow + 16) of a row-major [count][D] matrix
/// through the shared tile `staging` (the warp's 16 rows, stride D + kPad),
/// so that global stores are 16-byte and row-contiguous. Rows past `count`
/// are not written. The caller synchronized the block (staging is free).
template <typename T, int D>
__device__ inline void storeRows(T *matrix, const float (&acc)[D / 8][4],
                                 float factor0, float factor1, T *staging,
                                 int firstRow, int count) {
  constexpr int kStride = D + kPad;
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int nd = 0; nd < D / 8; ++nd) {
    *reinterpret_cast<uint32_t *>(staging + g * kStride + 8 * nd + 2 * t) =
        pack<T>(acc[nd][0] * factor0, acc[nd][1] * factor0);
    *reinterpret_cast<uint32_t *>(staging + (g + 8) * kStride + 8 * nd +
                                  2 * t) =
        pack<T>(acc[nd][2] * factor1, acc[nd][3] * factor1);
  }
  __syncwarp();
  constexpr int kChunks = D / 8;
#pragma unroll
  for (int round = 0; round < 16 * kChunks / 32; ++round) {
    const int c = lane + 32 * round;
    const int r = c / kChunks, col = c % kChunks * 8;
    if (firstRow + r < count)
      *reinterpret_cast<uint4 *>(matrix + (firstRow + r) * D + col) =
          *reinterpret_cast<const uint4 *>(staging + r * kStride + col);
  }
}

//===----------------------------------------------------------------------===//
// Shared-memory plans (bytes), shared by the kernels and their launches
//===----------------------------------------------------------------------===//

/// Two pipeline stages, the block's resident operand (copied once, then
/// read into registers or, if kept in shared memory, on every tile) and
/// the staging of the results (at offset 0, after the last tile).
struct SmemPlan {
  int stage;          // bytes of one stage
  int residentOffset; // in stage 1 when it fits and is read out at once
  int total;
};

__host__ __device__ constexpr int maxOf(int a, int b) { return a > b ? a : b; }

__host__ __device__ constexpr SmemPlan makePlan(int stage, int resident,
                                                bool residentInRegisters,
                                                int staging) {
  const int offset =
      residentInRegisters && resident <= stage ? stage : 2 * stage;
  return SmemPlan{stage, offset,
                  maxOf(maxOf(2 * stage, offset + resident), staging)};
}

/// Rows of 16-bit elements, padded.
__host__ __device__ constexpr int tileBytes(int rows, int cols) {
  return rows * (cols + kPad) * 2;
}

/// Forward: stage = K, V [kKeys][D] and mask [kTcRows][kKeys]; resident Q.
template <int D, int kKeys>
__host__ __device__ constexpr SmemPlan forwardPlan(bool mask) {
  return makePlan(2 * tileBytes(kKeys, D) +
                      (mask ? tileBytes(kTcRows, kKeys) : 0),
                  tileBytes(kTcRows, D), true, tileBytes(kTcRows, D));
}

/// Query gradients: stage = K, V, mask as the forward; resident Q, dO.
template <int D, int kKeys>
__host__ __device__ constexpr SmemPlan queryGradPlan(bool mask) {
  return makePlan(2 * tileBytes(kKeys, D) +
                      (mask ? tileBytes(kTcRows, kKeys) : 0),
                  2 * tileBytes(kTcRows, D), true, tileBytes(kTcRows, D));
}

/// Key/value gradients: stage = Q, dO [kQueries][D], logsumexp and rowDot
/// [kQueries] floats, mask [kQueries][kTcRows keys]; resident K, V.
template <int D, int kQueries, bool kResidentInRegisters>
__host__ __device__ constexpr SmemPlan keyValueGradPlan(bool mask) {
  return makePlan(2 * tileBytes(kQueries, D) + 2 * kQueries * 4 +
                      (mask ? tileBytes(kQueries, kTcRows) : 0),
                  2 * tileBytes(kTcRows, D), kResidentInRegisters,
                  2 * tileBytes(kTcRows, D));
}

//===----------------------------------------------------------------------===//
// Scores of query rows (forward and query gradients)
//===----------------------------------------------------------------------===//

/// Turns a warp's dot products s (its 16 query rows x kN * 8 keys from j0;
/// this thread's rows are i and i + 8) into scores: scale * dot + mask, and
/// -inf where hidden (key past the sequence, causal j > i) when `edge` says
/// the tile has such pairs. maskRow: this thread's row i in the staged mask
/// tile (null without a mask).
template <typename T, int kN, int kMaskStride>
__device__ inline void queryRowScores(float (&s)[kN][4], float scale,
                                      const T *maskRow, int i, int j0,
                                      int keySeq, bool causal, bool edge,
                                      int t) {
  if (maskRow != nullptr) {
#pragma unroll
    for (int nt = 0; nt < kN; ++nt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const float2 m = loadPair(maskRow + r * 8 * kMaskStride + 8 * nt + 2 * t);
        s[nt][2 * r] = fmaf(s[nt][2 * r], scale, m.x);
        s[nt][2 * r + 1] = fmaf(s[nt][2 * r + 1], scale, m.y);
      }
  } else {
#pragma unroll
    for (int nt = 0; nt < kN; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        s[nt][e] *= scale;
  }
  if (edge) {
#pragma unroll
    for (int nt = 0; nt < kN; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = i + 8 * (e >> 1);
        const int j = j0 + 8 * nt + 2 * t + (e & 1);
        if (j >= keySeq || (causal && j > row))
          s[nt][e] = negativeInfinity();
      }
  }
}

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

template <typename T, int D, int kKeys>
__global__ void __launch_bounds__(kTcThreads, forwardBlocksPerSM(D))
    tcForwardKernel(AttentionArgs<T> a, T *out, float *logsumexp,
                    bool maskAsync) {
  constexpr int kStride = D + kPad, kMaskStride = kKeys + kPad;
  constexpr int kKD = D / 16;    // k-chunks of the head dimension
  constexpr int kNK = kKeys / 8; // eight-key tiles of the scores
  constexpr int kND = D / 8;     // eight-column tiles of the output
  constexpr int kKV = tileBytes(kKeys, D);
  extern __shared__ __align__(16) unsigned char smem[];
  const SmemPlan plan = forwardPlan<D, kKeys>(a.mask != nullptr);

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int querySeq = static_cast<int>(a.querySeq);
  const int keySeq = static_cast<int>(a.keySeq);
  const int tiles = (querySeq + kTcRows - 1) / kTcRows;
  const int64_t bh = blockIdx.x / tiles; // b * Hq + h
  const int64_t b = bh / a.queryHeads, h = bh % a.queryHeads;
  const int64_t kvHead = b * a.kvHeads + h / (a.queryHeads / a.kvHeads);
  const int firstRow = static_cast<int>(blockIdx.x % tiles) * kTcRows;
  const int i = firstRow + 16 * warp + g; // this thread's rows: i, i + 8
  const T *keys = a.k + kvHead * keySeq * D;
  const T *values = a.v + kvHead * keySeq * D;
  const T *mask = a.mask == nullptr ? nullptr
                                    : a.mask + b * a.maskStride[0] +
                                          h * a.maskStride[1];

  // Causal: no row of this block sees a key past its last row.
  const int keyEnd =
      a.causal && firstRow + kTcRows < keySeq ? firstRow + kTcRows : keySeq;
  const int keyTiles = (keyEnd + kKeys - 1) / kKeys;
  auto issue = [&](int tile) {
    unsigned char *stage = smem + (tile & 1) * plan.stage;
    const int j0 = tile * kKeys;
    copyRows<kKeys, D>(reinterpret_cast<T *>(stage), keys, j0, keySeq);
    copyRows<kKeys, D>(reinterpret_cast<T *>(stage + kKV), values, j0, keySeq);
    if (mask != nullptr)
      copyMask<kTcRows, kKeys>(reinterpret_cast<T *>(stage + 2 * kKV), mask,
                               a, firstRow, j0, maskAsync);
  };

  // Q (resident, read into A fragments) and the first key tile.
  T *queryTile = reinterpret_cast<T *>(smem + plan.residentOffset);
  copyRows<kTcRows, D>(queryTile, a.q + bh * querySeq * D, firstRow, querySeq);
  issue(0);
  commitCopies();
  waitCopies();
  __syncthreads();
  uint32_t q[kKD][4];
  {
    const uint32_t address =
        smemAddress(queryTile) + (16 * warp * kStride + laneOffsetA<kStride>(lane)) * 2;
#pragma unroll
    for (int kk = 0; kk < kKD; ++kk)
      loadMatrices(q[kk], address + 16 * kk * 2);
  }

  float o[kND][4];
  zero(o);
  // Per row (i, i + 8): running max m (natural units) and this thread's
  // share of the running sum l (the quad's shares are added at the end).
  float rowMax[2] = {negativeInfinity(), negativeInfinity()};
  float rowSum[2] = {0.f, 0.f};

  for (int tile = 0; tile < keyTiles; ++tile) {
    waitCopies();
    __syncthreads(); // tile landed everywhere; the previous one is consumed
    if (tile + 1 < keyTiles)
      issue(tile + 1);
    commitCopies();

    const unsigned char *stage = smem + (tile & 1) * plan.stage;
    const int j0 = tile * kKeys;
    float s[kNK][4];
    zero(s);
    mmaTransposedB<T, kKD, kNK, kStride>(
        s,
        [&](int kk, uint32_t(&f)[4]) {
#pragma unroll
          for (int e = 0; e < 4; ++e)
            f[e] = q[kk][e];
        },
        smemAddress(stage) + laneOffsetB<kStride>(lane) * 2);

    const bool edge = j0 + kKeys > keySeq ||
                      (a.causal && j0 + kKeys - 1 > firstRow);
    const T *maskRow =
        mask == nullptr ? nullptr
                        : reinterpret_cast<const T *>(stage + 2 * kKV) +
                              (16 * warp + g) * kMaskStride;
    queryRowScores<T, kNK, kMaskStride>(s, a.scale, maskRow, i, j0, keySeq,
                                        a.causal, edge, t);

    // Online softmax, per row r (elements 2r, 2r + 1 of each tile).
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = rowMax[r];
#pragma unroll
      for (int nt = 0; nt < kNK; ++nt)
        mx = fmaxf(mx, fmaxf(s[nt][2 * r], s[nt][2 * r + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      // With every key so far hidden, subtract 0 instead of -inf (no NaN).
      const float shift = mx == negativeInfinity() ? 0.f : mx;
      const float rescale = exp2Approx((rowMax[r] - shift) * kLog2e);
      rowMax[r] = mx;
      rowSum[r] *= rescale;
#pragma unroll
      for (int nd = 0; nd < kND; ++nd) {
        o[nd][2 * r] *= rescale;
        o[nd][2 * r + 1] *= rescale;
      }
#pragma unroll
      for (int nt = 0; nt < kNK; ++nt)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const float p = exp2Approx((s[nt][2 * r + c] - shift) * kLog2e);
          s[nt][2 * r + c] = p;
          rowSum[r] += p;
        }
    }
    mmaFromAccumulators<T, kKeys / 16, kND, kStride>(
        o, s, smemAddress(stage + kKV) + laneOffsetA<kStride>(lane) * 2);
  }

  __syncthreads(); // every warp is done with the tiles: stage 0 is free
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    rowSum[r] += __shfl_xor_sync(0xffffffffu, rowSum[r], 1);
    rowSum[r] += __shfl_xor_sync(0xffffffffu, rowSum[r], 2);
  }
  if (out != nullptr)
    storeRows<T, D>(out + bh * querySeq * D, o,
                    rowSum[0] > 0.f ? 1.f / rowSum[0] : 0.f,
                    rowSum[1] > 0.f ? 1.f / rowSum[1] : 0.f,
                    reinterpret_cast<T *>(smem) + 16 * warp * kStride,
                    firstRow + 16 * warp, querySeq);
  // logsumexp is absent when nothing differentiates this op.
  if (logsumexp != nullptr && t == 0)
#pragma unroll
    for (int r = 0; r < 2; ++r)
      if (i + 8 * r < querySeq)
        logsumexp[bh * querySeq + i + 8 * r] =
            rowSum[r] > 0.f ? rowMax[r] + logf(rowSum[r]) : negativeInfinity();
}

//===----------------------------------------------------------------------===//
// Query gradients
//===----------------------------------------------------------------------===//

template <typename T, int D, int kKeys>
__global__ void __launch_bounds__(kTcThreads, queryGradBlocksPerSM(D))
    tcQueryGradKernel(AttentionArgs<T> a, const T *dout,
                      const float *logsumexp, const float *rowDot, T *dq,
                      bool maskAsync) {
  constexpr int kStride = D + kPad, kMaskStride = kKeys + kPad;
  constexpr int kKD = D / 16, kNK = kKeys / 8, kND = D / 8;
  constexpr int kKV = tileBytes(kKeys, D);
  extern __shared__ __align__(16) unsigned char smem[];
  const SmemPlan plan = queryGradPlan<D, kKeys>(a.mask != nullptr);

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int querySeq = static_cast<int>(a.querySeq);
  const int keySeq = static_cast<int>(a.keySeq);
  const int tiles = (querySeq + kTcRows - 1) / kTcRows;
  const int64_t bh = blockIdx.x / tiles;
  const int64_t b = bh / a.queryHeads, h = bh % a.queryHeads;
  const int64_t kvHead = b * a.kvHeads + h / (a.queryHeads / a.kvHeads);
  const int firstRow = static_cast<int>(blockIdx.x % tiles) * kTcRows;
  const int i = firstRow + 16 * warp + g;
  const T *keys = a.k + kvHead * keySeq * D;
  const T *values = a.v + kvHead * keySeq * D;
  const T *mask = a.mask == nullptr ? nullptr
                                    : a.mask + b * a.maskStride[0] +
                                          h * a.maskStride[1];

  const int keyEnd =
      a.causal && firstRow + kTcRows < keySeq ? firstRow + kTcRows : keySeq;
  const int keyTiles = (keyEnd + kKeys - 1) / kKeys;
  auto issue = [&](int tile) {
    unsigned char *stage = smem + (tile & 1) * plan.stage;
    const int j0 = tile * kKeys;
    copyRows<kKeys, D>(reinterpret_cast<T *>(stage), keys, j0, keySeq);
    copyRows<kKeys, D>(reinterpret_cast<T *>(stage + kKV), values, j0, keySeq);
    if (mask != nullptr)
      copyMask<kTcRows, kKeys>(reinterpret_cast<T *>(stage + 2 * kKV), mask,
                               a, firstRow, j0, maskAsync);
  };

  // Q and dO resident, read into A fragments.
  T *queryTile = reinterpret_cast<T *>(smem + plan.residentOffset);
  T *doutTile = queryTile + kTcRows * kStride;
  copyRows<kTcRows, D>(queryTile, a.q + bh * querySeq * D, firstRow, querySeq);
  copyRows<kTcRows, D>(doutTile, dout + bh * querySeq * D, firstRow, querySeq);
  issue(0);
  commitCopies();
  // Per row: logsumexp (+inf for rows absent or wholly hidden, so that
  // every probability is exp(-inf) = 0) and D.
  float lse[2], rowD[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const bool valid = i + 8 * r < querySeq;
    const float l = valid ? logsumexp[bh * querySeq + i + 8 * r]
                          : negativeInfinity();
    lse[r] = l == negativeInfinity() ? dInfinity<float>() : l;
    rowD[r] = valid ? rowDot[bh * querySeq + i + 8 * r] : 0.f;
  }
  waitCopies();
  __syncthreads();
  uint32_t q[kKD][4], dO[kKD][4];
  {
    const uint32_t offset = (16 * warp * kStride + laneOffsetA<kStride>(lane)) * 2;
#pragma unroll
    for (int kk = 0; kk < kKD; ++kk) {
      loadMatrices(q[kk], smemAddress(queryTile) + offset + 16 * kk * 2);
      loadMatrices(dO[kk], smemAddress(doutTile) + offset + 16 * kk * 2);
    }
  }

  float dqAcc[kND][4];
  zero(dqAcc);
  for (int tile = 0; tile < keyTiles; ++tile) {
    waitCopies();
    __syncthreads();
    if (tile + 1 < keyTiles)
      issue(tile + 1);
    commitCopies();

    const unsigned char *stage = smem + (tile & 1) * plan.stage;
    const int j0 = tile * kKeys;
    float s[kNK][4], dp[kNK][4];
    zero(s);
    zero(dp);
    mmaTransposedB<T, kKD, kNK, kStride>(
        s,
        [&](int kk, uint32_t(&f)[4]) {
#pragma unroll
          for (int e = 0; e < 4; ++e)
            f[e] = q[kk][e];
        },
        smemAddress(stage) + laneOffsetB<kStride>(lane) * 2);
    mmaTransposedB<T, kKD, kNK, kStride>(
        dp,
        [&](int kk, uint32_t(&f)[4]) {
#pragma unroll
          for (int e = 0; e < 4; ++e)
            f[e] = dO[kk][e];
        },
        smemAddress(stage + kKV) + laneOffsetB<kStride>(lane) * 2);

    const bool edge = j0 + kKeys > keySeq ||
                      (a.causal && j0 + kKeys - 1 > firstRow);
    const T *maskRow =
        mask == nullptr ? nullptr
                        : reinterpret_cast<const T *>(stage + 2 * kKV) +
                              (16 * warp + g) * kMaskStride;
    queryRowScores<T, kNK, kMaskStride>(s, a.scale, maskRow, i, j0, keySeq,
                                        a.causal, edge, t);
    // dS = P (dP - D), into s.
#pragma unroll
    for (int nt = 0; nt < kNK; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float p = exp2Approx((s[nt][e] - lse[e >> 1]) * kLog2e);
        s[nt][e] = p * (dp[nt][e] - rowD[e >> 1]);
      }
    mmaFromAccumulators<T, kKeys / 16, kND, kStride>(
        dqAcc, s, smemAddress(stage) + laneOffsetA<kStride>(lane) * 2);
  }

  __syncthreads();
  storeRows<T, D>(dq + bh * querySeq * D, dqAcc, a.scale, a.scale,
                  reinterpret_cast<T *>(smem) + 16 * warp * kStride,
                  firstRow + 16 * warp, querySeq);
}

//===----------------------------------------------------------------------===//
// Key/value gradients
//===----------------------------------------------------------------------===//

/// kResidentInRegisters: K and V as A fragments in registers (else read
/// from shared memory at each use: fewer registers at head size 128).
template <typename T, int D, int kQueries, bool kResidentInRegisters>
__global__ void __launch_bounds__(kTcThreads, keyValueGradBlocksPerSM(D))
    tcKeyValueGradKernel(AttentionArgs<T> a, const T *dout,
                         const float *logsumexp, const float *rowDot, T *dk,
                         T *dv, bool maskAsync) {
  constexpr int kStride = D + kPad, kMaskStride = kTcRows + kPad;
  constexpr int kKD = D / 16, kNQ = kQueries / 8, kND = D / 8;
  constexpr int kQ = tileBytes(kQueries, D);
  constexpr int kLse = 2 * kQ, kRowDot = kLse + 4 * kQueries,
                kMask = kRowDot + 4 * kQueries;
  extern __shared__ __align__(16) unsigned char smem[];
  const SmemPlan plan =
      keyValueGradPlan<D, kQueries, kResidentInRegisters>(a.mask != nullptr);

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int querySeq = static_cast<int>(a.querySeq);
  const int keySeq = static_cast<int>(a.keySeq);
  const int tiles = (keySeq + kTcRows - 1) / kTcRows;
  const int64_t bkv = blockIdx.x / tiles; // b * Hkv + kv head
  const int64_t b = bkv / a.kvHeads, kvHead = bkv % a.kvHeads;
  const int group = static_cast<int>(a.queryHeads / a.kvHeads);
  const int j0 = static_cast<int>(blockIdx.x % tiles) * kTcRows;

  // Causal: queries before the tile's first key see none of its keys.
  const int queryBegin = a.causal ? j0 : 0;
  const int queryTiles =
      queryBegin < querySeq ? (querySeq - queryBegin + kQueries - 1) / kQueries
                            : 0;
  // The group's query heads in a fixed order, each with its query tiles:
  // a deterministic sum.
  const int steps = group * queryTiles;
  auto issue = [&](int step) {
    unsigned char *stage = smem + (step & 1) * plan.stage;
    const int64_t h = kvHead * group + step / queryTiles;
    const int64_t bh = b * a.queryHeads + h;
    const int i0 = queryBegin + step % queryTiles * kQueries;
    copyRows<kQueries, D>(reinterpret_cast<T *>(stage), a.q + bh * querySeq * D,
                          i0, querySeq);
    copyRows<kQueries, D>(reinterpret_cast<T *>(stage + kQ),
                          dout + bh * querySeq * D, i0, querySeq);
    const int r = threadIdx.x % kQueries;
    const bool valid = i0 + r < querySeq;
    const int64_t row = bh * querySeq + (valid ? i0 + r : 0);
    if (threadIdx.x < kQueries)
      copyAsync4(stage + kLse + 4 * r, logsumexp + row, valid);
    else if (threadIdx.x < 2 * kQueries)
      copyAsync4(stage + kRowDot + 4 * r, rowDot + row, valid);
    if (a.mask != nullptr)
      copyMask<kQueries, kTcRows>(
          reinterpret_cast<T *>(stage + kMask),
          a.mask + b * a.maskStride[0] + h * a.maskStride[1], a, i0, j0,
          maskAsync);
  };

  T *keyTile = reinterpret_cast<T *>(smem + plan.residentOffset);
  T *valueTile = keyTile + kTcRows * kStride;
  copyRows<kTcRows, D>(keyTile, a.k + bkv * keySeq * D, j0, keySeq);
  copyRows<kTcRows, D>(valueTile, a.v + bkv * keySeq * D, j0, keySeq);
  if (steps > 0)
    issue(0);
  commitCopies();
  waitCopies();
  __syncthreads();
  const uint32_t residentOffset =
      (16 * warp * kStride + laneOffsetA<kStride>(lane)) * 2;
  const uint32_t keyAddress = smemAddress(keyTile) + residentOffset;
  const uint32_t valueAddress = smemAddress(valueTile) + residentOffset;
  constexpr int kHeld = kResidentInRegisters ? kKD : 1;
  uint32_t kf[kHeld][4], vf[kHeld][4];
  if constexpr (kResidentInRegisters) {
#pragma unroll
    for (int kk = 0; kk < kKD; ++kk) {
      loadMatrices(kf[kk], keyAddress + 16 * kk * 2);
      loadMatrices(vf[kk], valueAddress + 16 * kk * 2);
    }
  }
  auto loadK = [&](int kk, uint32_t(&f)[4]) {
    if constexpr (kResidentInRegisters) {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        f[e] = kf[kk][e];
    } else {
      loadMatrices(f, keyAddress + 16 * kk * 2);
    }
  };
  auto loadV = [&](int kk, uint32_t(&f)[4]) {
    if constexpr (kResidentInRegisters) {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        f[e] = vf[kk][e];
    } else {
      loadMatrices(f, valueAddress + 16 * kk * 2);
    }
  };

  float dkAcc[kND][4], dvAcc[kND][4];
  zero(dkAcc);
  zero(dvAcc);
  for (int step = 0; step < steps; ++step) {
    waitCopies();
    __syncthreads();
    if (step + 1 < steps)
      issue(step + 1);
    commitCopies();

    const unsigned char *stage = smem + (step & 1) * plan.stage;
    const int i0 = queryBegin + step % queryTiles * kQueries;
    // S^T (this warp's 16 keys x kQueries queries) and dP^T.
    float s[kNQ][4], dp[kNQ][4];
    zero(s);
    zero(dp);
    mmaTransposedB<T, kKD, kNQ, kStride>(
        s, loadK, smemAddress(stage) + laneOffsetB<kStride>(lane) * 2);
    if (dk != nullptr)
      mmaTransposedB<T, kKD, kNQ, kStride>(
          dp, loadV, smemAddress(stage + kQ) + laneOffsetB<kStride>(lane) * 2);

    const bool edge = i0 + kQueries > querySeq ||
                      (a.causal && j0 + kTcRows - 1 > i0);
    const float *lseTile = reinterpret_cast<const float *>(stage + kLse);
    const float *rowDotTile = reinterpret_cast<const float *>(stage + kRowDot);
    const T *maskTile = reinterpret_cast<const T *>(stage + kMask);
#pragma unroll
    for (int nt = 0; nt < kNQ; ++nt) {
      const int il = 8 * nt + 2 * t; // this thread's queries: il, il + 1
      const float2 lse2 = *reinterpret_cast<const float2 *>(lseTile + il);
      const float2 d2 = *reinterpret_cast<const float2 *>(rowDotTile + il);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int c = e & 1, jl = 16 * warp + g + 8 * (e >> 1);
        // As the forward computed it (one rounding of scale * dot + mask).
        float score =
            a.mask != nullptr
                ? fmaf(s[nt][e], a.scale,
                       toAcc(maskTile[(il + c) * kMaskStride + jl]))
                : s[nt][e] * a.scale;
        if (edge && (i0 + il + c >= querySeq ||
                     (a.causal && j0 + jl > i0 + il + c)))
          score = negativeInfinity();
        float lse = c ? lse2.y : lse2.x;
        // A wholly hidden row (lse -inf) has only -inf scores: probability 0.
        lse = lse == negativeInfinity() ? dInfinity<float>() : lse;
        const float p = exp2Approx((score - lse) * kLog2e);
        s[nt][e] = p;
        dp[nt][e] = p * (dp[nt][e] - (c ? d2.y : d2.x));
      }
    }
    if (dv != nullptr)
      mmaFromAccumulators<T, kQueries / 16, kND, kStride>(
          dvAcc, s, smemAddress(stage + kQ) + laneOffsetA<kStride>(lane) * 2);
    if (dk != nullptr)
      mmaFromAccumulators<T, kQueries / 16, kND, kStride>(
          dkAcc, dp, smemAddress(stage) + laneOffsetA<kStride>(lane) * 2);
  }

  __syncthreads();
  T *staging = reinterpret_cast<T *>(smem) + 16 * warp * kStride;
  if (dk != nullptr)
    storeRows<T, D>(dk + bkv * keySeq * D, dkAcc, a.scale, a.scale, staging,
                    j0 + 16 * warp, keySeq);
  if (dv != nullptr)
    storeRows<T, D>(dv + bkv * keySeq * D, dvAcc, 1.f, 1.f,
                    staging + kTcRows * kStride, j0 + 16 * warp, keySeq);
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

/// Whether the kernels take the call (apart from the result pointers): the
/// fast paths' shapes, with row offsets within one head in 32-bit
/// arithmetic.
template <typename T> bool takesCall(const AttentionArgs<T> &a) {
  if (!fastPathTakes(a))
    return false;
  const int64_t limit = INT_MAX - 2 * kTcRows * a.headDim;
  return a.querySeq * a.headDim <= limit && a.keySeq * a.headDim <= limit;
}

/// Whether the mask tiles can be copied in 16-byte chunks.
template <typename T> bool maskCopiesAsync(const AttentionArgs<T> &a) {
  return a.mask != nullptr && aligned16(a.mask) && a.maskStride[3] == 1 &&
         a.maskStride[0] % 8 == 0 && a.maskStride[1] % 8 == 0 &&
         a.maskStride[2] % 8 == 0 && a.keySeq % 8 == 0;
}

int64_t tilesOf(int64_t n, int64_t tile) { return (n + tile - 1) / tile; }

template <typename T, int D, int kKeys>
void launchForward(const AttentionArgs<T> &a, T *out, float *logsumexp,
                   unsigned blocks, cudaStream_t stream) {
  const char *kernel = "attention";
  const SmemPlan plan = forwardPlan<D, kKeys>(a.mask != nullptr);
  auto *f = tcForwardKernel<T, D, kKeys>;
  allowSharedMemory(f, plan.total, kernel);
  f<<<blocks, kTcThreads, plan.total, stream>>>(a, out, logsumexp,
                                                maskCopiesAsync(a));
  checkLaunch(kernel);
}

template <typename T>
bool forwardFast(const AttentionArgs<T> &a, T *out, float *logsumexp,
                 cudaStream_t stream) {
  if (!takesCall(a) || (out != nullptr && !aligned16(out)))
    return false;
  const int64_t blocks =
      a.batch * a.queryHeads * tilesOf(a.querySeq, kTcRows);
  if (blocks > INT_MAX)
    return false;
  const auto grid = static_cast<unsigned>(blocks);
  switch (a.headDim) {
  case 32: launchForward<T, 32, 64>(a, out, logsumexp, grid, stream); break;
  case 64: launchForward<T, 64, 64>(a, out, logsumexp, grid, stream); break;
  default: launchForward<T, 128, 64>(a, out, logsumexp, grid, stream); break;
  }
  return true;
}

/// The backward at head size D: key/value gradients with query tiles of
/// kQueries (K and V in registers or not), query gradients with key tiles
/// of kKeys.
template <typename T, int D, int kQueries, bool kResidentInRegisters,
          int kKeys>
void launchBackward(const AttentionArgs<T> &a, const T *dout,
                    const float *logsumexp, const float *rowDot, T *dq, T *dk,
                    T *dv, cudaStream_t stream) {
  const char *kernel = "attentionBackward";
  const bool maskAsync = maskCopiesAsync(a);
  if (dk != nullptr || dv != nullptr) {
    const SmemPlan plan =
        keyValueGradPlan<D, kQueries, kResidentInRegisters>(a.mask != nullptr);
    auto *f = tcKeyValueGradKernel<T, D, kQueries, kResidentInRegisters>;
    allowSharedMemory(f, plan.total, kernel);
    const auto blocks = static_cast<unsigned>(a.batch * a.kvHeads *
                                              tilesOf(a.keySeq, kTcRows));
    f<<<blocks, kTcThreads, plan.total, stream>>>(a, dout, logsumexp, rowDot,
                                                  dk, dv, maskAsync);
    checkLaunch(kernel);
  }
  if (dq != nullptr) {
    const SmemPlan plan = queryGradPlan<D, kKeys>(a.mask != nullptr);
    auto *f = tcQueryGradKernel<T, D, kKeys>;
    allowSharedMemory(f, plan.total, kernel);
    const auto blocks = static_cast<unsigned>(a.batch * a.queryHeads *
                                              tilesOf(a.querySeq, kTcRows));
    f<<<blocks, kTcThreads, plan.total, stream>>>(a, dout, logsumexp, rowDot,
                                                  dq, maskAsync);
    checkLaunch(kernel);
  }
}

template <typename T>
bool backwardFast(const AttentionArgs<T> &a, const T *dout,
                  const float *logsumexp, const float *rowDot, T *dq, T *dk,
                  T *dv, cudaStream_t stream) {
  if (!takesCall(a) || !aligned16(dout) || logsumexp == nullptr ||
      rowDot == nullptr)
    return false;
  for (const T *p : {dq, dk, dv})
    if (p != nullptr && !aligned16(p))
      return false;
  if (reinterpret_cast<uintptr_t>(logsumexp) % 4 != 0 ||
      reinterpret_cast<uintptr_t>(rowDot) % 4 != 0)
    return false;
  const int64_t group = a.queryHeads / a.kvHeads;
  if (a.batch * a.kvHeads * tilesOf(a.keySeq, kTcRows) > INT_MAX ||
      a.batch * a.queryHeads * tilesOf(a.querySeq, kTcRows) > INT_MAX ||
      group * tilesOf(a.querySeq, 32) > INT_MAX)
    return false;
  switch (a.headDim) {
  case 32:
    launchBackward<T, 32, 64, true, 64>(a, dout, logsumexp, rowDot, dq, dk, dv,
                                        stream);
    break;
  case 64:
    launchBackward<T, 64, 64, true, 64>(a, dout, logsumexp, rowDot, dq, dk, dv,
                                        stream);
    break;
  default:
    launchBackward<T, 128, 32, false, 32>(a, dout, logsumexp, rowDot, dq, dk,
                                          dv, stream);
    break;
  }
  return true;
}

} // namespace

bool attentionForwardFast(const AttentionArgs<__half> &a, __half *out,
                          float *logsumexp, cudaStream_t stream) {
  return forwardFast(a, out, logsumexp, stream);
}
bool attentionForwardFast(const AttentionArgs<__nv_bfloat16> &a,
                          __nv_bfloat16 *out, float *logsumexp,
                          cudaStream_t stream) {
  return forwardFast(a, out, logsumexp, stream);
}
bool attentionBackwardFast(const AttentionArgs<__half> &a, const __half *dout,
                           const float *logsumexp, const float *rowDot,
                           __half *dq, __half *dk, __half *dv,
                           cudaStream_t stream) {
  return backwardFast(a, dout, logsumexp, rowDot, dq, dk, dv, stream);
}
bool attentionBackwardFast(const AttentionArgs<__nv_bfloat16> &a,
                           const __nv_bfloat16 *dout, const float *logsumexp,
                           const float *rowDot, __nv_bfloat16 *dq,
                           __nv_bfloat16 *dk, __nv_bfloat16 *dv,
                           cudaStream_t stream) {
  return backwardFast(a, dout, logsumexp, rowDot, dq, dk, dv, stream);
}

} // namespace remat::rt::cuda::detail
