//===- NormalizationChecks.cpp - Normalisation operand checks -------------===//

#include "common/NormalizationChecks.h"

#include "common/Check.h"

namespace remat::rt::common {

namespace {

ChannelExtents channelExtents(const TensorView &x) {
  const int64_t N = x.shape[0], C = x.shape[1];
  return {N, C, C == 0 || N == 0 ? 0 : x.numel() / (N * C)};
}

} // namespace

AxisExtents checkSoftmax(const char *kernel, const TensorView &x,
                         const TensorView &y, int64_t axis) {
  requireDType(y, x.dtype, kernel, "output");
  requireShape(y, x.shape, kernel, "output");
  require(axis >= 0 && axis < x.rank(), kernel, "axis out of range");
  return axisExtents(x.shape, axis);
}

int64_t checkLayerNorm(const char *kernel, const TensorView &x,
                       const TensorView &scale, const TensorView &bias,
                       const TensorView &y, const TensorView &mean,
                       const TensorView &invStdDev, int64_t axis) {
  require(axis >= 0 && axis < x.rank(), kernel, "axis out of range");
  requireDType(y, x.dtype, kernel, "output");
  requireShape(y, x.shape, kernel, "output");
  requireDType(scale, x.dtype, kernel, "scale");
  if (!bias.empty())
    requireDType(bias, x.dtype, kernel, "bias");
  const int64_t rows = axisExtents(x.shape, axis).outer;
  if (!mean.empty())
    requireNumel(mean, rows, kernel, "mean");
  if (!invStdDev.empty())
    requireNumel(invStdDev, rows, kernel, "invStdDev");
  return rows;
}

ChannelExtents checkBatchNorm(const char *kernel, const TensorView &x,
                              const TensorView &y) {
  require(x.rank() >= 2, kernel, "input must have rank >= 2 (N, C, ...)");
  requireDType(y, x.dtype, kernel, "output");
  requireShape(y, x.shape, kernel, "output");
  return channelExtents(x);
}

void checkSameAsX(const char *kernel, const TensorView &x, const TensorView &t,
                  const char *what) {
  requireDType(t, x.dtype, kernel, what);
  requireShape(t, x.shape, kernel, what);
}

LayerNormRows checkLayerNormBackward(const char *kernel, const TensorView &x,
                                     const TensorView &scale,
                                     const TensorView &mean,
                                     const TensorView &invStdDev,
                                     const TensorView &dy, const TensorView &dx,
                                     int64_t axis) {
  require(axis >= 0 && axis < x.rank(), kernel, "axis out of range");
  checkSameAsX(kernel, x, dy, "dy");
  if (!dx.empty())
    checkSameAsX(kernel, x, dx, "dx");
  requireDType(scale, x.dtype, kernel, "scale");
  LayerNormRows r;
  r.normShape = Shape(x.shape.begin() + axis, x.shape.end());
  r.n = numElements(r.normShape);
  r.rows = r.n == 0 ? 0 : x.numel() / r.n;
  requireNumel(mean, r.rows, kernel, "mean");
  requireNumel(invStdDev, r.rows, kernel, "invStdDev");
  return r;
}

ChannelExtents checkBatchNormBackward(const char *kernel, const TensorView &x,
                                      const TensorView &scale,
                                      const TensorView &savedMean,
                                      const TensorView &savedInvStd,
                                      const TensorView &dy,
                                      const TensorView &dx) {
  require(x.rank() >= 2, kernel, "input must have rank >= 2 (N, C, ...)");
  checkSameAsX(kernel, x, dy, "dy");
  if (!dx.empty())
    checkSameAsX(kernel, x, dx, "dx");
  const ChannelExtents e = channelExtents(x);
  requireNumel(scale, e.channels, kernel, "scale");
  requireNumel(savedMean, e.channels, kernel, "savedMean");
  requireNumel(savedInvStd, e.channels, kernel, "savedInvStd");
  return e;
}

void checkGeluBackward(const char *kernel, const TensorView &x,
                       const TensorView &dy, const TensorView &dx) {
  requireDType(dy, x.dtype, kernel, "dy");
  requireDType(dx, x.dtype, kernel, "dx");
  requireShape(dy, x.shape, kernel, "dy");
  requireShape(dx, x.shape, kernel, "dx");
}

void checkSoftmaxBackward(const char *kernel, const TensorView &y,
                          const TensorView &dy, const TensorView &dx,
                          int64_t axis) {
  checkGeluBackward(kernel, y, dy, dx);
  require(axis >= 0 && axis < y.rank(), kernel, "axis out of range");
}

} // namespace remat::rt::common
