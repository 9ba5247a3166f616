//===- ConvPool.cu - Convolution (im2col + cuBLAS) and pooling ------------===//
//
// The CUDA versions of runtime/cpu/ConvPool.cpp. Convolution unrolls a chunk
// of images into columns in the workspace scratch (as many images as fit)
// and multiplies each group's weights with them in one strided-batched GEMM
// (over images, or over groups when there are more groups than images);
// a 1x1 stride-1 unpadded convolution multiplies the input directly. F16 and
// BF16 convolutions use 16-bit GEMMs with fp32 accumulation (Blas.cuh).
// Pooling gives each output element a thread that walks its window in the
// CPU's order.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Blas.cuh"
#include "Common.cuh"
#include "ConvCommon.cuh"
#include "Window.cuh"

#include "common/ConvPoolChecks.h"

namespace remat::rt::cuda {
using namespace detail;

namespace {

template <typename T>
__global__ void addChannelBiasKernel(T *y, const T *bias, int64_t n,
                                     int64_t channels, int64_t spatial) {
  REMAT_GRID_STRIDE_LOOP(i, n) {
    y[i] = fromCompute<T>(toCompute(y[i]) +
                          toCompute(bias[(i / spatial) % channels]));
  }
}

/// y[n, m, p] = bias[m]: the GEMMs then add into it (beta 1), so a 16-bit
/// output is rounded once, from the fp32 sum with the bias in it.
template <typename T>
__global__ void fillChannelBiasKernel(T *y, const T *bias, int64_t n,
                                      int64_t channels, int64_t spatial) {
  REMAT_GRID_STRIDE_LOOP(i, n) { y[i] = bias[(i / spatial) % channels]; }
}

template <typename T>
void convImpl(const TensorView &x, const TensorView &weight,
              const TensorView &bias, const TensorView &y, const Window3 &w,
              int64_t group) {
  const char *kernel = "conv";
  const int64_t N = x.shape[0], C = x.shape[1], M = weight.shape[0];
  const int64_t Cg = C / group, Mg = M / group;
  const int64_t K = Cg * w.kernelSize(), P = w.outSize(), I = w.inSize();
  if (N == 0 || M == 0 || P == 0)
    return;
  const T *px = x.as<const T>(), *pw = weight.as<const T>();
  T *py = y.as<T>();

  const bool pointwise = w.pointwise();
  // 16-bit outputs: the bias goes in first and the GEMMs accumulate onto it
  // in fp32 (one rounding). Rounding the product and then adding the bias
  // would round twice, off by up to 2 units in the last place.
  const bool biasFirst = kIsHalfStorage<T> && !bias.empty();
  if (biasFirst) {
    const int64_t n = y.numel();
    fillChannelBiasKernel<T><<<gridFor(n), kThreads, 0, context(kernel).stream>>>(
        py, bias.as<const T>(), n, M, P);
    checkLaunch(kernel);
  }
  const ComputeType<T> beta(biasFirst ? 1 : 0);
  Scratch scratch(kernel);
  const int64_t colPerImage = C * w.kernelSize() * P;
  const int64_t chunk =
      pointwise ? N : imagesPerChunk<T>(scratch, colPerImage, N, kernel);
  T *col = pointwise ? nullptr : scratch.take<T>(chunk * colPerImage);
  // Per image, the B operand (columns, or the input itself) and its stride.
  const int64_t imageStride = pointwise ? C * I : colPerImage;
  for (int64_t n0 = 0; n0 < N; n0 += chunk) {
    const int64_t count = std::min(chunk, N - n0);
    const T *cols = pointwise ? px + n0 * C * I : col;
    if (!pointwise)
      launchIm2col(kernel, px + n0 * C * I, col, count, C, w);
    // y[n, g] [Mg, P] = W_g [Mg, K] * cols[n, g] [K, P]
    if (group <= count) {
      for (int64_t g = 0; g < group; ++g)
        gemmStridedBatched<T>(kernel, false, false, Mg, P, K, pw + g * Mg * K,
                              0, cols + g * K * P, imageStride,
                              py + (n0 * M + g * Mg) * P, M * P, count,
                              beta);
    } else {
      for (int64_t i = 0; i < count; ++i)
        gemmStridedBatched<T>(kernel, false, false, Mg, P, K, pw, Mg * K,
                              cols + i * imageStride, K * P,
                              py + (n0 + i) * M * P, Mg * P, group, beta);
    }
  }
  if (!bias.empty() && !biasFirst) {
    const int64_t n = y.numel();
    addChannelBiasKernel<T>
        <<<gridFor(n), kThreads, 0, context(kernel).stream>>>(
            py, bias.as<const T>(), n, M, P);
    checkLaunch(kernel);
  }
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void maxPoolKernel(const T *x, T *y, int64_t *indices, int64_t n,
                              Window3 w) {
  REMAT_GRID_STRIDE_LOOP(e, n) {
    int64_t index;
    y[e] = maxPoolAt(x, e, w, index);
    if (indices)
      indices[e] = index;
  }
}

template <typename T>
__global__ void averagePoolKernel(const T *x, T *y, int64_t n, Window3 w,
                                  bool countIncludePad) {
  REMAT_GRID_STRIDE_LOOP(e, n) {
    y[e] = averagePoolAt(x, e, w, countIncludePad);
  }
}

} // namespace

void conv(const TensorView &x, const TensorView &w, const TensorView &bias,
          const TensorView &y, const WindowParams &params, int64_t group) {
  const char *kernel = "conv";
  const Window3 win = checkConv(kernel, x, w, bias, y, params, group);
  context(kernel);
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    convImpl<typename decltype(tag)::type>(x, w, bias, y, win, group);
  });
}

void maxPool(const TensorView &x, const TensorView &y,
             const TensorView &indices, const WindowParams &params) {
  const char *kernel = "maxPool";
  const Window3 w = checkMaxPool(kernel, x, y, indices, params);
  cudaStream_t stream = context(kernel).stream;
  int64_t *pi = indices.empty() ? nullptr : indices.as<int64_t>();
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = y.numel();
    if (n == 0)
      return;
    maxPoolKernel<T><<<gridFor(n), kThreads, 0, stream>>>(x.as<const T>(),
                                                          y.as<T>(), pi, n, w);
    checkLaunch(kernel);
  });
}

void averagePool(const TensorView &x, const TensorView &y,
                 const WindowParams &params, bool countIncludePad) {
  const char *kernel = "averagePool";
  checkPoolShapes(kernel, x, y);
  const Window3 w = makeWindow(kernel, x, y, params, params.kernel);
  cudaStream_t stream = context(kernel).stream;
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = y.numel();
    if (n == 0)
      return;
    averagePoolKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
        x.as<const T>(), y.as<T>(), n, w, countIncludePad);
    checkLaunch(kernel);
  });
}

void globalAveragePool(const TensorView &x, const TensorView &y) {
  const char *kernel = "globalAveragePool";
  checkPoolShapes(kernel, x, y);
  requireNumel(y, x.shape[0] * x.shape[1], kernel, "output");
  dispatchFloatStorage(x.dtype, kernel, [](auto) {});
  // The mean over the spatial dims: ReduceMean exactly.
  Dims axes;
  for (int64_t d = 2; d < x.rank(); ++d)
    axes.push_back(d);
  cuda::reduce(ReduceOp::Mean, x, y, axes);
}

} // namespace remat::rt::cuda
