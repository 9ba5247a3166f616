//===- ActivationGrad.cu - Activation, softmax and log-softmax backward ---===//
//
// The CUDA versions of runtime/cpu/ActivationGrad.cpp with the CPU's
// formulas, in the compute type of the storage (fp32 for F32, F16 and BF16;
// double for F64): GELU's per-element derivatives, activationBackward, and
// the softmax backward's row sums (compensated in fp32, Reduction.cuh) over
// groups of lanes as in the forward softmax (Normalization.cu).
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Common.cuh"
#include "Indexing.cuh"
#include "Pack.cuh"
#include "Reduction.cuh"

#include "common/NormalizationChecks.h"

namespace remat::rt::cuda {
using namespace detail;

namespace {

/// d/dx of x * 0.5 * (1 + erf(x / sqrt(2))) = Phi(x) + x * phi(x).
template <typename C> __device__ C geluErfDerivative(C x) {
  const C cdf = C(0.5) * (C(1) + dErf(x * C(0.7071067811865476)));
  const C pdf = C(0.3989422804014327) * dExp(C(-0.5) * x * x); // 1/sqrt(2pi)
  return cdf + x * pdf;
}

/// d/dx of x * 0.5 * (1 + tanh(u)), u = sqrt(2/pi) * (x + 0.044715 x^3).
template <typename C> __device__ C geluTanhDerivative(C x) {
  const C k = C(0.7978845608028654), c = C(0.044715);
  const C t = dTanh(k * (x + c * x * x * x));
  return C(0.5) * (C(1) + t) +
         C(0.5) * x * (C(1) - t * t) * k * (C(1) + C(3) * c * x * x);
}

template <typename T>
__global__ void geluBackwardKernel(const T *x, const T *dy, T *dx, int64_t n,
                                   bool tanhApproximation) {
  using C = ComputeType<T>;
  REMAT_GRID_STRIDE_LOOP(i, n) {
    const C xi = toCompute(x[i]);
    const C d =
        tanhApproximation ? geluTanhDerivative(xi) : geluErfDerivative(xi);
    dx[i] = fromCompute<T>(toCompute(dy[i]) * d);
  }
}

/// geluBackwardKernel over 16-byte packs (x, dy and dx aligned).
template <typename T>
__global__ void geluBackwardPackedKernel(const T *x, const T *dy, T *dx,
                                         int64_t n, bool tanhApproximation) {
  using C = ComputeType<T>;
  mapPacks(x, dy, dx, n, [&](T xv, T dyv) {
    const C xi = toCompute(xv);
    const C d =
        tanhApproximation ? geluTanhDerivative(xi) : geluErfDerivative(xi);
    return fromCompute<T>(toCompute(dyv) * d);
  });
}

/// activationBackward's parameters in the compute type C (converted on the
/// host).
template <typename C> struct ActivationParams {
  C alpha, beta, gamma, lower, upper;
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
                                         ActivationParams<ComputeType<T>> params) {
  REMAT_GRID_STRIDE_LOOP(i, n) {
    dx[i] = fromCompute<T>(
        activationDerivative(op, toCompute(x[i]), toCompute(dy[i]), params));
  }
}

/// activationBackwardKernel over 16-byte packs, ReLU's derivative inlined
/// alone (the common case; the others through the switch).
template <typename T>
__global__ void
activationBackwardPackedKernel(UnaryOp op, const T *x, const T *dy, T *dx,
                               int64_t n,
                               ActivationParams<ComputeType<T>> params) {
  if (op == UnaryOp::Relu)
    mapPacks(x, dy, dx, n, [&](T xv, T dyv) {
      return fromCompute<T>(activationDerivative(UnaryOp::Relu, toCompute(xv),
                                                 toCompute(dyv), params));
    });
  else
    mapPacks(x, dy, dx, n, [&](T xv, T dyv) {
      return fromCompute<T>(
          activationDerivative(op, toCompute(xv), toCompute(dyv), params));
    });
}

/// Softmax backward (dx = y (dy - sum(dy y))) or log-softmax backward
/// (dx = dy - exp(y) sum(dy)) over rows as the forward lays them out.
template <typename T>
__global__ void __launch_bounds__(kThreads, 1)
    softmaxBackwardKernel(const T *y, const T *dy, T *dx, int64_t rows,
                          int64_t size, int64_t inner, int log2G, bool log) {
  using C = ComputeType<T>;
  __shared__ SumOf<C> buf[kThreads];
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
    SumOf<C> partial{};
    if (active)
      for (int64_t i = lane; i < size; i += G)
        partial += log ? toCompute(dyr[i * inner])
                       : toCompute(dyr[i * inner]) * toCompute(yr[i * inner]);
    const C sum = sumValue(groupReduce(partial, buf, lane, G, SumOp{}));
    if (!active)
      continue;
    for (int64_t i = lane; i < size; i += G) {
      const C yi = toCompute(yr[i * inner]);
      const C dyi = toCompute(dyr[i * inner]);
      dxr[i * inner] =
          fromCompute<T>(log ? dyi - dExp(yi) * sum : yi * (dyi - sum));
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
  dispatchFloatStorage(y.dtype, kernel, [&](auto tag) {
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
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = x.numel();
    if (n == 0)
      return;
    if (packAligned({x.data, dy.data, dx.data}))
      geluBackwardPackedKernel<T><<<packedGrid<T>(n), kThreads, 0, stream>>>(
          x.as<const T>(), dy.as<const T>(), dx.as<T>(), n, tanhApproximation);
    else
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
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const int64_t n = x.numel();
    if (n == 0)
      return;
    const ActivationParams<C> p{
        static_cast<C>(params.alpha), static_cast<C>(params.beta),
        static_cast<C>(params.gamma), static_cast<C>(params.lower),
        static_cast<C>(params.upper)};
    if (packAligned({x.data, dy.data, dx.data}))
      activationBackwardPackedKernel<T>
          <<<packedGrid<T>(n), kThreads, 0, stream>>>(
              op, x.as<const T>(), dy.as<const T>(), dx.as<T>(), n, p);
    else
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
