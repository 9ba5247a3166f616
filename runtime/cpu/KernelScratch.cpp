//===- KernelScratch.cpp - Scratch bytes each CPU kernel needs ------------===//
//
// Each figure lists the kernel's buffers in the order the kernel takes them
// (see the kernel's Scratch), one scratchPiece per buffer.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/KernelScratch.h"

#include "HalfGemm.h"
#include "common/MatMulShape.h"
#include "common/Window.h"

namespace remat::rt {
namespace {

/// The GEMM operands of one (image, group) of a convolution: im2col's
/// columns [rows = C/group * kernel taps, outputs] and the group's
/// `filters` = M/group rows of the weight.
struct ConvGemm {
  int64_t rows, outputs, filters;
  bool pointwise; // the input is its own col matrix (no im2col)
  int64_t columnElements() const { return rows * outputs; }
};

ConvGemm convGemm(const char *kernel, const TensorView &x, const TensorView &w,
                  const TensorView &y, const WindowParams &params,
                  int64_t group) {
  const Dims taps(w.shape.begin() + 2, w.shape.end());
  const common::Window3 win = common::makeWindow(kernel, x, y, params, taps);
  const int64_t channels = group > 0 ? x.shape[1] / group : 0;
  const int64_t filters = group > 0 ? w.shape[0] / group : 0;
  return {channels * win.kernelSize(), win.outSize(), filters,
          win.pointwise()};
}

/// `count` elements of dtype's compute type (float for F16/BF16).
size_t elementPiece(DType dtype, int64_t count) {
  return dtype == DType::F64 ? scratchPiece<double>(count)
                             : scratchPiece<float>(count);
}

/// `count` elements of dtype itself.
size_t storagePiece(DType dtype, int64_t count) {
  return scratchPiece<uint8_t>(count * static_cast<int64_t>(dtypeSize(dtype)));
}

bool isHalf(DType dtype) { return dtype == DType::F16 || dtype == DType::BF16; }

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

size_t matmulScratchBytes(const TensorView &a, const TensorView &b,
                          const TensorView &out, bool transA, bool transB) {
  if (a.rank() < 2 || b.rank() < 2 || out.rank() < 2)
    return 0; // the kernel refuses these before it takes scratch
  const common::MatMulDims d = common::matmulDims(a, b, out, transA, transB);
  // As the kernel runs it: one tall GEMM, or one GEMM per output matrix.
  const int64_t rows =
      common::isOneTallGemm(a, b, out, transA)
          ? numElements(common::batchDims(out.shape)) * d.M
          : d.M;
  return cpu::gemmScratchBytes(a.dtype, rows, d.N, d.K);
}

size_t convScratchBytes(const TensorView &x, const TensorView &w,
                        const TensorView &y, const WindowParams &params,
                        int64_t group) {
  // The columns in x's dtype, then y_g [filters, outputs] = w_g col.
  const ConvGemm c = convGemm("conv", x, w, y, params, group);
  return (c.pointwise ? 0 : storagePiece(x.dtype, c.columnElements())) +
         cpu::gemmScratchBytes(x.dtype, c.filters, c.outputs, c.rows);
}

size_t convBackwardDataScratchBytes(const TensorView &dy, const TensorView &w,
                                    const TensorView &dx,
                                    const WindowParams &params, int64_t group) {
  // The columns in the compute type (col = w_g^T dy_g), dx's accumulator.
  const ConvGemm c = convGemm("convBackwardData", dx, w, dy, params, group);
  return elementPiece(dx.dtype, c.columnElements()) +
         cpu::gemmScratchBytes(dx.dtype, c.rows, c.outputs, c.filters) +
         accumulatorScratchBytes(dx);
}

size_t convBackwardFilterScratchBytes(const TensorView &x,
                                      const TensorView &dy,
                                      const TensorView &dw,
                                      const WindowParams &params,
                                      int64_t group) {
  // The columns in x's dtype, a 16-bit dw_g's fp32 accumulator, then
  // dw_g [filters, rows] = dy_g col^T.
  const ConvGemm c = convGemm("convBackwardFilter", x, dw, dy, params, group);
  return (c.pointwise ? 0 : storagePiece(x.dtype, c.columnElements())) +
         (isHalf(x.dtype) ? scratchPiece<float>(c.filters * c.rows) : 0) +
         cpu::gemmScratchBytes(x.dtype, c.filters, c.rows, c.outputs);
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
