//===- Indexing.cuh - Broadcasting and strided index math -------*- CUDA
//-*-===//
//
// Broadcasting elementwise ops, expand, transpose, slice and reductions all
// map a row-major position of one shape to element offsets of several
// operands with their own strides. The host builds an Indexer (shape and
// per-operand strides, passed to the kernel by value in a fixed-size struct)
// after dropping unit dims and merging dims that are contiguous for every
// operand, so common cases (same shapes, scalar operands) have rank 1 and no
// division on the device. The host-side forEachRun is the CPU's walk, used
// where the host issues one call per run (batched GEMMs).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CUDA_INDEXING_CUH
#define REMAT_RUNTIME_CUDA_INDEXING_CUH

#include "Common.cuh"

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

using Strides = std::vector<int64_t>;

/// Row-major element strides of a contiguous tensor.
inline Strides contiguousStrides(const Shape &shape) {
  Strides strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

/// Strides (one per dim of `out`) that read a contiguous tensor of shape `in`
/// broadcast to `out` with numpy rules: 0 along broadcast dims.
inline Strides broadcastStrides(const Shape &in, const Shape &out,
                                const char *kernel) {
  if (in.size() > out.size())
    fail(kernel,
         "cannot broadcast " + shapeToString(in) + " to " + shapeToString(out));
  Strides inStrides = contiguousStrides(in);
  Strides strides(out.size(), 0);
  size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] == out[lead + d])
      strides[lead + d] = in[d] == 1 ? 0 : inStrides[d];
    else if (in[d] != 1)
      fail(kernel, "cannot broadcast " + shapeToString(in) + " to " +
                       shapeToString(out));
  }
  return strides;
}

/// (outer, size, inner) extents of `shape` around `axis`.
struct AxisExtents {
  int64_t outer = 1, size = 1, inner = 1;
};
inline AxisExtents axisExtents(const Shape &shape, int64_t axis) {
  AxisExtents s;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    (d < axis ? s.outer : d == axis ? s.size : s.inner) *= shape[d];
  return s;
}

/// Drops unit dims of `shape` and merges dims that are contiguous for all
/// operands; `dims` and `st` receive the merged shape and strides.
template <size_t N>
void mergeDims(const Shape &shape, const std::array<Strides, N> &strides,
               std::vector<int64_t> &dims, std::array<Strides, N> &st) {
  dims.clear();
  for (size_t k = 0; k < N; ++k)
    st[k].clear();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1)
      continue;
    bool mergeable = !dims.empty();
    for (size_t k = 0; k < N && mergeable; ++k)
      mergeable = st[k].back() == strides[k][d] * shape[d];
    if (mergeable) {
      dims.back() *= shape[d];
      for (size_t k = 0; k < N; ++k)
        st[k].back() = strides[k][d];
    } else {
      dims.push_back(shape[d]);
      for (size_t k = 0; k < N; ++k)
        st[k].push_back(strides[k][d]);
    }
  }
}

/// Maps a row-major position in a (merged) shape to the element offsets of
/// N operands. Rank 0 means a single position.
template <int N> struct Indexer {
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[N][kMaxRank] = {};

  __host__ __device__ __forceinline__ void offsets(int64_t linear,
                                                   int64_t (&off)[N]) const {
    REMAT_UNROLL
    for (int k = 0; k < N; ++k)
      off[k] = 0;
    REMAT_UNROLL
    for (int d = kMaxRank - 1; d >= 1; --d) {
      if (d < rank) {
        const int64_t q = linear / shape[d];
        const int64_t i = linear - q * shape[d];
        REMAT_UNROLL
        for (int k = 0; k < N; ++k)
          off[k] += i * strides[k][d];
        linear = q;
      }
    }
    if (rank > 0) {
      REMAT_UNROLL
      for (int k = 0; k < N; ++k)
        off[k] += linear * strides[k][0];
    }
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
  std::vector<int64_t> dims;
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
  return ix;
}

inline Indexer<1> makeIndexer1(const Shape &shape, const Strides &strides,
                               const char *kernel) {
  return makeIndexer<1>(shape, std::array<Strides, 1>{strides}, kernel);
}

/// Calls fn(offsets, innerStrides, count) for every innermost run of `shape`
/// in row-major order (the CPU's StridedLoop walk, on the host).
template <size_t N, typename Fn>
void forEachRun(const Shape &shape, const std::array<Strides, N> &strides,
                Fn &&fn) {
  if (numElements(shape) == 0)
    return;
  std::vector<int64_t> dims;
  std::array<Strides, N> st;
  mergeDims<N>(shape, strides, dims, st);
  if (dims.empty()) {
    dims.push_back(1);
    for (size_t k = 0; k < N; ++k)
      st[k].push_back(0);
  }
  const size_t outerRank = dims.size() - 1;
  const int64_t count = dims.back();
  std::array<int64_t, N> inner{};
  for (size_t k = 0; k < N; ++k)
    inner[k] = st[k].back();
  std::vector<int64_t> counter(outerRank, 0);
  std::array<int64_t, N> offsets{};
  for (int64_t run = 0, runs = numElements(shape) / count; run < runs; ++run) {
    fn(offsets, inner, count);
    for (size_t d = outerRank; d-- > 0;) {
      for (size_t k = 0; k < N; ++k)
        offsets[k] += st[k][d];
      if (++counter[d] < dims[d])
        break;
      for (size_t k = 0; k < N; ++k)
        offsets[k] -= st[k][d] * dims[d];
      counter[d] = 0;
    }
  }
}

} // namespace remat::rt::cuda::detail

#endif // REMAT_RUNTIME_CUDA_INDEXING_CUH
