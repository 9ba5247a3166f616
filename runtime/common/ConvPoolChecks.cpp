//===- ConvPoolChecks.cpp - Convolution / pooling operand checks ----------===//

#include "common/ConvPoolChecks.h"

#include "common/Check.h"

namespace remat::rt::common {

Window3 checkConv(const char *kernel, const TensorView &x, const TensorView &w,
                  const TensorView &bias, const TensorView &y,
                  const WindowParams &params, int64_t group) {
  requireDType(w, x.dtype, kernel, "weight");
  requireDType(y, x.dtype, kernel, "output");
  require(x.rank() >= 3 && w.rank() == x.rank(), kernel,
          "input and weight must be [N, C, spatial...] / [M, C/group, k...]");
  require(group >= 1 && x.shape[1] % group == 0 && w.shape[0] % group == 0,
          kernel, "channels are not divisible by group");
  require(w.shape[1] * group == x.shape[1], kernel,
          "weight channels times group differ from input channels");
  require(y.shape[0] == x.shape[0] && y.shape[1] == w.shape[0], kernel,
          "output must be [N, M, ...]");
  const Dims weightKernel(w.shape.begin() + 2, w.shape.end());
  require(params.kernel.empty() || params.kernel == weightKernel, kernel,
          "kernel shape differs from the weight's spatial shape");
  if (!bias.empty()) {
    requireDType(bias, x.dtype, kernel, "bias");
    requireNumel(bias, w.shape[0], kernel, "bias");
  }
  return makeWindow(kernel, x, y, params, weightKernel);
}

Window3 checkConvGrad(const char *kernel, const TensorView &x,
                      const TensorView &w, const TensorView &y,
                      const WindowParams &params, int64_t group) {
  requireDType(w, x.dtype, kernel, "weight");
  requireDType(y, x.dtype, kernel, "dy");
  require(x.rank() >= 3 && w.rank() == x.rank() && y.rank() == x.rank(),
          kernel,
          "input, weight and dy must be [N, C, spatial...] / [M, C/group, "
          "k...] / [N, M, spatial...]");
  require(group >= 1 && x.shape[1] % group == 0 && w.shape[0] % group == 0,
          kernel, "channels are not divisible by group");
  require(w.shape[1] * group == x.shape[1], kernel,
          "weight channels times group differ from input channels");
  require(y.shape[0] == x.shape[0] && y.shape[1] == w.shape[0], kernel,
          "dy must be [N, M, ...]");
  const Dims weightKernel(w.shape.begin() + 2, w.shape.end());
  require(params.kernel.empty() || params.kernel == weightKernel, kernel,
          "kernel shape differs from the weight's spatial shape");
  return makeWindow(kernel, x, y, params, weightKernel);
}

void checkPoolShapes(const char *kernel, const TensorView &x,
                     const TensorView &y) {
  requireDType(y, x.dtype, kernel, "output");
  require(x.rank() >= 3 && y.rank() == x.rank() && y.shape[0] == x.shape[0] &&
              y.shape[1] == x.shape[1],
          kernel, "input and output must be [N, C, spatial...] alike");
}

Window3 checkMaxPool(const char *kernel, const TensorView &x,
                     const TensorView &y, const TensorView &indices,
                     const WindowParams &params) {
  checkPoolShapes(kernel, x, y);
  if (!indices.empty()) {
    requireDType(indices, DType::I64, kernel, "indices");
    requireShape(indices, y.shape, kernel, "indices");
  }
  return makeWindow(kernel, x, y, params, params.kernel);
}

void checkPoolGrad(const char *kernel, const TensorView &dy,
                   const TensorView &dx) {
  requireDType(dx, dy.dtype, kernel, "dx");
  require(dx.rank() >= 3 && dy.rank() == dx.rank() &&
              dy.shape[0] == dx.shape[0] && dy.shape[1] == dx.shape[1],
          kernel, "dy and dx must be [N, C, spatial...] alike");
}

Window3 checkMaxPoolBackward(const char *kernel, const TensorView &dy,
                             const TensorView &indices, const TensorView &dx,
                             const WindowParams &params) {
  checkPoolGrad(kernel, dy, dx);
  requireDType(indices, DType::I64, kernel, "indices");
  requireShape(indices, dy.shape, kernel, "indices");
  return makeWindow(kernel, dx, dy, params, params.kernel);
}

} // namespace remat::rt::common
