//===- Resize.cu - ONNX Resize and its backward ---------------------------===//
//
// The CUDA versions of runtime/cpu/Resize.cpp: one thread per output element
// (forward) or per dx element (backward), each computing its element with
// the CPU's code (common/ResizeSum.h), so both backends give the same bits.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Common.cuh"
#include "common/FloatStorage.h"
#include "common/IndexingChecks.h"
#include "common/ResizeSum.h"

namespace remat::rt::cuda {
using namespace detail;

namespace {

template <typename T>
__global__ void resizeNearestKernel(const T *x, T *y, int64_t n,
                                    ResizeGeometry g) {
  REMAT_GRID_STRIDE_LOOP(o, n) { y[o] = x[resizeNearestOffset(g, o)]; }
}

template <typename T>
__global__ void resizeInterpolatedKernel(const T *x, T *y, int64_t n,
                                         ResizeGeometry g) {
  REMAT_GRID_STRIDE_LOOP(o, n) {
    y[o] = fromCompute<T>(resizeInterpolatedAt(g, x, o));
  }
}

template <typename T>
__global__ void resizeBackwardKernel(const T *dy, T *dx, int64_t n,
                                     ResizeGeometry g) {
  REMAT_GRID_STRIDE_LOOP(i, n) {
    dx[i] = fromCompute<T>(resizeGradientAt(g, dy, i));
  }
}

} // namespace

void resize(const TensorView &x, const TensorView &y,
            const ResizeParams &params) {
  const char *kernel = "resize";
  requireDType(y, x.dtype, kernel, "output");
  const ResizeGeometry g = resizeGeometry(kernel, x.shape, y.shape, params);
  cudaStream_t stream = context(kernel).stream;
  const int64_t n = y.numel();
  if (params.mode == ResizeMode::Nearest) {
    dispatchBySize(x.dtype, kernel, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (n == 0)
        return;
      resizeNearestKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
          x.as<const T>(), y.as<T>(), n, g);
      checkLaunch(kernel);
    });
    return;
  }
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n == 0)
      return;
    resizeInterpolatedKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
        x.as<const T>(), y.as<T>(), n, g);
    checkLaunch(kernel);
  });
}

void resizeBackward(const TensorView &dy, const TensorView &dx,
                    const ResizeParams &params) {
  const char *kernel = "resizeBackward";
  requireDType(dx, dy.dtype, kernel, "dx");
  const ResizeGeometry g = resizeGeometry(kernel, dx.shape, dy.shape, params);
  cudaStream_t stream = context(kernel).stream;
  const int64_t n = dx.numel();
  dispatchFloatStorage(dy.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n == 0)
      return;
    resizeBackwardKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
        dy.as<const T>(), dx.as<T>(), n, g);
    checkLaunch(kernel);
  });
}

} // namespace remat::rt::cuda
