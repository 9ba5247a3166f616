//===- DataMovementGrad.cpp - Gather(Elements), slice and pad backward ----===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"
#include "GradUtil.h"
#include "common/DataMovementChecks.h"
#include "common/StridedLoop.h"

#include <cstring>

namespace remat::rt {
using namespace cpu;

void gatherBackward(const TensorView &dy, const TensorView &indices,
                    const TensorView &dx, int64_t axis) {
  const char *kernel = "gatherBackward";
  const AxisExtents e = checkGatherBackward(kernel, dy, indices, dx, axis);
  const int64_t count = indices.numel();
  Scratch scratch(kernel, gatherBackwardScratchBytes(indices, dx));
  // Normalised indices (negative values count from the end).
  int64_t *idx = scratch.take<int64_t>(count);
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
  dispatchFloatStorage(dy.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *src = dy.as<const T>();
    accumulateInDouble(dx.as<T>(), dx.numel(), scratch, [&](double *acc) {
      for (int64_t o = 0; o < e.outer; ++o) {
        double *row = acc + o * e.size * e.inner;
        for (int64_t k = 0; k < count; ++k) {
          double *dst = row + idx[k] * e.inner;
          for (int64_t k = 0; k < e.inner; ++k)
            dst[k] += toCompute(src[k]);
          src += e.inner;
        }
      }
    });
  });
}

void gatherElementsBackward(const TensorView &dy, const TensorView &indices,
                            const TensorView &dx, int64_t axis) {
  const char *kernel = "gatherElementsBackward";
  const GatherElementsGeometry g =
      gatherElementsGeometry(kernel, dx, indices, dy, axis);
  Scratch scratch(kernel, gatherElementsBackwardScratchBytes(dx));
  dispatchIndex(indices.dtype, kernel, [&](auto indexTag) {
    using I = typename decltype(indexTag)::type;
    const I *idx = indices.as<const I>();
    dispatchFloatStorage(dy.dtype, kernel, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T *pdy = dy.as<const T>();
      accumulateInDouble(dx.as<T>(), dx.numel(), scratch, [&](double *acc) {
        for (int64_t p = 0, n = dy.numel(); p < n; ++p) {
          const int64_t v = static_cast<int64_t>(idx[p]);
          const int64_t c = gatherElementsCoordinate(v, g.axisSize);
          if (c < 0)
            fail(kernel, "index " + std::to_string(v) +
                             " out of range for axis of size " +
                             std::to_string(g.axisSize));
          acc[g.dataBase(p) + c * g.dataStride[axis]] += toCompute(pdy[p]);
        }
      });
    });
  });
}

void padBackward(const TensorView &dy, const TensorView &dx,
                 const Dims &begins, PadMode mode) {
  const char *kernel = "padBackward";
  requireDType(dx, dy.dtype, kernel, "dx");
  const PadGeometry g = padGeometry(kernel, dx.shape, dy.shape, begins, mode);
  // Each dx element sums its sources in double and rounds once, as the
  // scatter-style kernels do, but needs no accumulator buffer.
  dispatchFloatStorage(dy.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *pdy = dy.as<const T>();
    T *pdx = dx.as<T>();
    for (int64_t i = 0, n = dx.numel(); i < n; ++i)
      pdx[i] = fromDouble<T>(padGradient<double>(g, pdy, i));
  });
}

void sliceBackward(const TensorView &dy, const TensorView &dx,
                   const Dims &starts,
                   const Dims &steps) {
  const char *kernel = "sliceBackward";
  requireDType(dx, dy.dtype, kernel, "dx");
  int64_t base = 0;
  const Strides strides =
      sliceStrides(kernel, dx.shape, dy.shape, starts, steps, "writes",
                   "starts, steps, dy and dx need one entry per dim", base);
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
