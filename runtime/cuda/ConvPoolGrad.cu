//===- ConvPoolGrad.cu - Convolution and pooling backward -----------------===//
//
// The CUDA versions of runtime/cpu/ConvPoolGrad.cpp. Convolution backward
// mirrors the forward's im2col + GEMM:
//   data:   col = W_g^T dy_g (cuBLAS), then col2im gives each dx element a
//           thread that sums (in the compute type) the col entries that
//           read it;
//   filter: dW_g = sum_n dy_g[n] col(x_g[n])^T, accumulated GEMM by GEMM
//           (beta = 1) in image order, as the CPU; for F16/BF16 into an
//           fp32 accumulator in the scratch, rounded once at the end.
// Average-pool and max-pool backward gather each dx element's shares
// likewise: a max-pool input sums dy of the windows containing it whose
// argmax it is. The sums visit their terms in the CPU's order, without
// atomics, so two runs give the same bits.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Blas.cuh"
#include "Common.cuh"
#include "ConvCommon.cuh"
#include "FloatAccumulation.cuh"
#include "Window.cuh"

#include "common/ConvPoolChecks.h"

namespace remat::rt::cuda {
using namespace detail;

namespace {

/// dx [images, C, in...] from col [images, C * kernel, out...]: each input
/// position sums the entries that im2col copied from it.
template <typename T, typename Col>
__global__ void col2imKernel(const Col *col, T *dx, int64_t total, Window3 w) {
  REMAT_GRID_STRIDE_LOOP(e, total) { dx[e] = fromCompute<T>(col2imAt(col, e, w)); }
}

template <typename T>
void convBackwardDataImpl(const TensorView &dy, const TensorView &weight,
                          const TensorView &dx, const Window3 &w,
                          int64_t group) {
  const char *kernel = "convBackwardData";
  const int64_t N = dx.shape[0], C = dx.shape[1], M = weight.shape[0];
  const int64_t Cg = C / group, Mg = M / group;
  const int64_t K = Cg * w.kernelSize(), P = w.outSize(), I = w.inSize();
  if (dx.numel() == 0)
    return;
  const T *pdy = dy.as<const T>(), *pw = weight.as<const T>();
  T *pdx = dx.as<T>();
  Context &ctx = context(kernel);

  if (w.pointwise()) {
    // The col matrix is dx itself: dx_g [Cg, P] = W_g^T [Cg, Mg] dy_g.
    for (int64_t g = 0; g < group; ++g)
      gemmStridedBatched<T>(kernel, true, false, K, P, Mg, pw + g * Mg * K, 0,
                            pdy + g * Mg * P, M * P, pdx + g * Cg * I, C * I, N,
                            ComputeType<T>(0));
    return;
  }

  // 16-bit gradients keep the columns in fp32, so that each dx element is
  // rounded once, after col2im's sum (rounding each term too would put it
  // several units in the last place off).
  using Col = std::conditional_t<kIsHalfStorage<T>, float, T>;
  Scratch scratch(kernel);
  const int64_t colPerImage = C * w.kernelSize() * P;
  const int64_t chunk = imagesPerChunk<Col>(scratch, colPerImage, N, kernel);
  Col *col = scratch.take<Col>(chunk * colPerImage);
  for (int64_t n0 = 0; n0 < N; n0 += chunk) {
    const int64_t count = std::min(chunk, N - n0);
    // col[n, g] [K, P] = W_g^T [K, Mg] * dy[n, g] [Mg, P]
    if (group <= count) {
      for (int64_t g = 0; g < group; ++g)
        gemmStridedBatched<T, Col>(kernel, true, false, K, P, Mg,
                                   pw + g * Mg * K, 0,
                                   pdy + (n0 * M + g * Mg) * P, M * P,
                                   col + g * K * P, colPerImage, count,
                                   ComputeType<T>(0));
    } else {
      for (int64_t i = 0; i < count; ++i)
        gemmStridedBatched<T, Col>(kernel, true, false, K, P, Mg, pw, Mg * K,
                                   pdy + (n0 + i) * M * P, Mg * P,
                                   col + i * colPerImage, K * P, group,
                                   ComputeType<T>(0));
    }
    const int64_t total = count * C * I;
    col2imKernel<T, Col><<<gridFor(total), kThreads, 0, ctx.stream>>>(
        col, pdx + n0 * C * I, total, w);
    checkLaunch(kernel);
  }
}

template <typename T>
void convBackwardFilterImpl(const TensorView &x, const TensorView &dy,
                            const TensorView &dw, const Window3 &w,
                            int64_t group) {
  const char *kernel = "convBackwardFilter";
  const int64_t N = x.shape[0], C = x.shape[1], M = dw.shape[0];
  const int64_t Cg = C / group, Mg = M / group;
  const int64_t K = Cg * w.kernelSize(), P = w.outSize(), I = w.inSize();
  const T *px = x.as<const T>(), *pdy = dy.as<const T>();
  T *pdw = dw.as<T>();
  if (N == 0) {
    zeroAsync(pdw, dw.bytes(), kernel);
    return;
  }
  const bool pointwise = w.pointwise();
  Scratch scratch(kernel);
  // 16-bit filter gradients sum the batch in an fp32 accumulator.
  using Acc = std::conditional_t<kIsHalfStorage<T>, float, T>;
  Acc *acc = nullptr;
  if constexpr (kIsHalfStorage<T>)
    acc = scratch.take<float>(static_cast<size_t>(dw.numel()));
  else
    acc = pdw;
  const int64_t colPerImage = C * w.kernelSize() * P;
  const int64_t chunk =
      pointwise ? N : imagesPerChunk<T>(scratch, colPerImage, N, kernel);
  T *col = pointwise ? nullptr : scratch.take<T>(chunk * colPerImage);
  const int64_t imageStride = pointwise ? C * I : colPerImage;
  for (int64_t n0 = 0; n0 < N; n0 += chunk) {
    const int64_t count = std::min(chunk, N - n0);
    const T *cols = pointwise ? px + n0 * C * I : col;
    if (!pointwise)
      launchIm2col(kernel, px + n0 * C * I, col, count, C, w);
    // dW_g [Mg, K] (+)= dy[n, g] [Mg, P] * cols[n, g]^T [P, K], all groups
    // in one call per image.
    for (int64_t i = 0; i < count; ++i) {
      const int64_t n = n0 + i;
      gemmStridedBatched<T, Acc>(kernel, false, true, Mg, K, P,
                                 pdy + n * M * P, Mg * P,
                                 cols + i * imageStride, K * P, acc, Mg * K,
                                 group, ComputeType<T>(n == 0 ? 0 : 1));
    }
  }
  if constexpr (kIsHalfStorage<T>) {
    const int64_t n = dw.numel();
    roundAccumulatorKernel<T>
        <<<gridFor(n), kThreads, 0, context(kernel).stream>>>(acc, pdw, n);
    checkLaunch(kernel);
  }
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// Reports an argmax outside its output's window (the gather below would
/// drop it silently; maxPool never writes one). -1 is a window entirely in
/// padding.
__global__ void maxPoolIndexCheckKernel(const int64_t *indices, int64_t n,
                                        Window3 w, DeviceStatus *status) {
  REMAT_GRID_STRIDE_LOOP(o, n) {
    const int64_t target = indices[o];
    if (target < 0)
      continue;
    const int64_t inPlane = w.inSize(), outPlane = w.outSize();
    if (target / inPlane != o / outPlane ||
        !w.windowHolds(o % outPlane, target % inPlane))
      reportError(status, kMaxPoolBackwardIndex, target);
  }
}

template <typename T>
__global__ void maxPoolBackwardKernel(const T *dy, const int64_t *indices,
                                      T *dx, int64_t total, Window3 w) {
  REMAT_GRID_STRIDE_LOOP(e, total) {
    dx[e] = fromCompute<T>(maxPoolBackwardAt(dy, indices, e, w));
  }
}

template <typename T>
__global__ void averagePoolBackwardKernel(const T *dy, T *dx, int64_t total,
                                          Window3 w, bool countIncludePad) {
  REMAT_GRID_STRIDE_LOOP(e, total) {
    dx[e] = fromCompute<T>(averagePoolBackwardAt(dy, e, w, countIncludePad));
  }
}

} // namespace

void convBackwardData(const TensorView &dy, const TensorView &w,
                      const TensorView &dx, const WindowParams &params,
                      int64_t group) {
  const char *kernel = "convBackwardData";
  const Window3 win = checkConvGrad(kernel, dx, w, dy, params, group);
  context(kernel);
  dispatchFloatStorage(dx.dtype, kernel, [&](auto tag) {
    convBackwardDataImpl<typename decltype(tag)::type>(dy, w, dx, win, group);
  });
}

void convBackwardFilter(const TensorView &x, const TensorView &dy,
                        const TensorView &dw, const WindowParams &params,
                        int64_t group) {
  const char *kernel = "convBackwardFilter";
  const Window3 win = checkConvGrad(kernel, x, dw, dy, params, group);
  context(kernel);
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    convBackwardFilterImpl<typename decltype(tag)::type>(x, dy, dw, win, group);
  });
}

void maxPoolBackward(const TensorView &dy, const TensorView &indices,
                     const TensorView &dx, const WindowParams &params) {
  const char *kernel = "maxPoolBackward";
  const Window3 w = checkMaxPoolBackward(kernel, dy, indices, dx, params);
  Context &ctx = context(kernel);
  const int64_t n = dy.numel(), total = dx.numel();
  if (n > 0) {
    maxPoolIndexCheckKernel<<<gridFor(n), kThreads, 0, ctx.stream>>>(
        indices.as<const int64_t>(), n, w, ctx.status);
    checkLaunch(kernel);
  }
  if (n == 0) {
    zeroAsync(dx.data, dx.bytes(), kernel);
    return;
  }
  dispatchFloatStorage(dy.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (total == 0)
      return;
    maxPoolBackwardKernel<T><<<gridFor(total), kThreads, 0, ctx.stream>>>(
        dy.as<const T>(), indices.as<const int64_t>(), dx.as<T>(), total, w);
    checkLaunch(kernel);
  });
}

void averagePoolBackward(const TensorView &dy, const TensorView &dx,
                         const WindowParams &params, bool countIncludePad) {
  const char *kernel = "averagePoolBackward";
  checkPoolGrad(kernel, dy, dx);
  const Window3 w = makeWindow(kernel, dx, dy, params, params.kernel);
  cudaStream_t stream = context(kernel).stream;
  dispatchFloatStorage(dy.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t total = dx.numel();
    if (total == 0)
      return;
    averagePoolBackwardKernel<T><<<gridFor(total), kThreads, 0, stream>>>(
        dy.as<const T>(), dx.as<T>(), total, w, countIncludePad);
    checkLaunch(kernel);
  });
}

} // namespace remat::rt::cuda
