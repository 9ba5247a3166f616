//===- Indexing.cuh - Broadcasting and strided index math -------*- CUDA
//-*-===//
//
// Broadcasting elementwise ops, expand, transpose, slice and reductions all
// map a row-major position of one shape to element offsets of several
// operands with their own strides. The host builds an Indexer (shape and
// per-operand strides, passed to the kernel by value in a fixed-size struct)
// after dropping unit dims and merging dims that are contiguous for every
// operand, so common cases (same shapes, scalar operands) have rank 1 and no
// division on the device. The strides, the merging and the host-side
// forEachRun (used where the host issues one call per run: batched GEMMs)
// are common/StridedLoop.h's, shared with the CPU. Where every position and
// offset fits 32 bits (nearly always), the division runs in 32 bits: a GPU
// has no 64-bit integer divider, and nvcc's 64-bit division routine costs
// several times the 32-bit sequence per dim per element.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CUDA_INDEXING_CUH
#define REMAT_RUNTIME_CUDA_INDEXING_CUH

#include "Common.cuh"

#include "common/AxisExtents.h"
#include "common/StridedLoop.h"

#include <array>
#include <cstdint>
#include <vector>

namespace remat::rt::cuda::detail {

// Unrolled on the device (so the arrays stay in registers); the host
// compiler, which also compiles offsets() for host-side checks, has no such
// pragma.
#ifdef __CUDA_ARCH__
#define REMAT_UNROLL _Pragma("unroll")
#else
#define REMAT_UNROLL
#endif

/// Most dims a merged iteration space may keep.
constexpr int kMaxRank = 8;

/// Maps a row-major position in a (merged) shape to the element offsets of
/// N operands. Rank 0 means a single position.
template <int N> struct Indexer {
  int rank = 0;
  /// Whether offsets() may work in 32 bits (chooseIndexWidth); false is
  /// always correct.
  bool narrow = false;
  int64_t shape[kMaxRank] = {};
  int64_t strides[N][kMaxRank] = {};

  /// Sets `narrow` when 32-bit arithmetic is exact for every position of
  /// the shape: fewer than 2^31 positions, and for each operand the sum of
  /// (extent - 1) * |stride| over the dims below 2^31, which bounds every
  /// partial sum of its offset. Called once the shape and strides are set.
  void chooseIndexWidth() {
    constexpr int64_t kMax = INT32_MAX;
    int64_t positions = 1;
    narrow = true;
    for (int d = 0; d < rank && narrow; ++d) {
      narrow = shape[d] >= 0 && shape[d] <= kMax;
      if (narrow && shape[d] > 0) {
        positions *= shape[d];
        narrow = positions <= kMax;
      }
    }
    for (int k = 0; k < N && narrow; ++k) {
      int64_t reach = 0;
      for (int d = 0; d < rank && narrow; ++d) {
        const int64_t stride = strides[k][d] < 0 ? -strides[k][d] : strides[k][d];
        narrow = stride <= kMax;
        if (narrow && shape[d] > 1) {
          reach += (shape[d] - 1) * stride; // < 2^62: no overflow
          narrow = reach <= kMax;
        }
      }
    }
  }

  __host__ __device__ __forceinline__ void offsets(int64_t linear,
                                                   int64_t (&off)[N]) const {
    if (narrow)
      offsetsIn<uint32_t, int32_t>(static_cast<uint32_t>(linear), off);
    else
      offsetsIn<int64_t, int64_t>(linear, off);
  }

  /// offsets() in 64-bit arithmetic, whatever `narrow` says: for kernels
  /// that compute offsets once per block, where the second path would only
  /// cost registers.
  __host__ __device__ __forceinline__ void offsets64(int64_t linear,
                                                     int64_t (&off)[N]) const {
    offsetsIn<int64_t, int64_t>(linear, off);
  }

  /// offsets() with the position in Position and the offsets summed in
  /// Offset: (uint32_t, int32_t) where `narrow` allows (unsigned division;
  /// strides may be negative), else (int64_t, int64_t).
  template <typename Position, typename Offset>
  __host__ __device__ __forceinline__ void offsetsIn(Position linear,
                                                     int64_t (&off)[N]) const {
    // One dim (a reduction's rows or columns, a merged broadcast): one
    // multiply per operand, without the loop's seven per-dim rank tests.
    if (rank == 1) {
      REMAT_UNROLL
      for (int k = 0; k < N; ++k)
        off[k] =
            static_cast<Offset>(linear) * static_cast<Offset>(strides[k][0]);
      return;
    }
    Offset o[N];
    REMAT_UNROLL
    for (int k = 0; k < N; ++k)
      o[k] = 0;
    REMAT_UNROLL
    for (int d = kMaxRank - 1; d >= 1; --d) {
      if (d < rank) {
        const Position extent = static_cast<Position>(shape[d]);
        const Position q = linear / extent;
        const Offset i = static_cast<Offset>(linear - q * extent);
        REMAT_UNROLL
        for (int k = 0; k < N; ++k)
          o[k] += i * static_cast<Offset>(strides[k][d]);
        linear = q;
      }
    }
    if (rank > 0) {
      REMAT_UNROLL
      for (int k = 0; k < N; ++k)
        o[k] += static_cast<Offset>(linear) * static_cast<Offset>(strides[k][0]);
    }
    REMAT_UNROLL
    for (int k = 0; k < N; ++k)
      off[k] = o[k];
  }

  /// The single-operand form.
  __host__ __device__ __forceinline__ int64_t offset(int64_t linear) const {
    int64_t off[N];
    offsets(linear, off);
    return off[0];
  }
};

/// Builds the Indexer for iterating `shape` in row-major order with operand
/// k at `strides[k]` (one stride per dim of `shape`). The position itself is
/// the offset into a contiguous tensor of `shape` (merging keeps row-major
/// order), so outputs need no operand of their own.
template <int N>
Indexer<N> makeIndexer(const Shape &shape,
                       const std::array<Strides, N> &strides,
                       const char *kernel) {
  Dims dims;
  std::array<Strides, N> st;
  mergeDims<N>(shape, strides, dims, st);
  if (dims.size() > static_cast<size_t>(kMaxRank))
    fail(kernel, "iteration over " + shapeToString(shape) + " needs " +
                     std::to_string(dims.size()) +
                     " strided dims; the CUDA kernels support " +
                     std::to_string(kMaxRank));
  Indexer<N> ix;
  ix.rank = static_cast<int>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    ix.shape[d] = dims[d];
    for (int k = 0; k < N; ++k)
      ix.strides[k][d] = st[k][d];
  }
  ix.chooseIndexWidth();
  return ix;
}

inline Indexer<1> makeIndexer1(const Shape &shape, const Strides &strides,
                               const char *kernel) {
  return makeIndexer<1>(shape, std::array<Strides, 1>{strides}, kernel);
}

} // namespace remat::rt::cuda::detail

#endif // REMAT_RUNTIME_CUDA_INDEXING_CUH
