//===- Window.h - Convolution / pooling window geometry ----------*- C++ -*-===//
//
// Shared by both backends' convolution and pooling, forward and backward.
// 1-D and 2-D problems are run as 3-D ones with leading unit spatial dims
// (kernel 1, stride 1, no padding), so every kernel has one loop nest. The
// CUDA kernels receive a Window3 by value, hence the host+device members.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_WINDOW_H
#define REMAT_RUNTIME_COMMON_WINDOW_H

#include "remat/runtime/HostDevice.h"
#include "remat/runtime/Kernels.h"

#include <cstdint>
#include <vector>

namespace remat::rt::common {

constexpr int kDims = 3;

/// Window geometry over exactly three spatial dims.
struct Window3 {
  int64_t in[kDims], out[kDims], kernel[kDims], stride[kDims];
  int64_t padBegin[kDims], padEnd[kDims], dilation[kDims];

  REMAT_HOST_DEVICE int64_t inSize() const { return in[0] * in[1] * in[2]; }
  REMAT_HOST_DEVICE int64_t outSize() const {
    return out[0] * out[1] * out[2];
  }
  REMAT_HOST_DEVICE int64_t kernelSize() const {
    return kernel[0] * kernel[1] * kernel[2];
  }
  /// Input coordinate of output position o, window offset k, along dim d.
  REMAT_HOST_DEVICE int64_t inputIndex(int d, int64_t o, int64_t k) const {
    return o * stride[d] - padBegin[d] + k * dilation[d];
  }
  /// The output position whose tap k reads input coordinate i along dim d,
  /// or -1 if there is none.
  REMAT_HOST_DEVICE int64_t outputFor(int d, int64_t i, int64_t k) const {
    const int64_t t = i + padBegin[d] - k * dilation[d];
    if (t < 0 || t % stride[d] != 0)
      return -1;
    const int64_t o = t / stride[d];
    return o < out[d] ? o : -1;
  }
  /// Whether input position `in` (flat over in[], one plane) is a tap of
  /// output position `out` (flat over out[]): what a max-pool argmax must
  /// be, so that its backward may gather per input element.
  REMAT_HOST_DEVICE bool windowHolds(int64_t out, int64_t in) const {
    for (int d = kDims - 1; d >= 0; --d) {
      const int64_t offset =
          in % this->in[d] + padBegin[d] - (out % this->out[d]) * stride[d];
      if (offset < 0 || offset % dilation[d] != 0 ||
          offset / dilation[d] >= kernel[d])
        return false;
      in /= this->in[d];
      out /= this->out[d];
    }
    return true;
  }
  /// A 1x1 stride-1 unpadded window: the input is its own col matrix.
  bool pointwise() const {
    bool result = true;
    for (int d = 0; d < kDims; ++d)
      result = result && kernel[d] == 1 && stride[d] == 1 &&
               padBegin[d] == 0 && in[d] == out[d];
    return result;
  }
  /// Number of taps along dim d at output position o whose input index lies
  /// in [lo, hi).
  REMAT_HOST_DEVICE int64_t tapsWithin(int d, int64_t o, int64_t lo,
                                       int64_t hi) const {
    int64_t count = 0;
    for (int64_t k = 0; k < kernel[d]; ++k) {
      const int64_t i = inputIndex(d, o, k);
      count += i >= lo && i < hi;
    }
    return count;
  }
  /// AveragePool's divisor at one output position. The window is a box, so
  /// its tap count factors per dim. Including padding still excludes
  /// ceil-mode overhang past the padded input.
  REMAT_HOST_DEVICE int64_t averagePoolCount(int64_t od, int64_t oh,
                                             int64_t ow,
                                             bool countIncludePad) const {
    const int64_t pos[kDims] = {od, oh, ow};
    int64_t count = 1;
    for (int d = 0; d < kDims; ++d)
      count *= countIncludePad
                   ? tapsWithin(d, pos[d], -padBegin[d], in[d] + padEnd[d])
                   : tapsWithin(d, pos[d], 0, in[d]);
    return count;
  }
};

/// Reads x [N, C, s...] / y [N, M, s...] and the ONNX-style parameters;
/// `kernel` is the window (pooling) or the weight's spatial shape (conv).
Window3 makeWindow(const char *kernelName, const TensorView &x,
                   const TensorView &y, const WindowParams &p,
                   const Dims &kernel);

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_WINDOW_H
