//===- Im2Col.h - Window geometry, im2col / col2im ---------------*- C++ -*-===//
//
// Shared by the convolution / pooling forward (ConvPool.cpp) and backward
// (ConvPoolGrad.cpp) kernels. 1-D and 2-D problems are run as 3-D ones with
// leading unit spatial dims (kernel 1, stride 1, no padding), so there is one
// loop nest per kernel.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CPU_IM2COL_H
#define REMAT_RUNTIME_CPU_IM2COL_H

#include "remat/runtime/Kernels.h"

#include "Check.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace remat::rt::cpu {

constexpr int kDims = 3;

/// Window geometry over exactly three spatial dims.
struct Window3 {
  int64_t in[kDims], out[kDims], kernel[kDims], stride[kDims];
  int64_t padBegin[kDims], padEnd[kDims], dilation[kDims];

  int64_t inSize() const { return in[0] * in[1] * in[2]; }
  int64_t outSize() const { return out[0] * out[1] * out[2]; }
  int64_t kernelSize() const { return kernel[0] * kernel[1] * kernel[2]; }
  /// Input coordinate of output position o, window offset k, along dim d.
  int64_t inputIndex(int d, int64_t o, int64_t k) const {
    return o * stride[d] - padBegin[d] + k * dilation[d];
  }
  /// A 1x1 stride-1 unpadded window: the input is its own col matrix.
  bool pointwise() const {
    bool result = true;
    for (int d = 0; d < kDims; ++d)
      result = result && kernel[d] == 1 && stride[d] == 1 &&
               padBegin[d] == 0 && in[d] == out[d];
    return result;
  }
};

/// Reads x [N, C, s...] / y [N, M, s...] and the ONNX-style parameters;
/// `kernel` is the window (pooling) or the weight's spatial shape (conv).
inline Window3 makeWindow(const char *kernelName, const TensorView &x,
                          const TensorView &y, const WindowParams &p,
                          const std::vector<int64_t> &kernel) {
  const int64_t k = x.rank() - 2;
  require(k >= 1 && k <= kDims, kernelName,
          "expects 1 to 3 spatial dims (input rank 3 to 5)");
  require(y.rank() == x.rank(), kernelName, "output rank differs from input");
  require(static_cast<int64_t>(kernel.size()) == k, kernelName,
          "kernel shape has the wrong rank");
  require(p.strides.empty() || static_cast<int64_t>(p.strides.size()) == k,
          kernelName, "strides have the wrong length");
  require(p.dilations.empty() ||
              static_cast<int64_t>(p.dilations.size()) == k,
          kernelName, "dilations have the wrong length");
  require(p.pads.empty() || static_cast<int64_t>(p.pads.size()) == 2 * k,
          kernelName, "pads must hold begin and end values per spatial dim");
  Window3 w;
  for (int d = 0; d < kDims; ++d) {
    const int64_t lead = kDims - k; // unit dims fill the front
    const int64_t i = d - lead;
    const bool real = i >= 0;
    w.in[d] = real ? x.shape[2 + i] : 1;
    w.out[d] = real ? y.shape[2 + i] : 1;
    w.kernel[d] = real ? kernel[i] : 1;
    w.stride[d] = real && !p.strides.empty() ? p.strides[i] : 1;
    w.dilation[d] = real && !p.dilations.empty() ? p.dilations[i] : 1;
    w.padBegin[d] = real && !p.pads.empty() ? p.pads[i] : 0;
    w.padEnd[d] = real && !p.pads.empty() ? p.pads[k + i] : 0;
    require(w.stride[d] >= 1 && w.dilation[d] >= 1 && w.kernel[d] >= 1,
            kernelName, "kernel, strides and dilations must be positive");
  }
  return w;
}

/// Walks col's layout [C * kernel, out...] against one group's input
/// [C, in...]: calls tap(colIndex, inputIndex) for every col entry whose
/// input position lies inside the input, and pad(colIndex, count) for each
/// run of `count` entries that fall in padding (or ceil-mode overhang).
/// im2col and col2im are the two directions of this correspondence.
template <typename Tap, typename Pad>
void forEachColEntry(int64_t channels, const Window3 &w, Tap &&tap,
                     Pad &&pad) {
  const int64_t outSize = w.outSize();
  int64_t col = 0;
  for (int64_t c = 0; c < channels; ++c) {
    const int64_t src = c * w.inSize();
    for (int64_t kd = 0; kd < w.kernel[0]; ++kd)
      for (int64_t kh = 0; kh < w.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
          int64_t dst = col;
          col += outSize;
          for (int64_t od = 0; od < w.out[0]; ++od) {
            const int64_t id = w.inputIndex(0, od, kd);
            if (id < 0 || id >= w.in[0]) {
              pad(dst, w.out[1] * w.out[2]);
              dst += w.out[1] * w.out[2];
              continue;
            }
            for (int64_t oh = 0; oh < w.out[1]; ++oh) {
              const int64_t ih = w.inputIndex(1, oh, kh);
              if (ih < 0 || ih >= w.in[1]) {
                pad(dst, w.out[2]);
                dst += w.out[2];
                continue;
              }
              const int64_t row = src + (id * w.in[1] + ih) * w.in[2];
              for (int64_t ow = 0; ow < w.out[2]; ++ow, ++dst) {
                const int64_t iw = w.inputIndex(2, ow, kw);
                if (iw >= 0 && iw < w.in[2])
                  tap(dst, row + iw);
                else
                  pad(dst, 1);
              }
            }
          }
        }
  }
}

/// Unrolls one group's input [C, in...] into col [C * kernel, out...]:
/// row (c, kd, kh, kw) holds the input value each output position sees
/// through that kernel tap (0 in padding).
template <typename T>
void im2col(const T *x, int64_t channels, const Window3 &w, T *col) {
  forEachColEntry(
      channels, w, [&](int64_t c, int64_t i) { col[c] = x[i]; },
      [&](int64_t c, int64_t n) { std::fill(col + c, col + c + n, T(0)); });
}

/// The adjoint of im2col: adds every col entry into the input position it
/// was read from (padding entries are dropped). `x` is not cleared first.
template <typename Acc, typename T>
void col2im(const T *col, int64_t channels, const Window3 &w, Acc *x) {
  forEachColEntry(
      channels, w, [&](int64_t c, int64_t i) { x[i] += col[c]; },
      [](int64_t, int64_t) {});
}

//===----------------------------------------------------------------------===//
// Pooling windows
//===----------------------------------------------------------------------===//

/// Number of taps along dim d at output position o whose input index lies in
/// [lo, hi).
inline int64_t tapsWithin(const Window3 &w, int d, int64_t o, int64_t lo,
                          int64_t hi) {
  int64_t count = 0;
  for (int64_t k = 0; k < w.kernel[d]; ++k) {
    const int64_t i = w.inputIndex(d, o, k);
    count += i >= lo && i < hi;
  }
  return count;
}

/// AveragePool's divisor at one output position. The window is a box, so its
/// tap count factors per dim. Including padding still excludes ceil-mode
/// overhang past the padded input.
inline int64_t averagePoolCount(const Window3 &w, int64_t od, int64_t oh,
                                int64_t ow, bool countIncludePad) {
  const int64_t pos[kDims] = {od, oh, ow};
  int64_t count = 1;
  for (int d = 0; d < kDims; ++d)
    count *= countIncludePad ? tapsWithin(w, d, pos[d], -w.padBegin[d],
                                          w.in[d] + w.padEnd[d])
                             : tapsWithin(w, d, pos[d], 0, w.in[d]);
  return count;
}

/// Calls visit(flatIndexInPlane, value) for each window tap inside the input
/// (padding and ceil-mode overhang are skipped), for one output position.
template <typename T, typename Visit>
void forEachTap(T *plane, const Window3 &w, int64_t od, int64_t oh,
                int64_t ow, Visit &&visit) {
  for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
    const int64_t id = w.inputIndex(0, od, kd);
    if (id < 0 || id >= w.in[0])
      continue;
    for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
      const int64_t ih = w.inputIndex(1, oh, kh);
      if (ih < 0 || ih >= w.in[1])
        continue;
      for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
        const int64_t iw = w.inputIndex(2, ow, kw);
        if (iw < 0 || iw >= w.in[2])
          continue;
        const int64_t flat = (id * w.in[1] + ih) * w.in[2] + iw;
        visit(flat, plane[flat]);
      }
    }
  }
}

} // namespace remat::rt::cpu

#endif // REMAT_RUNTIME_CPU_IM2COL_H
