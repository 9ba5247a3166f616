//===- AttentionTiled.cu - fp32 fused attention, register-tiled -----------===//
//
// The fp32 fast path of the fused attention (Attention.cuh's hooks): the
// FlashAttention-2 algorithm of Attention.cu and AttentionGrad.cu, same
// semantics, but every product is a register-blocked SIMT GEMM on tiles in
// shared memory, in plain fp32 FMAs (no tensor cores, no TF32: results are
// held to fp32 accuracy).
//
// Tiling. Every tile has kTileRows = 64 rows (queries or keys) of a whole
// head (kD = 32, 64 or 128 floats); a block is 4 warps (128 threads). In a
// warp, lane = 8 * ly + lx (ly < 4, lx < 8). Two GEMM shapes:
//  - NT, C[64][64] = A B^T with A, B [64][kD] tiles (scores S = Q K^T, and
//    dP = dO V^T): thread (warp, ly, lx) owns a 4 x 8 micro-tile, rows
//    row(r) = 16 warp + ly + 4 r and columns col(c) = lx + 8 c. Each step of
//    four head elements reads 4 + 8 float4s for 128 FMAs. The 8 lanes that
//    share a row sit in one warp, so row maxima and sums are shuffles.
//  - TN, C[64][kD] += A^T B with A^T stored [64 (k)][64] and B [64 (k)][kD]
//    (O += P V, dV += P^T dO, dK += dS^T Q, dQ += dS K): the same thread
//    owns the same 4 rows and the columns 4 (lx + 8 c) + e (e < 4, c <
//    kD / 32); each k reads one float4 of A^T (the 4 rows) and kD / 32
//    float4s of B.
// An NT result goes through shared memory to become a TN operand
// (storeTransposed): a thread writes its four rows' values of column col(c)
// as one float4 at position 4 (4 warp + ly), so in A^T the row order is
// permuted; the TN reader owning the same rows reads them back in the same
// order.
//
// Tiles are row-major, each row padded by one float4 (a XOR swizzle of the
// float4s at kD = 128, see Tile), so that the float4 reads of eight
// different rows (an NT B operand) or of four rows' chunks hit distinct
// banks. Global tiles arrive with cp.async (sm_80+), zero-filled past the
// sequence, issued one phase ahead so that they land while the other
// operand is in use; the mask values of a score tile wait (cp.async too) in
// the reading thread's own slots of the P or dS tile. Shared memory bounds
// the blocks per SM (at kD = 64: 3 forward, 2 backward; registers are
// capped to match, kForwardBlocksPerSM...); the inner loops issue 128 FMAs
// per 12 float4 loads.
//
// Kernels (one writer per output element, fixed summation orders, no
// atomics: bitwise deterministic):
//  - forward: a block per (batch, query head, 64 queries), over key tiles:
//    S = Q K^T, online softmax (per row a running maximum m shared by the
//    row's 8 lanes and per-thread partial sums l), P to shared memory,
//    O += P V with O in registers. Causal: key tiles wholly above the
//    diagonal are skipped.
//  - key/value gradients: a block per (batch, kv head, 64 keys) with K and V
//    resident, over the group's query heads in order and their query tiles:
//    S^T = K Q^T, P^T = exp(S^T - lse), dP^T = V dO^T, dS^T = P^T (dP^T - D),
//    dK += dS^T Q, dV += P^T dO.
//  - query gradients: a block per (batch, query head, 64 queries) with Q and
//    dO resident, over key tiles: dP = dO V^T, S = Q K^T, P, dS,
//    dQ += dS K.
// Hidden pairs (causal j > i, a -inf score) have P = 0; a row with all
// pairs hidden gets output 0, logsumexp -inf and no gradient.
//
//===----------------------------------------------------------------------===//

#include "Attention.cuh"

#include <cstdint>
#include <type_traits>

namespace remat::rt::cuda::detail {

namespace {

/// Threads per block: 4 warps of 4 x 8 lanes.
constexpr int kTiledThreads = 128;
/// Rows of every tile (queries or keys).
constexpr int kTileRows = 64;
/// A thread's NT micro-tile.
constexpr int kMicroRows = 4, kMicroCols = 8;
static_assert(kTiledThreads / 32 * 16 == kTileRows, "16 rows per warp");
static_assert(8 * kMicroCols == kTileRows, "8 lanes per row");

/// The position of a thread in the tiles (see the header).
struct Layout {
  int warp, ly, lx;
  __device__ Layout()
      : warp(threadIdx.x / 32), ly(threadIdx.x % 32 / 8), lx(threadIdx.x % 8) {}
  /// The tile row of the thread's r-th micro-tile row.
  __device__ int row(int r) const { return 16 * warp + ly + 4 * r; }
  /// The tile column of the thread's c-th micro-tile column.
  __device__ int col(int c) const { return lx + 8 * c; }
  /// The float4 chunk that holds the thread's 4 rows in a transposed tile.
  __device__ int rowChunk() const { return 4 * warp + ly; }
  /// The float4 chunk of the thread's c-th column group in a TN result.
  __device__ int colChunk(int c) const { return lx + 8 * c; }
};

//===----------------------------------------------------------------------===//
// Shared-memory tiles
//===----------------------------------------------------------------------===//

/// A row-major tile of kTileRows rows of kWidth floats, laid out so that
/// the GEMMs' float4 reads (eight rows at one chunk, or four rows' chunks)
/// hit distinct banks: each row padded by one float4, so that row r starts
/// r chunks later modulo 8 and every address is a thread constant plus an
/// immediate; or, at kWidth = 128, where the padding would cost the forward
/// a block per SM, with chunk c of row r stored at chunk c ^ (r & 7).
template <int kWidth> struct Tile {
  static_assert(kWidth % 32 == 0, "at least eight chunks a row");
  static constexpr bool kSwizzled = kWidth > 64;
  static constexpr int kStride = kSwizzled ? kWidth : kWidth + 4;
  static constexpr int kFloats = kTileRows * kStride;
  /// The offset of float4 chunk `chunk` of row `row`.
  __device__ static int at(int row, int chunk) {
    return kSwizzled ? row * kWidth + ((chunk ^ (row & 7)) << 2)
                     : row * kStride + 4 * chunk;
  }
};
/// The transposed P and dS tiles ([64][64]).
using SquareTile = Tile<kTileRows>;

__device__ inline float4 load4(const float *p) {
  return *reinterpret_cast<const float4 *>(p);
}
__device__ inline void store4(float *p, float4 v) {
  *reinterpret_cast<float4 *>(p) = v;
}
/// Component e of v (e a constant after unrolling).
__device__ inline float part(const float4 &v, int e) {
  return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}

__device__ inline unsigned sharedAddress(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Starts copying 16 bytes from global memory to shared memory; zeros
/// instead when !valid (src is then not read).
__device__ inline void copyAsync16(float *dst, const float *src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                   sharedAddress(dst)),
               "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}
/// The same for 4 bytes.
__device__ inline void copyAsync4(float *dst, const float *src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(
                   sharedAddress(dst)),
               "l"(src), "r"(valid ? 4 : 0)
               : "memory");
}
/// Closes the group of copies started since the last commit.
__device__ inline void commitCopies() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
/// Waits for all but the kPending most recent groups of this thread's
/// copies; a __syncthreads() must follow before other threads' copies are
/// read.
template <int kPending> __device__ inline void waitCopies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

/// Starts copying rows [first, first + kTileRows) of a row-major [rows, kD]
/// matrix into a Tile<kD>; rows past `rows` become zeros.
template <int kD>
__device__ inline void copyTileAsync(float *tile, const float *matrix,
                                     int64_t first, int64_t rows) {
  constexpr int kChunks = kD / 4;
  static_assert(kTileRows * kChunks % kTiledThreads == 0, "whole passes");
#pragma unroll
  for (int u = 0; u < kTileRows * kChunks / kTiledThreads; ++u) {
    const int idx = u * kTiledThreads + threadIdx.x;
    const int r = idx / kChunks, chunk = idx % kChunks;
    const bool valid = first + r < rows;
    // Consecutive threads copy consecutive chunks of a row (coalesced).
    copyAsync16(tile + Tile<kD>::at(r, chunk),
                valid ? matrix + (first + r) * kD + 4 * chunk : matrix, valid);
  }
}

/// Starts copying values [first, first + kTileRows) of a vector into
/// `dst`; zeros past `count`.
__device__ inline void copyRowValuesAsync(float *dst, const float *values,
                                          int64_t first, int64_t count) {
  if (threadIdx.x < kTileRows) {
    const bool valid = first + threadIdx.x < count;
    copyAsync4(dst + threadIdx.x, valid ? values + first + threadIdx.x : values,
               valid);
  }
}

//===----------------------------------------------------------------------===//
// Register-tiled products
//===----------------------------------------------------------------------===//

/// acc[r][c] += sum_d a[row(r)][d] * b[col(c)][d], over d in order: a and b
/// are Tile<kD>s.
template <int kD>
__device__ inline void gemmNT(float (&acc)[kMicroRows][kMicroCols],
                              const float *a, const float *b,
                              const Layout &t) {
#pragma unroll 1
  for (int chunk = 0; chunk < kD / 4; ++chunk) {
    float4 x[kMicroRows], y[kMicroCols];
#pragma unroll
    for (int r = 0; r < kMicroRows; ++r)
      x[r] = load4(a + Tile<kD>::at(t.row(r), chunk));
#pragma unroll
    for (int c = 0; c < kMicroCols; ++c)
      y[c] = load4(b + Tile<kD>::at(t.col(c), chunk));
#pragma unroll
    for (int e = 0; e < 4; ++e)
#pragma unroll
      for (int r = 0; r < kMicroRows; ++r)
#pragma unroll
        for (int c = 0; c < kMicroCols; ++c)
          acc[r][c] = fmaf(part(x[r], e), part(y[c], e), acc[r][c]);
  }
}

/// acc[r][4 c + e] += sum_k at[k][the thread's r-th row] * b[k][4
/// colChunk(c) + e], over k in order: at is a transposed [kTileRows]
/// [kTileRows] SquareTile (storeTransposed), b a Tile<kD>.
template <int kD>
__device__ inline void gemmTN(float (&acc)[kMicroRows][kD / 8],
                              const float *at, const float *b,
                              const Layout &t) {
  constexpr int kGroups = kD / 32; // float4s of b per k
#pragma unroll 1
  for (int k0 = 0; k0 < kTileRows; k0 += 8) {
    const float *atRows = at + k0 * SquareTile::kStride;
    const float *bRows = b + k0 * Tile<kD>::kStride;
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      // Row k0 + u of the tiles: (k0 + u) & 7 == u, so a swizzle is a
      // constant XOR.
      const float4 x = load4(atRows + SquareTile::at(u, t.rowChunk()));
      float4 y[kGroups];
#pragma unroll
      for (int c = 0; c < kGroups; ++c)
        y[c] = load4(bRows + Tile<kD>::at(u, t.colChunk(c)));
#pragma unroll
      for (int r = 0; r < kMicroRows; ++r)
#pragma unroll
        for (int c = 0; c < kGroups; ++c)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            acc[r][4 * c + e] =
                fmaf(part(x, r), part(y[c], e), acc[r][4 * c + e]);
    }
  }
}

/// Writes an NT result transposed, as gemmTN's `at` operand: v[r][c] goes
/// to row col(c), at the thread's r-th position of rowChunk().
__device__ inline void storeTransposed(float *buf,
                                       const float (&v)[kMicroRows][kMicroCols],
                                       const Layout &t) {
#pragma unroll
  for (int c = 0; c < kMicroCols; ++c)
    store4(buf + SquareTile::at(t.col(c), t.rowChunk()),
           make_float4(v[0][c], v[1][c], v[2][c], v[3][c]));
}

/// This thread's values of column col(c) of a transposed tile (what
/// storeTransposed wrote).
__device__ inline float4 loadTransposed(const float *buf, int c,
                                        const Layout &t) {
  return load4(buf + SquareTile::at(t.col(c), t.rowChunk()));
}

/// Zeroes an accumulator array.
template <int kRows, int kCols>
__device__ inline void zero(float (&acc)[kRows][kCols]) {
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int c = 0; c < kCols; ++c)
      acc[r][c] = 0.0f;
}

//===----------------------------------------------------------------------===//
// Scores
//===----------------------------------------------------------------------===//

/// The mask of one (batch, query head) (null without a mask).
__device__ inline const float *headMask(const AttentionArgs<float> &a,
                                        int64_t b, int64_t h) {
  return a.mask == nullptr
             ? nullptr
             : a.mask + b * a.maskStride[0] + h * a.maskStride[1];
}

/// Starts copying the mask values of this thread's NT micro-tile of a score
/// tile (rows from `firstRow`, columns from `firstCol`; keys as rows when
/// kKeyRows, else queries) into its own slots of the transposed tile `buf`,
/// where storeTransposed will later put the tile's P or dS: no other thread
/// reads them, so waitCopies alone makes them visible, and they take no
/// registers while in flight. Returns the visible pairs (bit 8 r + c);
/// hidden pairs (past a sequence, causal j > i) are not read. Copies
/// nothing without a mask.
template <bool kKeyRows>
__device__ inline uint32_t copyMaskAsync(float *buf,
                                         const AttentionArgs<float> &a,
                                         const float *mask, int64_t firstRow,
                                         int64_t firstCol, const Layout &t) {
  const int64_t firstQuery = kKeyRows ? firstCol : firstRow;
  const int64_t firstKey = kKeyRows ? firstRow : firstCol;
  // Inside both sequences and (causal) wholly on or below the diagonal.
  const bool interior = firstQuery + kTileRows <= a.querySeq &&
                        firstKey + kTileRows <= a.keySeq &&
                        (!a.causal || firstKey + kTileRows - 1 <= firstQuery);
  uint32_t visible = ~0u;
  if (!interior) {
    visible = 0;
#pragma unroll
    for (int r = 0; r < kMicroRows; ++r)
#pragma unroll
      for (int c = 0; c < kMicroCols; ++c) {
        const int64_t i = firstQuery + (kKeyRows ? t.col(c) : t.row(r));
        const int64_t j = firstKey + (kKeyRows ? t.row(r) : t.col(c));
        if (i < a.querySeq && j < a.keySeq && !(a.causal && j > i))
          visible |= 1u << (kMicroCols * r + c);
      }
  }
  if (mask == nullptr)
    return visible;
  const int64_t rowStride = kKeyRows ? a.maskStride[3] : a.maskStride[2];
  const int64_t colStride = kKeyRows ? a.maskStride[2] : a.maskStride[3];
  auto copyAll = [&](auto isVisible) {
    // Column c is 8 c columns after column 0: one pointer step apart.
    const int64_t colStep = 8 * colStride;
#pragma unroll
    for (int r = 0; r < kMicroRows; ++r) {
      const float *src = mask + (firstRow + t.row(r)) * rowStride +
                         (firstCol + t.col(0)) * colStride;
#pragma unroll
      for (int c = 0; c < kMicroCols; ++c, src += colStep) {
        const bool valid = isVisible(r, c);
        copyAsync4(buf + SquareTile::at(t.col(c), t.rowChunk()) + r,
                   valid ? src : mask, valid);
      }
    }
  };
  // Interior tiles (all of them but the edges and the causal diagonal)
  // test no bits.
  if (interior)
    copyAll([](int, int) { return true; });
  else
    copyAll([&](int r, int c) {
      return ((visible >> (kMicroCols * r + c)) & 1u) != 0;
    });
  return visible;
}

/// Turns dot products into scores: scale * dot + mask (from this thread's
/// slots of `buf`, copyMaskAsync), -inf where hidden.
__device__ inline void scoreTile(float (&s)[kMicroRows][kMicroCols],
                                 const float *buf, bool hasMask,
                                 uint32_t visible, float scale,
                                 const Layout &t) {
#pragma unroll
  for (int c = 0; c < kMicroCols; ++c) {
    const float4 mk = hasMask ? loadTransposed(buf, c, t)
                              : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int r = 0; r < kMicroRows; ++r)
      s[r][c] = (visible >> (kMicroCols * r + c)) & 1u
                    ? s[r][c] * scale + part(mk, r)
                    : -dInfinity<float>();
  }
}

/// The probability of a pair from its score and its row's logsumexp: 0 for
/// a hidden pair (also when the whole row is, lse = -inf).
__device__ inline float probability(float s, float lse) {
  return s == -dInfinity<float>() ? 0.0f : dExp(s - lse);
}

/// The maximum of v over the 8 lanes that share a row.
__device__ inline float rowMax(float v) {
#pragma unroll
  for (int offset = 1; offset < 8; offset *= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = other > v ? other : v;
  }
  return v;
}
/// The sum of v over the 8 lanes that share a row (bitwise equal in all).
__device__ inline float rowSum(float v) {
#pragma unroll
  for (int offset = 1; offset < 8; offset *= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

/// Writes a TN accumulator's rows (times `factor`) to a row-major [rows, kD]
/// matrix, rows from `first`; rows past `rows` are dropped.
template <int kD>
__device__ inline void storeRows(float *matrix,
                                 const float (&acc)[kMicroRows][kD / 8],
                                 const float (&factor)[kMicroRows],
                                 int64_t first, int64_t rows,
                                 const Layout &t) {
#pragma unroll
  for (int r = 0; r < kMicroRows; ++r) {
    const int64_t row = first + t.row(r);
    if (row >= rows)
      continue;
#pragma unroll
    for (int c = 0; c < kD / 32; ++c)
      store4(matrix + row * kD + 4 * t.colChunk(c),
             make_float4(acc[r][4 * c] * factor[r],
                         acc[r][4 * c + 1] * factor[r],
                         acc[r][4 * c + 2] * factor[r],
                         acc[r][4 * c + 3] * factor[r]));
  }
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// Floats of shared memory of the kernels.
template <int kD> constexpr int forwardSharedFloats() {
  return 3 * Tile<kD>::kFloats + SquareTile::kFloats;
}
template <int kD> constexpr int keyValueGradSharedFloats() {
  return 4 * Tile<kD>::kFloats + 2 * SquareTile::kFloats + 2 * kTileRows;
}
template <int kD> constexpr int queryGradSharedFloats() {
  return 4 * Tile<kD>::kFloats + SquareTile::kFloats;
}

/// Blocks per SM that the register allocation must allow: as many as the
/// shared memory above allows on an H100 (228 KiB), at most 3 (168
/// registers a thread; fewer spill).
template <int kD>
constexpr int kForwardBlocksPerSM = kD == 128 ? 2 : 3;
template <int kD>
constexpr int kKeyValueGradBlocksPerSM = kD == 128 ? 1 : kD == 64 ? 2 : 3;
template <int kD>
constexpr int kQueryGradBlocksPerSM = kD == 128 ? 1 : kD == 64 ? 2 : 3;

template <int kD>
__global__ void __launch_bounds__(kTiledThreads, kForwardBlocksPerSM<kD>)
    tiledAttentionForwardKernel(AttentionArgs<float> a, float *out,
                                float *logsumexp) {
  extern __shared__ __align__(16) float tiledShared[];
  float *queryTile = tiledShared;                    // [64][kD]
  float *keyTile = queryTile + Tile<kD>::kFloats;       // [64][kD]
  float *valueTile = keyTile + Tile<kD>::kFloats;       // [64][kD]
  float *probTile = valueTile + Tile<kD>::kFloats;      // P^T, [64 keys][64]
  const Layout t;

  const int64_t tiles = (a.querySeq + kTileRows - 1) / kTileRows;
  const int64_t bh = blockIdx.x / tiles; // b * Hq + h
  const int64_t b = bh / a.queryHeads, h = bh % a.queryHeads;
  const int64_t kvHead = b * a.kvHeads + h / (a.queryHeads / a.kvHeads);
  const int64_t firstRow = (blockIdx.x % tiles) * kTileRows;
  const float *keys = a.k + kvHead * a.keySeq * kD;
  const float *values = a.v + kvHead * a.keySeq * kD;
  const float *mask = headMask(a, b, h);
  // Causal: no row of this tile sees a key past its last row.
  const int64_t keyEnd = a.causal && firstRow + kTileRows < a.keySeq
                             ? firstRow + kTileRows
                             : a.keySeq;

  // Groups in flight: Q with K_0, then V_0.
  copyTileAsync<kD>(queryTile, a.q + bh * a.querySeq * kD, firstRow,
                    a.querySeq);
  copyTileAsync<kD>(keyTile, keys, 0, a.keySeq);
  commitCopies();
  copyTileAsync<kD>(valueTile, values, 0, a.keySeq);
  commitCopies();

  float o[kMicroRows][kD / 8];
  zero(o);
  float m[kMicroRows], l[kMicroRows]; // l: this thread's share of the sum
#pragma unroll
  for (int r = 0; r < kMicroRows; ++r) {
    m[r] = -dInfinity<float>();
    l[r] = 0.0f;
  }

  for (int64_t firstKey = 0; firstKey < keyEnd; firstKey += kTileRows) {
    const int64_t nextKey = firstKey + kTileRows;
    // The mask waits in this thread's slots of P (free since the last sync).
    const uint32_t visible =
        copyMaskAsync<false>(probTile, a, mask, firstRow, firstKey, t);
    commitCopies();
    waitCopies<2>(); // K_t (V_t and the mask may still be in flight)
    __syncthreads();

    float s[kMicroRows][kMicroCols];
    zero(s);
    gemmNT<kD>(s, queryTile, keyTile, t);
    waitCopies<0>(); // V_t and the mask
    scoreTile(s, probTile, mask != nullptr, visible, a.scale, t);

    // Online softmax: the new row maxima, shared by the row's 8 lanes.
#pragma unroll
    for (int r = 0; r < kMicroRows; ++r) {
      float tileMax = s[r][0];
#pragma unroll
      for (int c = 1; c < kMicroCols; ++c)
        tileMax = s[r][c] > tileMax ? s[r][c] : tileMax;
      tileMax = rowMax(tileMax);
      const float mNew = m[r] > tileMax ? m[r] : tileMax;
      // With every key so far hidden, subtract 0 instead of -inf (no NaN).
      const float shift = mNew == -dInfinity<float>() ? 0.0f : mNew;
      const float rescale = dExp(m[r] - shift); // 0 while m is -inf
      l[r] *= rescale;
#pragma unroll
      for (int c = 0; c < kD / 8; ++c)
        o[r][c] *= rescale;
      m[r] = mNew;
#pragma unroll
      for (int c = 0; c < kMicroCols; ++c) {
        s[r][c] = dExp(s[r][c] - shift); // 0 where hidden
        l[r] += s[r][c];
      }
    }
    storeTransposed(probTile, s, t); // over the mask's slots

    __syncthreads(); // P and V_t visible; K_t consumed
    if (nextKey < keyEnd)
      copyTileAsync<kD>(keyTile, keys, nextKey, a.keySeq);
    commitCopies();

    gemmTN<kD>(o, probTile, valueTile, t);
    __syncthreads(); // P and V_t consumed
    if (nextKey < keyEnd)
      copyTileAsync<kD>(valueTile, values, nextKey, a.keySeq);
    commitCopies();
  }

  float inverse[kMicroRows];
#pragma unroll
  for (int r = 0; r < kMicroRows; ++r) {
    l[r] = rowSum(l[r]);
    inverse[r] = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
  }
  storeRows<kD>(out + bh * a.querySeq * kD, o, inverse, firstRow, a.querySeq,
                t);
  // logsumexp is absent when nothing differentiates this op.
  if (logsumexp != nullptr && t.lx == 0) {
#pragma unroll
    for (int r = 0; r < kMicroRows; ++r) {
      const int64_t i = firstRow + t.row(r);
      if (i < a.querySeq)
        logsumexp[bh * a.querySeq + i] =
            l[r] > 0.0f ? m[r] + dLog(l[r]) : -dInfinity<float>();
    }
  }
}

template <int kD>
__global__ void __launch_bounds__(kTiledThreads, kKeyValueGradBlocksPerSM<kD>)
    tiledAttentionKeyValueGradKernel(AttentionArgs<float> a, const float *dout,
                                     const float *logsumexp,
                                     const float *rowDot, float *dk,
                                     float *dv) {
  extern __shared__ __align__(16) float tiledShared[];
  float *keyTile = tiledShared;                        // [64][kD], resident
  float *valueTile = keyTile + Tile<kD>::kFloats;         // [64][kD], resident
  float *queryTile = valueTile + Tile<kD>::kFloats;       // [64][kD]
  float *doutTile = queryTile + Tile<kD>::kFloats;        // [64][kD]
  float *probTile = doutTile + Tile<kD>::kFloats;         // P, [64 queries][64]
  float *dsTile = probTile + SquareTile::kFloats;    // dS, [64 queries][64]
  float *lseTile = dsTile + SquareTile::kFloats;     // [64]
  float *rowDotTile = lseTile + kTileRows;             // [64]
  const Layout t;

  const int64_t tiles = (a.keySeq + kTileRows - 1) / kTileRows;
  const int64_t bkv = blockIdx.x / tiles; // b * Hkv + kv head
  const int64_t b = bkv / a.kvHeads, kvHead = bkv % a.kvHeads;
  const int64_t group = a.queryHeads / a.kvHeads;
  const int64_t firstKey = (blockIdx.x % tiles) * kTileRows;
  // Causal: queries before the tile's first key see none of its keys.
  const int64_t queryBegin = a.causal ? firstKey : 0;
  const int64_t queryTiles =
      a.querySeq > queryBegin
          ? (a.querySeq - queryBegin + kTileRows - 1) / kTileRows
          : 0;
  // Steps: the group's query heads in order, each over its query tiles.
  const int64_t steps = group * queryTiles;
  auto headOf = [&](int64_t step) { return kvHead * group + step / queryTiles; };
  auto firstQueryOf = [&](int64_t step) {
    return queryBegin + (step % queryTiles) * kTileRows;
  };
  auto copyQueries = [&](int64_t step) { // Q and logsumexp of a step
    if (step < steps) {
      const int64_t bh = b * a.queryHeads + headOf(step);
      copyTileAsync<kD>(queryTile, a.q + bh * a.querySeq * kD,
                        firstQueryOf(step), a.querySeq);
      copyRowValuesAsync(lseTile, logsumexp + bh * a.querySeq,
                         firstQueryOf(step), a.querySeq);
    }
  };
  auto copyDouts = [&](int64_t step) { // dO and D of a step
    if (step < steps) {
      const int64_t bh = b * a.queryHeads + headOf(step);
      copyTileAsync<kD>(doutTile, dout + bh * a.querySeq * kD,
                        firstQueryOf(step), a.querySeq);
      copyRowValuesAsync(rowDotTile, rowDot + bh * a.querySeq,
                         firstQueryOf(step), a.querySeq);
    }
  };

  // Groups in flight: K, V with Q_0; then dO_0.
  copyTileAsync<kD>(keyTile, a.k + bkv * a.keySeq * kD, firstKey, a.keySeq);
  copyTileAsync<kD>(valueTile, a.v + bkv * a.keySeq * kD, firstKey, a.keySeq);
  copyQueries(0);
  commitCopies();
  copyDouts(0);
  commitCopies();

  float dkAcc[kMicroRows][kD / 8], dvAcc[kMicroRows][kD / 8];
  zero(dkAcc);
  zero(dvAcc);

  for (int64_t step = 0; step < steps; ++step) {
    const int64_t h = headOf(step), firstQuery = firstQueryOf(step);
    // The mask waits in this thread's slots of P (free since the last sync).
    const float *mask = headMask(a, b, h);
    const uint32_t visible =
        copyMaskAsync<true>(probTile, a, mask, firstKey, firstQuery, t);
    commitCopies();
    waitCopies<2>(); // Q_s and lse (dO_s, D and the mask may be in flight)
    __syncthreads();

    {
      // P^T = exp(S^T - lse), S^T = K Q^T; kept in shared memory only.
      float p[kMicroRows][kMicroCols];
      zero(p);
      gemmNT<kD>(p, keyTile, queryTile, t);
      waitCopies<0>(); // dO_s, D and the mask
      scoreTile(p, probTile, mask != nullptr, visible, a.scale, t);
#pragma unroll
      for (int c = 0; c < kMicroCols; ++c) {
        const float lse = lseTile[t.col(c)];
#pragma unroll
        for (int r = 0; r < kMicroRows; ++r)
          p[r][c] = probability(p[r][c], lse);
      }
      storeTransposed(probTile, p, t); // over the mask's slots
    }
    __syncthreads(); // dO_s and D visible
    {
      // dS^T = P^T (dP^T - D), dP^T = V dO^T.
      float ds[kMicroRows][kMicroCols];
      zero(ds);
      gemmNT<kD>(ds, valueTile, doutTile, t);
#pragma unroll
      for (int c = 0; c < kMicroCols; ++c) {
        const float4 p = loadTransposed(probTile, c, t); // this thread's
        const float d = rowDotTile[t.col(c)];
#pragma unroll
        for (int r = 0; r < kMicroRows; ++r)
          ds[r][c] = part(p, r) * (ds[r][c] - d);
      }
      storeTransposed(dsTile, ds, t);
    }
    __syncthreads(); // P and dS visible

    gemmTN<kD>(dkAcc, dsTile, queryTile, t); // dK += dS^T Q
    __syncthreads();                         // Q_s consumed
    copyQueries(step + 1);
    commitCopies();
    gemmTN<kD>(dvAcc, probTile, doutTile, t); // dV += P^T dO
    __syncthreads();                          // dO_s, P and dS consumed
    copyDouts(step + 1);
    commitCopies();
  }
  waitCopies<0>(); // none outlives the block (K and V when no step ran)

  float factor[kMicroRows];
  if (dk != nullptr) {
#pragma unroll
    for (int r = 0; r < kMicroRows; ++r)
      factor[r] = a.scale;
    storeRows<kD>(dk + bkv * a.keySeq * kD, dkAcc, factor, firstKey, a.keySeq,
                  t);
  }
  if (dv != nullptr) {
#pragma unroll
    for (int r = 0; r < kMicroRows; ++r)
      factor[r] = 1.0f;
    storeRows<kD>(dv + bkv * a.keySeq * kD, dvAcc, factor, firstKey, a.keySeq,
                  t);
  }
}

template <int kD>
__global__ void __launch_bounds__(kTiledThreads, kQueryGradBlocksPerSM<kD>)
    tiledAttentionQueryGradKernel(AttentionArgs<float> a, const float *dout,
                                  const float *logsumexp, const float *rowDot,
                                  float *dq) {
  extern __shared__ __align__(16) float tiledShared[];
  float *queryTile = tiledShared;                  // [64][kD], resident
  float *doutTile = queryTile + Tile<kD>::kFloats;    // [64][kD], resident
  float *keyTile = doutTile + Tile<kD>::kFloats;      // [64][kD]
  float *valueTile = keyTile + Tile<kD>::kFloats;     // [64][kD]
  float *dsTile = valueTile + Tile<kD>::kFloats;      // dS^T, [64 keys][64]
  const Layout t;

  const int64_t tiles = (a.querySeq + kTileRows - 1) / kTileRows;
  const int64_t bh = blockIdx.x / tiles;
  const int64_t b = bh / a.queryHeads, h = bh % a.queryHeads;
  const int64_t kvHead = b * a.kvHeads + h / (a.queryHeads / a.kvHeads);
  const int64_t firstRow = (blockIdx.x % tiles) * kTileRows;
  const float *keys = a.k + kvHead * a.keySeq * kD;
  const float *values = a.v + kvHead * a.keySeq * kD;
  const float *mask = headMask(a, b, h);
  const int64_t keyEnd = a.causal && firstRow + kTileRows < a.keySeq
                             ? firstRow + kTileRows
                             : a.keySeq;

  // Groups in flight: Q, dO with V_0; then K_0.
  copyTileAsync<kD>(queryTile, a.q + bh * a.querySeq * kD, firstRow,
                    a.querySeq);
  copyTileAsync<kD>(doutTile, dout + bh * a.querySeq * kD, firstRow,
                    a.querySeq);
  copyTileAsync<kD>(valueTile, values, 0, a.keySeq);
  commitCopies();
  copyTileAsync<kD>(keyTile, keys, 0, a.keySeq);
  commitCopies();

  // The thread's rows' logsumexp and D (unused past the sequence: hidden).
  float lse[kMicroRows], rowD[kMicroRows];
#pragma unroll
  for (int r = 0; r < kMicroRows; ++r) {
    const int64_t i = firstRow + t.row(r);
    lse[r] = i < a.querySeq ? logsumexp[bh * a.querySeq + i] : 0.0f;
    rowD[r] = i < a.querySeq ? rowDot[bh * a.querySeq + i] : 0.0f;
  }
  float dqAcc[kMicroRows][kD / 8];
  zero(dqAcc);

  for (int64_t firstKey = 0; firstKey < keyEnd; firstKey += kTileRows) {
    const int64_t nextKey = firstKey + kTileRows;
    // The mask waits in this thread's slots of dS (free since the last
    // sync).
    const uint32_t visible =
        copyMaskAsync<false>(dsTile, a, mask, firstRow, firstKey, t);
    commitCopies();
    waitCopies<2>(); // V_t (K_t and the mask may still be in flight)
    __syncthreads();

    float ds[kMicroRows][kMicroCols]; // dP = dO V^T, then dS
    zero(ds);
    gemmNT<kD>(ds, doutTile, valueTile, t);

    waitCopies<1>(); // K_t (the mask may still be in flight)
    __syncthreads(); // K_t visible; V_t consumed
    if (nextKey < keyEnd)
      copyTileAsync<kD>(valueTile, values, nextKey, a.keySeq);
    commitCopies();

    float s[kMicroRows][kMicroCols];
    zero(s);
    gemmNT<kD>(s, queryTile, keyTile, t);
    waitCopies<1>(); // the mask (V_t+1 may still be in flight)
    scoreTile(s, dsTile, mask != nullptr, visible, a.scale, t);
#pragma unroll
    for (int r = 0; r < kMicroRows; ++r)
#pragma unroll
      for (int c = 0; c < kMicroCols; ++c)
        ds[r][c] = probability(s[r][c], lse[r]) * (ds[r][c] - rowD[r]);
    storeTransposed(dsTile, ds, t); // over the mask's slots
    __syncthreads();                // dS visible

    gemmTN<kD>(dqAcc, dsTile, keyTile, t); // dQ += dS K
    __syncthreads();                       // K_t and dS consumed
    if (nextKey < keyEnd)
      copyTileAsync<kD>(keyTile, keys, nextKey, a.keySeq);
    commitCopies();
  }

  float factor[kMicroRows];
#pragma unroll
  for (int r = 0; r < kMicroRows; ++r)
    factor[r] = a.scale;
  storeRows<kD>(dq + bh * a.querySeq * kD, dqAcc, factor, firstRow,
                a.querySeq, t);
}

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

/// The blocks of a grid of `units` x ceil(rows / kTileRows), or 0 if that
/// is over a grid's limit.
unsigned tileGrid(int64_t units, int64_t rows) {
  const int64_t blocks = units * ((rows + kTileRows - 1) / kTileRows);
  return blocks <= 0x7fffffff ? static_cast<unsigned>(blocks) : 0u;
}

/// Calls f(std::integral_constant<int, kD>{}) for a head size the tiled
/// kernels are compiled for (fastPathTakes checked it).
template <typename F> void dispatchTiledHeadDim(int64_t dim, F &&f) {
  if (dim == 32)
    f(std::integral_constant<int, 32>{});
  else if (dim == 64)
    f(std::integral_constant<int, 64>{});
  else
    f(std::integral_constant<int, 128>{});
}

} // namespace

bool attentionForwardFast(const AttentionArgs<float> &a, float *out,
                          float *logsumexp, cudaStream_t stream) {
  const char *kernel = "attention";
  if (!fastPathTakes(a) || !aligned16(out))
    return false;
  const unsigned blocks = tileGrid(a.batch * a.queryHeads, a.querySeq);
  if (blocks == 0)
    return false;
  dispatchTiledHeadDim(a.headDim, [&](auto dim) {
    constexpr int kD = decltype(dim)::value;
    const size_t shared = forwardSharedFloats<kD>() * sizeof(float);
    auto *f = tiledAttentionForwardKernel<kD>;
    allowSharedMemory(f, shared, kernel);
    f<<<blocks, kTiledThreads, shared, stream>>>(a, out, logsumexp);
    checkLaunch(kernel);
  });
  return true;
}

bool attentionBackwardFast(const AttentionArgs<float> &a, const float *dout,
                           const float *logsumexp, const float *rowDot,
                           float *dq, float *dk, float *dv,
                           cudaStream_t stream) {
  const char *kernel = "attentionBackward";
  if (!fastPathTakes(a) || !aligned16(dout) || !aligned16(dq) ||
      !aligned16(dk) || !aligned16(dv))
    return false;
  const unsigned kvBlocks = tileGrid(a.batch * a.kvHeads, a.keySeq);
  const unsigned qBlocks = tileGrid(a.batch * a.queryHeads, a.querySeq);
  if (kvBlocks == 0 || qBlocks == 0)
    return false;
  dispatchTiledHeadDim(a.headDim, [&](auto dim) {
    constexpr int kD = decltype(dim)::value;
    if (dk != nullptr || dv != nullptr) {
      const size_t shared = keyValueGradSharedFloats<kD>() * sizeof(float);
      auto *f = tiledAttentionKeyValueGradKernel<kD>;
      allowSharedMemory(f, shared, kernel);
      f<<<kvBlocks, kTiledThreads, shared, stream>>>(a, dout, logsumexp,
                                                      rowDot, dk, dv);
      checkLaunch(kernel);
    }
    if (dq != nullptr) {
      const size_t shared = queryGradSharedFloats<kD>() * sizeof(float);
      auto *f = tiledAttentionQueryGradKernel<kD>;
      allowSharedMemory(f, shared, kernel);
      f<<<qBlocks, kTiledThreads, shared, stream>>>(a, dout, logsumexp,
                                                     rowDot, dq);
      checkLaunch(kernel);
    }
  });
  return true;
}

} // namespace remat::rt::cuda::detail
