//===- ConvPool.cpp - Convolution (im2col + GEMM) and pooling -------------===//
//
// 1-D and 2-D problems are run as 3-D ones with leading unit spatial dims
// (kernel 1, stride 1, no padding), so there is one loop nest per kernel;
// im2col lives in Im2Col.h, shared with the backward, and the window
// geometry and operand checks in common/, shared with the CUDA backend.
// F16/BF16 convolutions unroll their 16-bit input as it is and multiply
// through fp32 panels (HalfGemm.h); pooling compares and sums in the
// compute type.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"
#include "HalfGemm.h"
#include "Im2Col.h"
#include "Scratch.h"
#include "common/ConvPoolChecks.h"

#include <algorithm>
#include <limits>

namespace remat::rt {
using namespace cpu;

namespace {

template <typename T>
void convImpl(const TensorView &x, const TensorView &weight,
              const TensorView &bias, const TensorView &y, const Window3 &w,
              int64_t group, Scratch &scratch) {
  const int64_t N = x.shape[0], C = x.shape[1], M = weight.shape[0];
  const int64_t Cg = C / group, Mg = M / group;
  const int64_t K = Cg * w.kernelSize(), P = w.outSize(), I = w.inSize();

  // A 1x1 stride-1 unpadded conv reads the input as its own col matrix.
  const bool pointwise = w.pointwise();
  T *col = pointwise ? nullptr : scratch.take<T>(K * P);
  GemmFor<T> gemm(scratch, Mg, P, K);
  // A 16-bit bias enters the GEMM's fp32 sum (y holds it exactly), so y is
  // rounded once; float and double add it to the product.
  constexpr bool biasInSum = kIsHalfStorage<T>;

  const T *px = x.as<const T>(), *pw = weight.as<const T>();
  const T *pb = bias.empty() ? nullptr : bias.as<const T>();
  T *py = y.as<T>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < group; ++g) {
      const T *xg = px + (n * C + g * Cg) * I;
      if (!pointwise)
        im2col(xg, Cg, w, col);
      T *yg = py + (n * M + g * Mg) * P;
      if (biasInSum && pb)
        for (int64_t m = 0; m < Mg; ++m)
          std::fill(yg + m * P, yg + (m + 1) * P, pb[g * Mg + m]);
      gemm(false, false, Mg, P, K, pw + g * Mg * K, pointwise ? xg : col, yg,
           biasInSum && pb);
      if constexpr (!biasInSum)
        if (pb)
          for (int64_t m = 0; m < Mg; ++m) {
            const T b = pb[g * Mg + m];
            for (int64_t i = 0; i < P; ++i)
              yg[m * P + i] += b;
          }
    }
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// Runs poolOne(plane, planeIndex, od, oh, ow) -> output value for every
/// output position of every (n, c) plane.
template <typename T, typename PoolOne>
void poolLoop(const TensorView &x, const TensorView &y, const Window3 &w,
              PoolOne &&poolOne) {
  const int64_t planes = x.shape[0] * x.shape[1];
  const T *px = x.as<const T>();
  T *py = y.as<T>();
  for (int64_t p = 0; p < planes; ++p) {
    const T *plane = px + p * w.inSize();
    for (int64_t od = 0; od < w.out[0]; ++od)
      for (int64_t oh = 0; oh < w.out[1]; ++oh)
        for (int64_t ow = 0; ow < w.out[2]; ++ow)
          *py++ = poolOne(plane, p, od, oh, ow);
  }
}

} // namespace

void conv(const TensorView &x, const TensorView &w, const TensorView &bias,
          const TensorView &y, const WindowParams &params, int64_t group) {
  const char *kernel = "conv";
  const Window3 win = checkConv(kernel, x, w, bias, y, params, group);
  Scratch scratch(kernel, convScratchBytes(x, w, y, params, group));
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    convImpl<typename decltype(tag)::type>(x, w, bias, y, win, group,
                                           scratch);
  });
}

void maxPool(const TensorView &x, const TensorView &y,
             const TensorView &indices, const WindowParams &params) {
  const char *kernel = "maxPool";
  const Window3 w = checkMaxPool(kernel, x, y, indices, params);
  int64_t *pi = indices.empty() ? nullptr : indices.as<int64_t>();
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    poolLoop<T>(x, y, w, [&](const T *plane, int64_t p, int64_t od,
                             int64_t oh, int64_t ow) {
      C best = -std::numeric_limits<C>::infinity();
      int64_t bestIndex = -1;
      forEachTap(plane, w, od, oh, ow, [&](int64_t flat, T stored) {
        const C v = toCompute(stored);
        if (bestIndex < 0 || v > best) {
          best = v;
          bestIndex = flat;
        }
      });
      if (pi) // flat index into all of x (ONNX storage_order 0)
        *pi++ = bestIndex < 0 ? -1 : p * w.inSize() + bestIndex;
      return fromCompute<T>(best);
    });
  });
}

void averagePool(const TensorView &x, const TensorView &y,
                 const WindowParams &params, bool countIncludePad) {
  const char *kernel = "averagePool";
  checkPoolShapes(kernel, x, y);
  const Window3 w = makeWindow(kernel, x, y, params, params.kernel);
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    poolLoop<T>(x, y, w, [&](const T *plane, int64_t, int64_t od, int64_t oh,
                             int64_t ow) {
      double sum = 0;
      forEachTap(plane, w, od, oh, ow,
                 [&](int64_t, T v) { sum += toCompute(v); });
      const int64_t count = w.averagePoolCount(od, oh, ow, countIncludePad);
      return fromDouble<T>(sum / static_cast<double>(count));
    });
  });
}

void globalAveragePool(const TensorView &x, const TensorView &y) {
  const char *kernel = "globalAveragePool";
  checkPoolShapes(kernel, x, y);
  requireNumel(y, x.shape[0] * x.shape[1], kernel, "output");
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t planes = y.numel();
    const int64_t size = planes == 0 ? 0 : x.numel() / planes;
    const T *px = x.as<const T>();
    T *py = y.as<T>();
    for (int64_t p = 0; p < planes; ++p) {
      double sum = 0;
      for (int64_t i = 0; i < size; ++i)
        sum += toCompute(px[p * size + i]);
      py[p] = fromDouble<T>(sum / static_cast<double>(size));
    }
  });
}

} // namespace remat::rt
