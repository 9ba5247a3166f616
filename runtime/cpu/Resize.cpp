//===- Resize.cpp - ONNX Resize and its backward --------------------------===//
//
// Both directions gather: y reads the inputs of each output element, and
// each dx element sums the outputs that read it (common/ResizeSum.h), so
// neither needs scratch and both are deterministic.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"
#include "common/IndexingChecks.h"
#include "common/ResizeSum.h"

namespace remat::rt {
using namespace cpu;

void resize(const TensorView &x, const TensorView &y,
            const ResizeParams &params) {
  const char *kernel = "resize";
  requireDType(y, x.dtype, kernel, "output");
  const ResizeGeometry g = resizeGeometry(kernel, x.shape, y.shape, params);
  const int64_t n = y.numel();
  if (params.mode == ResizeMode::Nearest) {
    dispatchBySize(x.dtype, kernel, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T *px = x.as<const T>();
      T *py = y.as<T>();
      for (int64_t o = 0; o < n; ++o)
        py[o] = px[resizeNearestOffset(g, o)];
    });
    return;
  }
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *px = x.as<const T>();
    T *py = y.as<T>();
    for (int64_t o = 0; o < n; ++o)
      py[o] = fromCompute<T>(resizeInterpolatedAt(g, px, o));
  });
}

void resizeBackward(const TensorView &dy, const TensorView &dx,
                    const ResizeParams &params) {
  const char *kernel = "resizeBackward";
  requireDType(dx, dy.dtype, kernel, "dx");
  const ResizeGeometry g = resizeGeometry(kernel, dx.shape, dy.shape, params);
  dispatchFloatStorage(dy.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *pdy = dy.as<const T>();
    T *pdx = dx.as<T>();
    for (int64_t i = 0, n = dx.numel(); i < n; ++i)
      pdx[i] = fromCompute<T>(resizeGradientAt(g, pdy, i));
  });
}

} // namespace remat::rt
