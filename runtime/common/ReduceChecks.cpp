//===- ReduceChecks.cpp - Reduction operand checks ------------------------===//

#include "common/ReduceChecks.h"

#include "common/Check.h"

namespace remat::rt::common {

void checkReduce(const char *kernel, const TensorView &x,
                 const TensorView &out, const Dims &axes) {
  requireDType(out, x.dtype, kernel, "output");
  require(out.rank() == x.rank(), kernel, "output must keep x's rank");
  Shape expected = x.shape;
  for (size_t i = 0; i < axes.size(); ++i) {
    require(axes[i] >= 0 && axes[i] < x.rank(), kernel, "axis out of range");
    require(i == 0 || axes[i] > axes[i - 1], kernel,
            "axes must be sorted and unique");
    expected[axes[i]] = 1;
  }
  requireShape(out, expected, kernel, "output");
}

AxisExtents checkCumSum(const char *kernel, const TensorView &x,
                        const TensorView &y, int64_t axis) {
  requireDType(y, x.dtype, kernel, "output");
  requireShape(y, x.shape, kernel, "output");
  require(axis >= 0 && axis < x.rank(), kernel, "axis out of range");
  return axisExtents(x.shape, axis);
}

} // namespace remat::rt::common
