//===- AxisExtents.h - A shape as (outer, axis, inner) -----------*- C++ -*-===//
//
// Softmax, gather, concat/split and their backward walk a tensor as
// [outer, size, inner] around one axis; both backends split the shape here.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_AXISEXTENTS_H
#define REMAT_RUNTIME_COMMON_AXISEXTENTS_H

#include "remat/runtime/Tensor.h"

#include <cstdint>

namespace remat::rt::common {

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

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_AXISEXTENTS_H
