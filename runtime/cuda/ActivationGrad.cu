//===- ActivationGrad.cu - Activation, softmax and log-softmax backward ---===//
//
// The CUDA versions of runtime/cpu/ActivationGrad.cpp: GELU's per-element
// derivatives in double, row sums in double over groups of lanes as in the
// forward softmax (Normalization.cu); activationBackward in the storage
// precision with the CPU's formulas.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Common.cuh"
#include "Indexing.cuh"
#include "Reduction.cuh"

#include "common/NormalizationChecks.h"

namespace remat::rt::cuda {
using namespace detail;

namespace {

/// d/dx of x * 0.5 * (1 + erf(x / sqrt(2))) = Phi(x) + x * phi(x).
__device__ double geluErfDerivative(double x) {
  const double cdf = 0.5 * (1.0 + erf(x * 0.7071067811865476));
  const double pdf = 0.3989422804014327 * exp(-0.5 * x * x); // 1/sqrt(2pi)
  return cdf + x * pdf;
}

/// d/dx of x * 0.5 * (1 + tanh(u)), u = sqrt(2/pi) * (x + 0.044715 x^3).
__device__ double geluTanhDerivative(double x) {
  const double k = 0.7978845608028654, c = 0.044715;
  const double t = tanh(k * (x + c * x * x * x));
  return 0.5 * (1.0 + t) +
         0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * c * x * x);
}

template <typename T>
__global__ void geluBackwardKernel(const T *x, const T *dy, T *dx, int64_t n,
                                   bool tanhApproximation) {
  REMAT_GRID_STRIDE_LOOP(i, n) {
    const double xi = static_cast<double>(x[i]);
    const double d =
        tanhApproximation ? geluTanhDerivative(xi) : geluErfDerivative(xi);
    dx[i] = static_cast<T>(static_cast<double>(dy[i]) * d);
  }
}

/// activationBackward's parameters in T (converted on the host).
template <typename T> struct ActivationParams {
  T alpha, beta, gamma, lower, upper;
};

/// dy * op'(x): the CPU's formulas (see KernelApi.inc for the kinks).
template <typename T>
__device__ T activationDerivative(UnaryOp op, T x, T dy,
                                  const ActivationParams<T> &p) {
  switch (op) {
  case UnaryOp::Relu: return x > 0 ? dy : T(0);
  case UnaryOp::LeakyRelu: return x > 0 ? dy : dy * p.alpha;
  case UnaryOp::Elu: return x > 0 ? dy : dy * (p.alpha * dExp(x));
  case UnaryOp::Selu:
    return x > 0 ? dy * p.gamma : dy * (p.gamma * p.alpha * dExp(x));
  case UnaryOp::Softplus: {
    // sigmoid(x), split by sign so exp never overflows.
    if (x >= 0)
      return dy / (T(1) + dExp(-x));
    const T e = dExp(x);
    return dy * (e / (T(1) + e));
  }
  case UnaryOp::Softsign: {
    const T s = T(1) + dAbs(x);
    return dy / (s * s);
  }
  case UnaryOp::HardSigmoid: {
    const T u = p.alpha * x + p.beta;
    return u > 0 && u < 1 ? dy * p.alpha : T(0);
  }
  case UnaryOp::Clip: return x >= p.lower && x <= p.upper ? dy : T(0);
  case UnaryOp::Sin: return dy * dCos(x);
  default: return -dy * dSin(x); // Cos (the host checked the op)
  }
}

template <typename T>
__global__ void activationBackwardKernel(UnaryOp op, const T *x, const T *dy,
                                         T *dx, int64_t n,
                                         ActivationParams<T> params) {
  REMAT_GRID_STRIDE_LOOP(i, n) {
    dx[i] = activationDerivative(op, x[i], dy[i], params);
  }
}

/// Softmax backward (dx = y (dy - sum(dy y))) or log-softmax backward
/// (dx = dy - exp(y) sum(dy)) over rows as the forward lays them out.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    softmaxBackwardKernel(const T *y, const T *dy, T *dx, int64_t rows,
                          int64_t size, int64_t inner, int log2G, bool log) {
  __shared__ double buf[kThreads];
  const int G = 1 << log2G;
  const int lane = threadIdx.x & (G - 1);
  const int groupsPerBlock = kThreads >> log2G;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * groupsPerBlock;
       first < rows;
       first += static_cast<int64_t>(gridDim.x) * groupsPerBlock) {
    const int64_t r = first + (threadIdx.x >> log2G);
    const bool active = r < rows;
    const int64_t base = active ? (r / inner) * size * inner + r % inner : 0;
    const T *yr = y + base, *dyr = dy + base;
    T *dxr = dx + base;
    double sum = 0;
    if (active)
      for (int64_t i = lane; i < size; i += G)
        sum += log ? static_cast<double>(dyr[i * inner])
                   : static_cast<double>(dyr[i * inner]) *
                         static_cast<double>(yr[i * inner]);
    sum = groupReduce(sum, buf, lane, G, SumOp{});
    if (!active)
      continue;
    for (int64_t i = lane; i < size; i += G) {
      const double yi = static_cast<double>(yr[i * inner]);
      const double dyi = static_cast<double>(dyr[i * inner]);
      dxr[i * inner] =
          static_cast<T>(log ? dyi - ::exp(yi) * sum : yi * (dyi - sum));
    }
  }
}

void softmaxBackwardCommon(const char *kernel, const TensorView &y,
                           const TensorView &dy, const TensorView &dx,
                           int64_t axis, bool log) {
  checkSoftmaxBackward(kernel, y, dy, dx, axis);
  const AxisExtents s = axisExtents(y.shape, axis);
  const int64_t rows = s.outer * s.inner;
  cudaStream_t stream = context(kernel).stream;
  dispatchFloat(y.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (rows == 0 || s.size == 0)
      return;
    const int log2G = s.inner == 1 ? log2Lanes(s.size, kThreads) : 0;
    softmaxBackwardKernel<T>
        <<<gridFor(rows, kThreads >> log2G), kThreads, 0, stream>>>(
            y.as<const T>(), dy.as<const T>(), dx.as<T>(), rows, s.size,
            s.inner, log2G, log);
    checkLaunch(kernel);
  });
}

} // namespace

void geluBackward(const TensorView &x, const TensorView &dy,
                  const TensorView &dx, bool tanhApproximation) {
  const char *kernel = "geluBackward";
  checkGeluBackward(kernel, x, dy, dx);
  cudaStream_t stream = context(kernel).stream;
  dispatchFloat(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = x.numel();
    if (n == 0)
      return;
    geluBackwardKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
        x.as<const T>(), dy.as<const T>(), dx.as<T>(), n, tanhApproximation);
    checkLaunch(kernel);
  });
}

void activationBackward(UnaryOp op, const TensorView &x, const TensorView &dy,
                        const TensorView &dx, const UnaryParams &params) {
  const char *kernel = "activationBackward";
  checkSameAsX(kernel, x, dy, "dy");
  checkSameAsX(kernel, x, dx, "dx");
  switch (op) {
  case UnaryOp::Relu:
  case UnaryOp::LeakyRelu:
  case UnaryOp::Elu:
  case UnaryOp::Selu:
  case UnaryOp::Softplus:
  case UnaryOp::Softsign:
  case UnaryOp::HardSigmoid:
  case UnaryOp::Clip:
  case UnaryOp::Sin:
  case UnaryOp::Cos: break;
  default: fail(kernel, "op has no activation backward");
  }
  cudaStream_t stream = context(kernel).stream;
  dispatchFloat(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = x.numel();
    if (n == 0)
      return;
    const ActivationParams<T> p{
        static_cast<T>(params.alpha), static_cast<T>(params.beta),
        static_cast<T>(params.gamma), static_cast<T>(params.lower),
        static_cast<T>(params.upper)};
    activationBackwardKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
        op, x.as<const T>(), dy.as<const T>(), dx.as<T>(), n, p);
    checkLaunch(kernel);
  });
}

void softmaxBackward(const TensorView &y, const TensorView &dy,
                     const TensorView &dx, int64_t axis) {
  softmaxBackwardCommon("softmaxBackward", y, dy, dx, axis, false);
}

void logSoftmaxBackward(const TensorView &y, const TensorView &dy,
                        const TensorView &dx, int64_t axis) {
  softmaxBackwardCommon("logSoftmaxBackward", y, dy, dx, axis, true);
}

} // namespace remat::rt::cuda
