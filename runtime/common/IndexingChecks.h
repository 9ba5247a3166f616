//===- IndexingChecks.h - GatherND, ScatterND and Resize checks --*- C++ -*-===//
//
// The operand checks of the N-dimensional indexing and resampling kernels,
// which return the geometry the kernels index with. Both backends call these
// so that they accept the same arguments with the same messages.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_INDEXINGCHECKS_H
#define REMAT_RUNTIME_COMMON_INDEXINGCHECKS_H

#include "common/GatherNDIndex.h"
#include "common/ResizeIndex.h"

namespace remat::rt::common {

/// Checks gatherND / gatherNDBackward operands (`data` is data or dx,
/// `gathered` y or dy) and returns their geometry.
GatherNDGeometry gatherNDGeometry(const char *kernel, const TensorView &data,
                                  const TensorView &indices,
                                  const TensorView &gathered,
                                  int64_t batchDims);

/// Checks scatterND operands and returns their geometry (no batch dims;
/// updates is the gathered operand).
GatherNDGeometry scatterNDGeometry(const char *kernel, const TensorView &data,
                                   const TensorView &indices,
                                   const TensorView &updates,
                                   const TensorView &y);

/// Checks resize / resizeBackward shapes (`in` x's, `out` y's) against the
/// parameters and returns their geometry.
ResizeGeometry resizeGeometry(const char *kernel, const Shape &in,
                              const Shape &out, const ResizeParams &params);

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_INDEXINGCHECKS_H
