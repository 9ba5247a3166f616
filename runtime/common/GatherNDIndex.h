//===- GatherNDIndex.h - Where GatherND reads and ScatterND writes -*- C++ -*-===//
//
// GatherND and ScatterND address data by index tuples: indices
// [batch..., tuples..., depth] holds, for each batch element and tuple,
// `depth` coordinates into data's dims after the batch dims; the tuple names
// a slice of data (the dims after those) of `slice` elements. The other
// operand (GatherND's y and dy, ScatterND's updates) is
// [batch, tuples, slice] in row-major order. Host+device: the CUDA kernels
// receive the geometry by value.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_GATHERNDINDEX_H
#define REMAT_RUNTIME_COMMON_GATHERNDINDEX_H

#include "remat/runtime/HostDevice.h"
#include "remat/runtime/Kernels.h"

#include <cstdint>

namespace remat::rt::common {

struct GatherNDGeometry {
  int64_t batch = 1;       // product of the batch dims
  int64_t tuples = 0;      // index tuples per batch element
  int depth = 0;           // coordinates per tuple
  int64_t slice = 1;       // elements of data each tuple names
  int64_t batchStride = 0; // elements of data per batch element
  int64_t dimSize[kMaxRank] = {};   // the indexed dims of data
  int64_t dimStride[kMaxRank] = {}; // their row-major strides in data

  /// The offset into data of the slice that tuple `t` (counted over all
  /// batch elements, row-major) names, with `tuple` pointing at its
  /// coordinates; -1 when a coordinate is out of range, which is then
  /// stored in `bad`.
  template <typename I>
  REMAT_HOST_DEVICE int64_t sliceOffset(int64_t t, const I *tuple,
                                        int64_t &bad) const {
    int64_t offset = (t / tuples) * batchStride;
    for (int j = 0; j < depth; ++j) {
      const int64_t v = static_cast<int64_t>(tuple[j]);
      if (v < -dimSize[j] || v >= dimSize[j]) {
        bad = v;
        return -1;
      }
      offset += (v < 0 ? v + dimSize[j] : v) * dimStride[j];
    }
    return offset;
  }
};

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_GATHERNDINDEX_H
