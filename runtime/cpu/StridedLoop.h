//===- StridedLoop.h - Strided iteration over a shape ------------*- C++ -*-===//
//
// Broadcasting elementwise ops, expand, transpose, slice and reductions are
// all "walk a shape in row-major order while several operands advance by
// their own element strides". forEachRun does that walk once, handing the
// innermost dimension to a callback as a run (offsets, strides, count) so the
// callback's loop has no index arithmetic. Dimensions that are contiguous for
// every operand are merged first, so e.g. a same-shape binary op or a scalar
// broadcast becomes a single run.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CPU_STRIDEDLOOP_H
#define REMAT_RUNTIME_CPU_STRIDEDLOOP_H

#include "Check.h"

#include <array>
#include <cstdint>
#include <vector>

namespace remat::rt::cpu {

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
    fail(kernel, "cannot broadcast " + shapeToString(in) + " to " +
                     shapeToString(out));
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

/// Calls fn(offsets, innerStrides, count) for every innermost run of `shape`
/// in row-major order; offsets[k] is operand k's element offset at the start
/// of the run and innerStrides[k] its step within the run.
template <size_t N, typename Fn>
void forEachRun(const Shape &shape, const std::array<Strides, N> &strides,
                Fn &&fn) {
  const int64_t total = numElements(shape);
  if (total == 0)
    return;

  // Drop unit dims and merge dims that are contiguous for all operands.
  std::vector<int64_t> dims;
  std::array<Strides, N> st;
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

} // namespace remat::rt::cpu

#endif // REMAT_RUNTIME_CPU_STRIDEDLOOP_H
