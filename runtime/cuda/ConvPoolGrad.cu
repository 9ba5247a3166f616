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
// Average-pool backward gathers each dx element's shares likewise; the sums
// visit their terms in the CPU's order. Max-pool backward scatters with
// atomicAdd (indices may repeat when windows overlap), in fp32 for 16-bit
// data (FloatAccumulation.cuh).
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
template <typename T>
__global__ void col2imKernel(const T *col, T *dx, int64_t total, Window3 w) {
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

  Scratch scratch(kernel);
  const int64_t colPerImage = C * w.kernelSize() * P;
  const int64_t chunk = imagesPerChunk<T>(scratch, colPerImage, N, kernel);
  T *col = scratch.take<T>(chunk * colPerImage);
  for (int64_t n0 = 0; n0 < N; n0 += chunk) {
    const int64_t count = std::min(chunk, N - n0);
    // col[n, g] [K, P] = W_g^T [K, Mg] * dy[n, g] [Mg, P]
    if (group <= count) {
      for (int64_t g = 0; g < group; ++g)
        gemmStridedBatched<T>(kernel, true, false, K, P, Mg, pw + g * Mg * K, 0,
                              pdy + (n0 * M + g * Mg) * P, M * P,
                              col + g * K * P, colPerImage, count,
                              ComputeType<T>(0));
    } else {
      for (int64_t i = 0; i < count; ++i)
        gemmStridedBatched<T>(kernel, true, false, K, P, Mg, pw, Mg * K,
                              pdy + (n0 + i) * M * P, Mg * P,
                              col + i * colPerImage, K * P, group,
                              ComputeType<T>(0));
    }
    const int64_t total = count * C * I;
    col2imKernel<T><<<gridFor(total), kThreads, 0, ctx.stream>>>(
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

/// Adds dy[i] at indices[i] of dx when that index lies in [lo, hi) (dx
/// points at element lo): the whole of dx for F32/F64, a window of an fp32
/// accumulator for 16-bit data.
template <typename T, typename Acc>
__global__ void maxPoolBackwardKernel(const T *dy, const int64_t *indices,
                                      Acc *dx, int64_t n, int64_t size,
                                      int64_t lo, int64_t hi,
                                      DeviceStatus *status) {
  REMAT_GRID_STRIDE_LOOP(i, n) {
    const int64_t target = indices[i];
    if (target < 0) // a window entirely in padding: no input position
      continue;
    if (target >= size) {
      reportError(status, kMaxPoolBackwardIndex, target);
      continue;
    }
    if (target >= lo && target < hi)
      atomicAdd(dx + (target - lo), static_cast<Acc>(toCompute(dy[i])));
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
                     const TensorView &dx) {
  const char *kernel = "maxPoolBackward";
  checkMaxPoolBackward(kernel, dy, indices, dx);
  Context &ctx = context(kernel);
  dispatchFloatStorage(dy.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = dy.numel(), size = dx.numel();
    auto scatter = [&](auto *acc, int64_t lo, int64_t hi) {
      if (n == 0)
        return;
      maxPoolBackwardKernel<<<gridFor(n), kThreads, 0, ctx.stream>>>(
          dy.as<const T>(), indices.as<const int64_t>(), acc, n, size, lo, hi,
          ctx.status);
      checkLaunch(kernel);
    };
    if constexpr (kIsHalfStorage<T>) {
      accumulateInFloat(kernel, dx.as<T>(), size, 1, scatter);
    } else {
      zeroAsync(dx.data, dx.bytes(), kernel);
      scatter(dx.as<T>(), 0, size);
    }
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
