//===- ReduceChecks.h - Reduction operand checks -----------------*- C++ -*-===//
//
// Shared by both backends so that reduce accepts the same arguments with the
// same messages.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_REDUCECHECKS_H
#define REMAT_RUNTIME_COMMON_REDUCECHECKS_H

#include "common/AxisExtents.h"
#include "remat/runtime/Tensor.h"

#include <vector>

namespace remat::rt::common {

/// out keeps x's rank with 1 along `axes` (sorted, unique, in range).
void checkReduce(const char *kernel, const TensorView &x,
                 const TensorView &out, const Dims &axes);

/// Checks cumSum operands (y like x, axis in range) and returns x's extents
/// around the axis.
AxisExtents checkCumSum(const char *kernel, const TensorView &x,
                        const TensorView &y, int64_t axis);

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_REDUCECHECKS_H
