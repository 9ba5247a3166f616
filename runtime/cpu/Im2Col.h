//===- Im2Col.h - im2col / col2im and pooling window walks -------*- C++ -*-===//
//
// Shared by the convolution / pooling forward (ConvPool.cpp) and backward
// (ConvPoolGrad.cpp) kernels; the window geometry (Window3) is
// common/Window.h's, shared with the CUDA backend.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CPU_IM2COL_H
#define REMAT_RUNTIME_CPU_IM2COL_H

#include "remat/runtime/Kernels.h"

#include "common/Window.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace remat::rt::cpu {

// Window3 and makeWindow are shared with the CUDA backend.
using namespace common;

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
/// through that kernel tap (0 in padding). A pure copy, so 16-bit inputs
/// unroll as they are.
template <typename T>
void im2col(const T *x, int64_t channels, const Window3 &w, T *col) {
  forEachColEntry(
      channels, w, [&](int64_t c, int64_t i) { col[c] = x[i]; },
      [&](int64_t c, int64_t n) { std::fill(col + c, col + c + n, T{}); });
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
