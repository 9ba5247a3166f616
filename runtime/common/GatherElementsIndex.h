//===- GatherElementsIndex.h - Where GatherElements reads --------*- C++ -*-===//
//
// GatherElements reads, for each position p of indices (and of y), the
// input element at p with its axis coordinate replaced by indices[p]; the
// input may be larger than indices along the other dims, so positions map
// through both tensors' strides. Host+device: the CUDA kernels receive the
// geometry by value.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_GATHERELEMENTSINDEX_H
#define REMAT_RUNTIME_COMMON_GATHERELEMENTSINDEX_H

#include "remat/runtime/HostDevice.h"
#include "remat/runtime/Kernels.h"

#include <cstdint>

namespace remat::rt::common {

struct GatherElementsGeometry {
  int rank = 0;
  int axis = 0;
  int64_t axisSize = 0;               // x.shape[axis]
  int64_t index[kMaxRank] = {};       // indices' (and y's) shape
  int64_t indexStride[kMaxRank] = {}; // row-major strides of indices
  int64_t dataStride[kMaxRank] = {};  // row-major strides of x

  /// The offset into x of position `linear` of indices, with its axis
  /// coordinate left out (the caller adds index * dataStride[axis]).
  REMAT_HOST_DEVICE int64_t dataBase(int64_t linear) const {
    int64_t offset = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t c = linear % index[d];
      linear /= index[d];
      if (d != axis)
        offset += c * dataStride[d];
    }
    return offset;
  }

  /// Lines along the axis: the positions of indices with axis coordinate 0.
  REMAT_HOST_DEVICE int64_t lines() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d)
      n *= d == axis ? 1 : index[d];
    return n;
  }

  /// Position of indices of line `line`'s first element (axis coordinate 0).
  REMAT_HOST_DEVICE int64_t lineStart(int64_t line) const {
    int64_t offset = 0;
    for (int d = rank - 1; d >= 0; --d) {
      if (d == axis)
        continue;
      offset += (line % index[d]) * indexStride[d];
      line /= index[d];
    }
    return offset;
  }
};

/// Indices' value v as a coordinate along the axis, or -1 when out of range.
REMAT_HOST_DEVICE inline int64_t gatherElementsCoordinate(int64_t v,
                                                          int64_t size) {
  if (v < -size || v >= size)
    return -1;
  return v < 0 ? v + size : v;
}

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_GATHERELEMENTSINDEX_H
