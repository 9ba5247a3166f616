//===- Strides.h - Strides of contiguous and broadcast reads -----*- C++ -*-===//
//
// Expand, transpose, slice, broadcasting elementwise ops and batched GEMMs
// read their operands through per-dimension element strides. Both backends
// compute them on the host the same way (the CUDA kernels receive them in an
// Indexer), so broadcasting errors read the same on either.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_STRIDES_H
#define REMAT_RUNTIME_COMMON_STRIDES_H

#include "common/Check.h"

#include <cstdint>
#include <vector>

namespace remat::rt::common {

using Strides = InlineVector<int64_t, kMaxRank>;

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

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_STRIDES_H
