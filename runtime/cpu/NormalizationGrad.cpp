//===- NormalizationGrad.cpp - LayerNorm and BatchNorm backward -----------===//
//
// Both are the same computation over different groupings: with
// xhat = (x - mean) * invStd and g = dy * scale, over the m elements that
// share a mean,
//   dx = invStd * (g - mean(g) - xhat * mean(g * xhat)),
// and dscale / dbias sum dy * xhat / dy over everything else. All sums are in
// double; 16-bit data is widened on load and dx rounded once on store.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"
#include "Scratch.h"
#include "common/NormalizationChecks.h"

#include <cmath>

namespace remat::rt {
using namespace cpu;

namespace {

/// Stores a double vector into an optional F32/F64 parameter gradient.
void storeParamGrad(const TensorView &out, const double *values, int64_t n,
                    const char *kernel, const char *what) {
  if (out.empty())
    return;
  requireNumel(out, n, kernel, what);
  for (int64_t i = 0; i < n; ++i)
    storeFromDouble(out, i, values[i], kernel);
}

template <typename T>
void layerNormBackwardImpl(const TensorView &x, const T *g,
                           const TensorView &mean, const TensorView &invStdDev,
                           const TensorView &dy, const TensorView &dx,
                           double *dscale, double *dbias, int64_t rows,
                           int64_t n) {
  const char *kernel = "layerNormBackward";
  const T *px = x.as<const T>(), *pdy = dy.as<const T>();
  T *pdx = dx.empty() ? nullptr : dx.as<T>();
  const double invN = 1.0 / static_cast<double>(n);
  for (int64_t r = 0; r < rows; ++r) {
    const T *xr = px + r * n, *dyr = pdy + r * n;
    const double mu = loadAsDouble(mean, r, kernel);
    const double inv = loadAsDouble(invStdDev, r, kernel);
    double sumG = 0, sumGX = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double xhat = (toCompute(xr[i]) - mu) * inv, d = toCompute(dyr[i]);
      const double gi = d * toCompute(g[i]);
      sumG += gi;
      sumGX += gi * xhat;
      dscale[i] += d * xhat;
      dbias[i] += d;
    }
    if (!pdx)
      continue;
    const double meanG = sumG * invN, meanGX = sumGX * invN;
    T *dxr = pdx + r * n;
    for (int64_t i = 0; i < n; ++i) {
      const double xhat = (toCompute(xr[i]) - mu) * inv;
      dxr[i] = fromDouble<T>(
          inv * (toCompute(dyr[i]) * static_cast<double>(toCompute(g[i])) -
                 meanG - xhat * meanGX));
    }
  }
}

} // namespace

void layerNormBackward(const TensorView &x, const TensorView &scale,
                       const TensorView &mean, const TensorView &invStdDev,
                       const TensorView &dy, const TensorView &dx,
                       const TensorView &dscale, const TensorView &dbias,
                       int64_t axis) {
  const char *kernel = "layerNormBackward";
  const LayerNormRows r = checkLayerNormBackward(kernel, x, scale, mean,
                                                 invStdDev, dy, dx, axis);
  const Shape &normShape = r.normShape;
  const int64_t n = r.n, rows = r.rows;
  Scratch scratch(kernel, layerNormBackwardScratchBytes(x, scale, axis));
  // A broadcast scale is materialised at the normalised shape by expand
  // (in a buffer of the compute type's size, which holds any float dtype).
  TensorView g = scale;
  if (scale.numel() != n) {
    g = TensorView(x.dtype, normShape,
                   x.dtype == DType::F64
                       ? static_cast<void *>(scratch.take<double>(n))
                       : static_cast<void *>(scratch.take<float>(n)));
    expand(scale, g);
  }
  double *dscaleAcc = scratch.take<double>(n);
  double *dbiasAcc = scratch.take<double>(n);
  std::fill(dscaleAcc, dscaleAcc + n, 0.0);
  std::fill(dbiasAcc, dbiasAcc + n, 0.0);
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    layerNormBackwardImpl<T>(x, g.as<const T>(), mean, invStdDev, dy, dx,
                             dscaleAcc, dbiasAcc, rows, n);
  });
  storeParamGrad(dscale, dscaleAcc, n, kernel, "dscale");
  storeParamGrad(dbias, dbiasAcc, n, kernel, "dbias");
}

void batchNormTrainingBackward(const TensorView &x, const TensorView &scale,
                               const TensorView &savedMean,
                               const TensorView &savedInvStd,
                               const TensorView &dy, const TensorView &dx,
                               const TensorView &dscale,
                               const TensorView &dbias) {
  const char *kernel = "batchNormTrainingBackward";
  const ChannelExtents e = checkBatchNormBackward(kernel, x, scale, savedMean,
                                                  savedInvStd, dy, dx);
  const int64_t N = e.batch, C = e.channels, spatial = e.spatial;
  const double count = static_cast<double>(N * spatial);

  Scratch scratch(kernel, batchNormTrainingBackwardScratchBytes(x));
  double *sumDy = scratch.take<double>(C);
  double *sumDyXhat = scratch.take<double>(C);
  std::fill(sumDy, sumDy + C, 0.0);
  std::fill(sumDyXhat, sumDyXhat + C, 0.0);
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *px = x.as<const T>(), *pdy = dy.as<const T>();
    for (int64_t c = 0; c < C; ++c) {
      const double mu = loadAsDouble(savedMean, c, kernel);
      const double inv = loadAsDouble(savedInvStd, c, kernel);
      double s = 0, sx = 0;
      for (int64_t b = 0; b < N; ++b) {
        const int64_t base = (b * C + c) * spatial;
        for (int64_t i = 0; i < spatial; ++i) {
          const double d = toCompute(pdy[base + i]);
          s += d;
          sx += d * (toCompute(px[base + i]) - mu) * inv;
        }
      }
      sumDy[c] = s;
      sumDyXhat[c] = sx;
    }
    if (dx.empty())
      return;
    T *pdx = dx.as<T>();
    for (int64_t c = 0; c < C; ++c) {
      const double mu = loadAsDouble(savedMean, c, kernel);
      const double inv = loadAsDouble(savedInvStd, c, kernel);
      const double a = loadAsDouble(scale, c, kernel) * inv;
      const double meanDy = sumDy[c] / count, meanDyX = sumDyXhat[c] / count;
      for (int64_t b = 0; b < N; ++b) {
        const int64_t base = (b * C + c) * spatial;
        for (int64_t i = 0; i < spatial; ++i) {
          const double xhat = (toCompute(px[base + i]) - mu) * inv;
          pdx[base + i] = fromDouble<T>(
              a * (toCompute(pdy[base + i]) - meanDy - xhat * meanDyX));
        }
      }
    }
  });
  storeParamGrad(dscale, sumDyXhat, C, kernel, "dscale");
  storeParamGrad(dbias, sumDy, C, kernel, "dbias");
}

} // namespace remat::rt
