//===- ActivationGrad.cpp - Activation, softmax and log-softmax backward --===//
//
// GELU's per-element derivatives are evaluated in double; the softmax row
// sums accumulate in double like the forward's. activationBackward computes
// in the compute precision (FloatStorage.h), as the forward unary ops do.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"
#include "common/AxisExtents.h"
#include "common/NormalizationChecks.h"

#include <cmath>

namespace remat::rt {
using namespace cpu;

namespace {

/// d/dx of x * 0.5 * (1 + erf(x / sqrt(2))) = Phi(x) + x * phi(x).
double geluErfDerivative(double x) {
  const double cdf = 0.5 * (1.0 + std::erf(x * 0.7071067811865476));
  const double pdf = 0.3989422804014327 * std::exp(-0.5 * x * x); // 1/sqrt(2pi)
  return cdf + x * pdf;
}

/// d/dx of x * 0.5 * (1 + tanh(u)), u = sqrt(2/pi) * (x + 0.044715 x^3).
double geluTanhDerivative(double x) {
  const double k = 0.7978845608028654, c = 0.044715;
  const double t = std::tanh(k * (x + c * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * c * x * x);
}

/// dx[i] = derivativeTimesDy(x[i], dy[i]) on T's compute type.
template <typename T, typename F>
void backwardLoop(const TensorView &x, const TensorView &dy,
                  const TensorView &dx, F derivativeTimesDy) {
  const T *px = x.as<const T>(), *pdy = dy.as<const T>();
  T *pdx = dx.as<T>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i)
    pdx[i] = fromCompute<T>(
        derivativeTimesDy(toCompute(px[i]), toCompute(pdy[i])));
}

/// dx = dy * op'(x) in T's compute type (see KernelApi.inc for the side
/// each kink takes).
template <typename T>
void activationBackwardFloat(UnaryOp op, const TensorView &x,
                             const TensorView &dy, const TensorView &dx,
                             const UnaryParams &params) {
  using C = ComputeType<T>;
  const C alpha = static_cast<C>(params.alpha);
  const C beta = static_cast<C>(params.beta);
  const C gamma = static_cast<C>(params.gamma);
  const C lower = static_cast<C>(params.lower);
  const C upper = static_cast<C>(params.upper);
  switch (op) {
  case UnaryOp::Relu:
    return backwardLoop<T>(x, dy, dx, [](C v, C g) { return v > 0 ? g : C(0); });
  case UnaryOp::LeakyRelu:
    return backwardLoop<T>(x, dy, dx,
                           [=](C v, C g) { return v > 0 ? g : g * alpha; });
  case UnaryOp::Elu:
    return backwardLoop<T>(x, dy, dx, [=](C v, C g) {
      return v > 0 ? g : g * (alpha * std::exp(v));
    });
  case UnaryOp::Selu:
    return backwardLoop<T>(x, dy, dx, [=](C v, C g) {
      return v > 0 ? g * gamma : g * (gamma * alpha * std::exp(v));
    });
  case UnaryOp::Softplus:
    // sigmoid(x), split by sign so exp never overflows.
    return backwardLoop<T>(x, dy, dx, [](C v, C g) {
      if (v >= 0)
        return g / (C(1) + std::exp(-v));
      const C e = std::exp(v);
      return g * (e / (C(1) + e));
    });
  case UnaryOp::Softsign:
    return backwardLoop<T>(x, dy, dx, [](C v, C g) {
      const C s = C(1) + std::abs(v);
      return g / (s * s);
    });
  case UnaryOp::HardSigmoid:
    return backwardLoop<T>(x, dy, dx, [=](C v, C g) {
      const C u = alpha * v + beta;
      return u > 0 && u < 1 ? g * alpha : C(0);
    });
  case UnaryOp::Clip:
    return backwardLoop<T>(x, dy, dx, [=](C v, C g) {
      return v >= lower && v <= upper ? g : C(0);
    });
  case UnaryOp::Sin:
    return backwardLoop<T>(x, dy, dx, [](C v, C g) { return g * std::cos(v); });
  case UnaryOp::Cos:
    return backwardLoop<T>(x, dy, dx, [](C v, C g) { return -g * std::sin(v); });
  default: fail("activationBackward", "op has no activation backward");
  }
}

/// Runs row(y, dy, dx, n, stride) over every row along `axis`.
template <typename T, typename Row>
void forEachRow(const TensorView &y, const TensorView &dy,
                const TensorView &dx, int64_t axis, Row &&row) {
  const AxisExtents s = axisExtents(y.shape, axis);
  const T *py = y.as<const T>(), *pdy = dy.as<const T>();
  T *pdx = dx.as<T>();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t j = 0; j < s.inner; ++j) {
      const int64_t base = o * s.size * s.inner + j;
      row(py + base, pdy + base, pdx + base, s.size, s.inner);
    }
}

} // namespace

void geluBackward(const TensorView &x, const TensorView &dy,
                  const TensorView &dx, bool tanhApproximation) {
  const char *kernel = "geluBackward";
  checkGeluBackward(kernel, x, dy, dx);
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *px = x.as<const T>(), *pdy = dy.as<const T>();
    T *pdx = dx.as<T>();
    const int64_t n = x.numel();
    if (tanhApproximation)
      for (int64_t i = 0; i < n; ++i)
        pdx[i] = fromDouble<T>(toCompute(pdy[i]) *
                               geluTanhDerivative(toCompute(px[i])));
    else
      for (int64_t i = 0; i < n; ++i)
        pdx[i] = fromDouble<T>(toCompute(pdy[i]) *
                               geluErfDerivative(toCompute(px[i])));
  });
}

void activationBackward(UnaryOp op, const TensorView &x, const TensorView &dy,
                        const TensorView &dx, const UnaryParams &params) {
  const char *kernel = "activationBackward";
  checkSameAsX(kernel, x, dy, "dy");
  checkSameAsX(kernel, x, dx, "dx");
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    activationBackwardFloat<T>(op, x, dy, dx, params);
  });
}

void softmaxBackward(const TensorView &y, const TensorView &dy,
                     const TensorView &dx, int64_t axis) {
  const char *kernel = "softmaxBackward";
  checkSoftmaxBackward(kernel, y, dy, dx, axis);
  dispatchFloatStorage(y.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    forEachRow<T>(y, dy, dx, axis,
                  [](const T *yr, const T *dyr, T *dxr, int64_t n,
                     int64_t stride) {
                    double dot = 0;
                    for (int64_t i = 0; i < n; ++i)
                      dot += static_cast<double>(toCompute(dyr[i * stride])) *
                             toCompute(yr[i * stride]);
                    for (int64_t i = 0; i < n; ++i) {
                      const double yi = toCompute(yr[i * stride]);
                      dxr[i * stride] = fromDouble<T>(
                          yi * (toCompute(dyr[i * stride]) - dot));
                    }
                  });
  });
}

void logSoftmaxBackward(const TensorView &y, const TensorView &dy,
                        const TensorView &dx, int64_t axis) {
  const char *kernel = "logSoftmaxBackward";
  checkSoftmaxBackward(kernel, y, dy, dx, axis);
  dispatchFloatStorage(y.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    forEachRow<T>(y, dy, dx, axis,
                  [](const T *yr, const T *dyr, T *dxr, int64_t n,
                     int64_t stride) {
                    double sum = 0;
                    for (int64_t i = 0; i < n; ++i)
                      sum += toCompute(dyr[i * stride]);
                    for (int64_t i = 0; i < n; ++i) {
                      const double p = std::exp(
                          static_cast<double>(toCompute(yr[i * stride])));
                      dxr[i * stride] =
                          fromDouble<T>(toCompute(dyr[i * stride]) - p * sum);
                    }
                  });
  });
}

} // namespace remat::rt
