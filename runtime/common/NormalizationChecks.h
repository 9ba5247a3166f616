//===- NormalizationChecks.h - Normalisation operand checks ------*- C++ -*-===//
//
// The operand checks of softmax, LayerNorm and BatchNorm, forward and
// backward (with GELU's backward, checked as softmax's), shared by both
// backends so that they accept the same arguments with the same messages;
// each returns the extents the kernel iterates.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_NORMALIZATIONCHECKS_H
#define REMAT_RUNTIME_COMMON_NORMALIZATIONCHECKS_H

#include "common/AxisExtents.h"

namespace remat::rt::common {

/// An [N, C, spatial...] tensor as (N, C, product of the spatial dims).
struct ChannelExtents {
  int64_t batch, channels, spatial;
};

/// softmax / logSoftmax: y like x, axis in range; x's extents around axis.
AxisExtents checkSoftmax(const char *kernel, const TensorView &x,
                         const TensorView &y, int64_t axis);

/// layerNorm: y like x, scale (and bias) of x's dtype, optional mean and
/// invStdDev with one element per row; returns the row count.
int64_t checkLayerNorm(const char *kernel, const TensorView &x,
                       const TensorView &scale, const TensorView &bias,
                       const TensorView &y, const TensorView &mean,
                       const TensorView &invStdDev, int64_t axis);

/// BatchNorm: x [N, C, ...] and y like x.
ChannelExtents checkBatchNorm(const char *kernel, const TensorView &x,
                              const TensorView &y);

/// t has x's dtype and shape.
void checkSameAsX(const char *kernel, const TensorView &x, const TensorView &t,
                  const char *what);

/// The rows LayerNorm normalises: n elements of normShape each.
struct LayerNormRows {
  Shape normShape;
  int64_t n, rows;
};

/// layerNormBackward: dy (and dx) like x, scale of x's dtype, mean and
/// invStdDev with one element per row.
LayerNormRows checkLayerNormBackward(const char *kernel, const TensorView &x,
                                     const TensorView &scale,
                                     const TensorView &mean,
                                     const TensorView &invStdDev,
                                     const TensorView &dy, const TensorView &dx,
                                     int64_t axis);

/// batchNormTrainingBackward: x [N, C, ...], dy (and dx) like x, scale and
/// the saved statistics with C elements.
ChannelExtents checkBatchNormBackward(const char *kernel, const TensorView &x,
                                      const TensorView &scale,
                                      const TensorView &savedMean,
                                      const TensorView &savedInvStd,
                                      const TensorView &dy,
                                      const TensorView &dx);

/// geluBackward: dy and dx like x.
void checkGeluBackward(const char *kernel, const TensorView &x,
                       const TensorView &dy, const TensorView &dx);

/// softmaxBackward / logSoftmaxBackward: dy and dx like y, axis in range.
void checkSoftmaxBackward(const char *kernel, const TensorView &y,
                          const TensorView &dy, const TensorView &dx,
                          int64_t axis);

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_NORMALIZATIONCHECKS_H
