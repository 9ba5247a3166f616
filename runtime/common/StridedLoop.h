//===- StridedLoop.h - Strided iteration over a shape ------------*- C++ -*-===//
//
// Broadcasting elementwise ops, expand, transpose, slice and reductions are
// all "walk a shape in row-major order while several operands advance by
// their own element strides". mergeDims first drops unit dims and merges
// dims that are contiguous for every operand, so e.g. a same-shape binary op
// or a scalar broadcast becomes a single run; the CPU loops and the CUDA
// Indexer both start from it. forEachRun is the walk itself, on the host:
// the CPU's kernels, and the CUDA host code that issues one call per run
// (batched GEMMs).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_STRIDEDLOOP_H
#define REMAT_RUNTIME_COMMON_STRIDEDLOOP_H

#include "common/Strides.h"

#include <array>
#include <cstdint>
#include <vector>

namespace remat::rt::common {

/// Drops unit dims of `shape` and merges dims that are contiguous for all
/// operands; `dims` and `st` receive the merged shape and strides.
template <size_t N>
void mergeDims(const Shape &shape, const std::array<Strides, N> &strides,
               Dims &dims, std::array<Strides, N> &st) {
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

/// Calls fn(offsets, innerStrides, count) for every innermost run of `shape`
/// in row-major order; offsets[k] is operand k's element offset at the start
/// of the run and innerStrides[k] its step within the run.
template <size_t N, typename Fn>
void forEachRun(const Shape &shape, const std::array<Strides, N> &strides,
                Fn &&fn) {
  const int64_t total = numElements(shape);
  if (total == 0)
    return;

  Dims dims;
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

  Dims counter(outerRank, 0);
  std::array<int64_t, N> offsets{};
  for (int64_t run = 0, runs = total / count; run < runs; ++run) {
    fn(offsets, inner, count);
    // Odometer increment over the outer dims.
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

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_STRIDEDLOOP_H
