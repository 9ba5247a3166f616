//===- ConvPoolGrad.cpp - Convolution and pooling backward ----------------===//
//
// Conv backward mirrors the forward's im2col + GEMM (Im2Col.h):
//   data:   col = W_g^T dy_g, then col2im scatters col into dx;
//   filter: dW_g = sum_n dy_g[n] col(x_g[n])^T.
// Scatters into dx (col2im, pooling) accumulate in double. F16/BF16
// multiply through fp32 panels (HalfGemm.h) into fp32: col holds fp32, and
// the filter gradient sums the images in fp32 and is rounded once.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"
#include "GradUtil.h"
#include "HalfGemm.h"
#include "Im2Col.h"
#include "common/ConvPoolChecks.h"

#include <algorithm>

namespace remat::rt {
using namespace cpu;

namespace {

template <typename T>
void convBackwardDataImpl(const TensorView &dy, const TensorView &weight,
                          const TensorView &dx, const Window3 &w,
                          int64_t group, Scratch &scratch) {
  const int64_t N = dx.shape[0], C = dx.shape[1], M = weight.shape[0];
  const int64_t Cg = C / group, Mg = M / group;
  const int64_t K = Cg * w.kernelSize(), P = w.outSize(), I = w.inSize();
  ComputeType<T> *col = scratch.take<ComputeType<T>>(K * P);
  GemmFor<T> gemm(scratch, K, P, Mg);
  const T *pdy = dy.as<const T>(), *pw = weight.as<const T>();
  accumulateInDouble(dx.as<T>(), dx.numel(), scratch, [&](double *acc) {
    for (int64_t n = 0; n < N; ++n)
      for (int64_t g = 0; g < group; ++g) {
        // col [K, P] = W_g^T [K, Mg] * dy_g [Mg, P]
        gemm(true, false, K, P, Mg, pw + g * Mg * K,
             pdy + (n * M + g * Mg) * P, col);
        col2im(col, Cg, w, acc + (n * C + g * Cg) * I);
      }
  });
}

template <typename T>
void convBackwardFilterImpl(const TensorView &x, const TensorView &dy,
                            const TensorView &dw, const Window3 &w,
                            int64_t group, Scratch &scratch) {
  const int64_t N = x.shape[0], C = x.shape[1], M = dw.shape[0];
  const int64_t Cg = C / group, Mg = M / group;
  const int64_t K = Cg * w.kernelSize(), P = w.outSize(), I = w.inSize();
  const bool pointwise = w.pointwise();
  T *col = pointwise ? nullptr : scratch.take<T>(K * P);
  // dW_g sums over the images in place, or for 16-bit T in an fp32
  // accumulator rounded into dW_g once.
  using Acc = ComputeType<T>;
  Acc *acc = kIsHalfStorage<T> ? scratch.take<Acc>(Mg * K) : nullptr;
  GemmFor<T> gemm(scratch, Mg, K, P);
  const T *px = x.as<const T>(), *pdy = dy.as<const T>();
  T *pdw = dw.as<T>();
  if (N == 0) {
    std::fill(pdw, pdw + dw.numel(), T{});
    return;
  }
  for (int64_t g = 0; g < group; ++g) {
    T *dwg = pdw + g * Mg * K;
    Acc *sum;
    if constexpr (kIsHalfStorage<T>)
      sum = acc;
    else
      sum = dwg;
    for (int64_t n = 0; n < N; ++n) {
      const T *xg = px + (n * C + g * Cg) * I;
      if (!pointwise)
        im2col(xg, Cg, w, col);
      // dW_g [Mg, K] (+)= dy_g [Mg, P] * col^T [P, K]
      gemm(false, true, Mg, K, P, pdy + (n * M + g * Mg) * P,
           pointwise ? xg : col, sum, n > 0);
    }
    if constexpr (kIsHalfStorage<T>)
      for (int64_t i = 0; i < Mg * K; ++i)
        dwg[i] = fromCompute<T>(acc[i]);
  }
}

} // namespace

void convBackwardData(const TensorView &dy, const TensorView &w,
                      const TensorView &dx, const WindowParams &params,
                      int64_t group) {
  const char *kernel = "convBackwardData";
  const Window3 win = checkConvGrad(kernel, dx, w, dy, params, group);
  Scratch scratch(kernel,
                  convBackwardDataScratchBytes(dy, w, dx, params, group));
  dispatchFloatStorage(dx.dtype, kernel, [&](auto tag) {
    convBackwardDataImpl<typename decltype(tag)::type>(dy, w, dx, win, group,
                                                       scratch);
  });
}

void convBackwardFilter(const TensorView &x, const TensorView &dy,
                        const TensorView &dw, const WindowParams &params,
                        int64_t group) {
  const char *kernel = "convBackwardFilter";
  const Window3 win = checkConvGrad(kernel, x, dw, dy, params, group);
  Scratch scratch(kernel,
                  convBackwardFilterScratchBytes(x, dy, dw, params, group));
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    convBackwardFilterImpl<typename decltype(tag)::type>(x, dy, dw, win,
                                                         group, scratch);
  });
}

void maxPoolBackward(const TensorView &dy, const TensorView &indices,
                     const TensorView &dx, const WindowParams &params) {
  const char *kernel = "maxPoolBackward";
  // A serial scatter in output order is already deterministic; the window
  // checks that each index is in its output's window, as the CUDA kernel,
  // which gathers, needs.
  const Window3 w = checkMaxPoolBackward(kernel, dy, indices, dx, params);
  const int64_t inPlane = w.inSize(), outPlane = w.outSize();
  const int64_t size = dx.numel();
  const int64_t *pi = indices.as<const int64_t>();
  Scratch scratch(kernel, poolBackwardScratchBytes(dx));
  dispatchFloatStorage(dy.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *pdy = dy.as<const T>();
    accumulateInDouble(dx.as<T>(), size, scratch, [&](double *acc) {
      for (int64_t i = 0, n = dy.numel(); i < n; ++i) {
        const int64_t target = pi[i];
        if (target < 0) // a window entirely in padding: no input position
          continue;
        if (target >= size || target / inPlane != i / outPlane ||
            !w.windowHolds(i % outPlane, target % inPlane))
          fail(kernel, "index " + std::to_string(target) + " of output " +
                           std::to_string(i) +
                           " is not in that output's window (" +
                           std::to_string(size) + " input elements)");
        acc[target] += toCompute(pdy[i]);
      }
    });
  });
}

void averagePoolBackward(const TensorView &dy, const TensorView &dx,
                         const WindowParams &params, bool countIncludePad) {
  const char *kernel = "averagePoolBackward";
  checkPoolGrad(kernel, dy, dx);
  const Window3 w = makeWindow(kernel, dx, dy, params, params.kernel);
  const int64_t planes = dx.shape[0] * dx.shape[1];
  Scratch scratch(kernel, poolBackwardScratchBytes(dx));
  dispatchFloatStorage(dy.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *pdy = dy.as<const T>();
    accumulateInDouble(dx.as<T>(), dx.numel(), scratch, [&](double *acc) {
      for (int64_t p = 0; p < planes; ++p) {
        double *plane = acc + p * w.inSize();
        for (int64_t od = 0; od < w.out[0]; ++od)
          for (int64_t oh = 0; oh < w.out[1]; ++oh)
            for (int64_t ow = 0; ow < w.out[2]; ++ow) {
              const double share =
                  static_cast<double>(toCompute(*pdy++)) /
                  static_cast<double>(
                      w.averagePoolCount(od, oh, ow, countIncludePad));
              forEachTap(plane, w, od, oh, ow,
                         [share](int64_t, double &a) { a += share; });
            }
      }
    });
  });
}

} // namespace remat::rt
