//===- DataMovementGrad.cpp - Gather and slice backward -------------------===//

#include "remat/runtime/GradKernels.h"

#include "DTypeDispatch.h"
#include "GradUtil.h"
#include "StridedLoop.h"

#include <cstring>

namespace remat::rt {
using namespace cpu;

void gatherBackward(const TensorView &dy, const TensorView &indices,
                    const TensorView &dx, int64_t axis) {
  const char *kernel = "gatherBackward";
  requireDType(dx, dy.dtype, kernel, "dx");
  require(axis >= 0 && axis < dx.rank(), kernel, "axis out of range");
  require(dy.rank() == dx.rank() - 1 + indices.rank(), kernel,
          "dy rank must be rank(dx) - 1 + rank(indices)");
  const AxisExtents e = axisExtents(dx.shape, axis);
  const int64_t count = indices.numel();
  requireNumel(dy, e.outer * count * e.inner, kernel, "dy");
  // Normalised indices (negative values count from the end).
  std::vector<int64_t> idx(count);
  dispatchIndex(indices.dtype, kernel, [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I *p = indices.as<const I>();
    for (int64_t i = 0; i < count; ++i) {
      const int64_t v = static_cast<int64_t>(p[i]);
      if (v < -e.size || v >= e.size)
        fail(kernel, "index " + std::to_string(v) +
                         " out of range for axis of size " +
                         std::to_string(e.size));
      idx[i] = v < 0 ? v + e.size : v;
    }
  });
  dispatchFloat(dy.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *src = dy.as<const T>();
    accumulateInDouble(dx.as<T>(), dx.numel(), [&](double *acc) {
      for (int64_t o = 0; o < e.outer; ++o) {
        double *row = acc + o * e.size * e.inner;
        for (int64_t i : idx) {
          double *dst = row + i * e.inner;
          for (int64_t k = 0; k < e.inner; ++k)
            dst[k] += src[k];
          src += e.inner;
        }
      }
    });
  });
}

void sliceBackward(const TensorView &dy, const TensorView &dx,
                   const std::vector<int64_t> &starts,
                   const std::vector<int64_t> &steps) {
  const char *kernel = "sliceBackward";
  requireDType(dx, dy.dtype, kernel, "dx");
  require(static_cast<int64_t>(starts.size()) == dx.rank() &&
              static_cast<int64_t>(steps.size()) == dx.rank() &&
              dy.rank() == dx.rank(),
          kernel, "starts, steps, dy and dx need one entry per dim");
  const Strides xs = contiguousStrides(dx.shape);
  Strides strides(dx.rank());
  int64_t base = 0;
  for (int64_t d = 0; d < dx.rank(); ++d) {
    require(steps[d] != 0, kernel, "step is zero");
    if (dy.shape[d] > 0) { // first and last element written must be inside dx
      const int64_t last = starts[d] + (dy.shape[d] - 1) * steps[d];
      if (starts[d] < 0 || starts[d] >= dx.shape[d] || last < 0 ||
          last >= dx.shape[d])
        fail(kernel, "dim " + std::to_string(d) + " writes outside " +
                         shapeToString(dx.shape));
    }
    base += starts[d] * xs[d];
    strides[d] = steps[d] * xs[d];
  }
  // Every dtype: the sliced positions are distinct, so this only moves
  // elements (all-zero bytes are 0 for every dtype).
  std::memset(dx.data, 0, dx.bytes());
  if (dy.numel() == 0)
    return;
  dispatchBySize(dx.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T *pdx = dx.as<T>() + base;
    const T *pdy = dy.as<const T>();
    std::array<Strides, 2> st = {strides, contiguousStrides(dy.shape)};
    forEachRun<2>(dy.shape, st,
                  [&](const std::array<int64_t, 2> &off,
                      const std::array<int64_t, 2> &step, int64_t n) {
                    T *dst = pdx + off[0];
                    const T *src = pdy + off[1];
                    for (int64_t i = 0; i < n; ++i)
                      dst[i * step[0]] = src[i * step[1]];
                  });
  });
}

} // namespace remat::rt
