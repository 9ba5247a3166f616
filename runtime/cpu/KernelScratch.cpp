//===- KernelScratch.cpp - Scratch bytes each CPU kernel needs ------------===//
//
// Each figure lists the kernel's buffers in the order the kernel takes them
// (see the kernel's Scratch), one scratchPiece per buffer.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/KernelScratch.h"

#include "common/Window.h"

namespace remat::rt {
namespace {

/// im2col columns of one (image, group): [C/group * kernel taps, outputs].
int64_t columnElements(const char *kernel, const TensorView &x,
                       const TensorView &w, const TensorView &y,
                       const WindowParams &params, int64_t group,
                       bool &pointwise) {
  const Dims taps(w.shape.begin() + 2, w.shape.end());
  const common::Window3 win = common::makeWindow(kernel, x, y, params, taps);
  pointwise = win.pointwise();
  const int64_t channels = group > 0 ? x.shape[1] / group : 0;
  return channels * win.kernelSize() * win.outSize();
}

size_t elementPiece(DType dtype, int64_t count) {
  return dtype == DType::F64 ? scratchPiece<double>(count)
                             : scratchPiece<float>(count);
}

int64_t trailingElements(const Shape &shape, int64_t axis) {
  int64_t n = 1;
  for (size_t d = static_cast<size_t>(axis); d < shape.size(); ++d)
    n *= shape[d];
  return n;
}

} // namespace

size_t accumulatorScratchBytes(const TensorView &dx) {
  return dx.dtype == DType::F64 ? 0 : scratchPiece<double>(dx.numel());
}

size_t convScratchBytes(const TensorView &x, const TensorView &w,
                        const TensorView &y, const WindowParams &params,
                        int64_t group) {
  bool pointwise = false;
  const int64_t col = columnElements("conv", x, w, y, params, group, pointwise);
  return pointwise ? 0 : elementPiece(x.dtype, col);
}

size_t convBackwardDataScratchBytes(const TensorView &dy, const TensorView &w,
                                    const TensorView &dx,
                                    const WindowParams &params, int64_t group) {
  bool pointwise = false;
  const int64_t col =
      columnElements("convBackwardData", dx, w, dy, params, group, pointwise);
  return elementPiece(dx.dtype, col) + accumulatorScratchBytes(dx);
}

size_t convBackwardFilterScratchBytes(const TensorView &x,
                                      const TensorView &dy,
                                      const TensorView &dw,
                                      const WindowParams &params,
                                      int64_t group) {
  bool pointwise = false;
  const int64_t col = columnElements("convBackwardFilter", x, dw, dy, params,
                                     group, pointwise);
  return pointwise ? 0 : elementPiece(x.dtype, col);
}

size_t poolBackwardScratchBytes(const TensorView &dx) {
  return accumulatorScratchBytes(dx);
}

size_t reduceScratchBytes(const TensorView &, const TensorView &out,
                          const Dims &axes) {
  // double or int64 accumulators, one per output element.
  return axes.empty() ? 0 : scratchPiece<double>(out.numel());
}

size_t layerNormScratchBytes(const TensorView &x, const TensorView &scale,
                             const TensorView &bias, int64_t axis) {
  // scale and bias materialised at the normalised shape when broadcast.
  const int64_t n = trailingElements(x.shape, axis);
  size_t bytes = 0;
  if (scale.numel() != n)
    bytes += elementPiece(x.dtype, n);
  if (!bias.empty() && bias.numel() != n)
    bytes += elementPiece(x.dtype, n);
  return bytes;
}

size_t layerNormBackwardScratchBytes(const TensorView &x,
                                     const TensorView &scale, int64_t axis) {
  // The broadcast scale, then dscale and dbias accumulators.
  const int64_t n = trailingElements(x.shape, axis);
  return (scale.numel() != n ? elementPiece(x.dtype, n) : 0) +
         2 * scratchPiece<double>(n);
}

size_t batchNormInferenceScratchBytes(const TensorView &x) {
  // scale, bias, mean, var per channel.
  return 4 * scratchPiece<double>(x.rank() > 1 ? x.shape[1] : 0);
}

size_t batchNormTrainingScratchBytes(const TensorView &x) {
  // mean, var, scale, shift, running statistic, tracked variance.
  return 6 * scratchPiece<double>(x.rank() > 1 ? x.shape[1] : 0);
}

size_t batchNormTrainingBackwardScratchBytes(const TensorView &x) {
  // sum(dy) and sum(dy * xhat) per channel.
  return 2 * scratchPiece<double>(x.rank() > 1 ? x.shape[1] : 0);
}

size_t gatherScratchBytes(const TensorView &indices) {
  return scratchPiece<int64_t>(indices.numel());
}

size_t gatherBackwardScratchBytes(const TensorView &indices,
                                  const TensorView &dx) {
  return scratchPiece<int64_t>(indices.numel()) + accumulatorScratchBytes(dx);
}

size_t gatherElementsBackwardScratchBytes(const TensorView &dx) {
  return accumulatorScratchBytes(dx);
}

size_t lossBackwardScratchBytes(const TensorView &labels) {
  // Per target: its label and its coefficient.
  return scratchPiece<int64_t>(labels.numel()) +
         scratchPiece<double>(labels.numel());
}

} // namespace remat::rt
