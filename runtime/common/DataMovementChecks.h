//===- DataMovementChecks.h - Data movement checks and strides ---*- C++ -*-===//
//
// Transpose, slice, concat / split and gather move elements without looking
// at them; what the backends share is which positions move where and the
// checks of the operands' shapes, computed on the host. Both backends call
// these so that they accept the same arguments with the same messages.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_DATAMOVEMENTCHECKS_H
#define REMAT_RUNTIME_COMMON_DATAMOVEMENTCHECKS_H

#include "common/AxisExtents.h"
#include "common/GatherElementsIndex.h"
#include "common/PadIndex.h"
#include "common/Strides.h"

#include <vector>

namespace remat::rt::common {

/// Checks y against x permuted by `perm` and returns the strides of x that
/// read it in y's row-major order.
Strides transposeStrides(const char *kernel, const TensorView &x,
                         const TensorView &y,
                         const Dims &perm);

/// Checks a slice of `whole` with `part`'s shape (starts already clamped,
/// steps non-zero) and returns the strides of `whole` that walk it, with
/// `base` the element offset of its first element. `verb` ("reads",
/// "writes") and `what` (the message for mismatched ranks) name the
/// operands in messages.
Strides sliceStrides(const char *kernel, const Shape &whole, const Shape &part,
                     const Dims &starts,
                     const Dims &steps, const char *verb,
                     const char *what, int64_t &base);

/// Checks concat / split operands: every part matches `whole` but along
/// `axis`, and their sizes along it add up to whole's.
void checkConcatOrSplit(const char *kernel,
                        TensorViewList parts,
                        const TensorView &whole, int64_t axis);

/// Checks gather backward operands (dy [outer, count, inner] for dx
/// [outer, size, inner] around `axis`) and returns dx's extents.
AxisExtents checkGatherBackward(const char *kernel, const TensorView &dy,
                                const TensorView &indices,
                                const TensorView &dx, int64_t axis);

/// Checks pad / padBackward shapes (`in` the unpadded, `out` the padded
/// shape, one begin pad per dim) and returns their geometry. Reflect, Edge
/// and Wrap need an element to read wherever a dim is padded.
PadGeometry padGeometry(const char *kernel, const Shape &in, const Shape &out,
                        const Dims &begins, PadMode mode);

/// Checks gatherElements / gatherElementsBackward operands (`data` is x or
/// dx, `out` y or dy) and returns their geometry.
GatherElementsGeometry gatherElementsGeometry(const char *kernel,
                                              const TensorView &data,
                                              const TensorView &indices,
                                              const TensorView &out,
                                              int64_t axis);

/// Checks trilu operands and returns x's last two dims: rows M (`size`),
/// columns N (`inner`), and the number of matrices (`outer`).
AxisExtents checkTrilu(const char *kernel, const TensorView &x,
                       const TensorView &y);

/// Whether trilu keeps element (row, col).
REMAT_HOST_DEVICE inline bool triluKeeps(int64_t row, int64_t col, bool upper,
                                         int64_t k) {
  return upper ? col - row >= k : col - row <= k;
}

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_DATAMOVEMENTCHECKS_H
