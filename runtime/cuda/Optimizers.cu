//===- Optimizers.cu - torch.optim SGD and Adam / AdamW updates -----------===//
//
// The CUDA versions of runtime/cpu/Optimizers.cpp: one fused elementwise
// pass per tensor with the CPU's formulas, in the parameters' own precision
// (F32 or F64; mixed precision keeps master weights and optimizer state in
// fp32): fp32 arithmetic for F32, as torch's CUDA optimizers, and the CPU's
// double arithmetic for F64 (no FMA contraction, see CMakeLists.txt), so
// with a host step number F64 results are bitwise the CPU's. The scalar
// coefficients (1 - beta, Adam's bias corrections for a host step, ...) are
// computed on the host in double and rounded once. Each element is read
// before it is written, so in-place use is safe. The device-step overloads
// read the step when the kernel runs (Adam's bias corrections are then
// computed once per block on the GPU), which keeps a captured CUDA Graph
// valid across steps. With loss scaling the gradient is unscaled in its own
// type and an overflowing step is skipped (GradScaling).
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Common.cuh"

#include <cmath>

namespace remat::rt::cuda {
using namespace detail;

namespace {

/// The step number: from the host, or read on the device.
struct StepSource {
  int64_t value;
  const int64_t *pointer;
  __device__ int64_t get() const { return pointer ? *pointer : value; }
};

/// Loss scaling (KernelApi.inc, "Optimizers"), read on the device so that a
/// captured graph follows the scale and the overflow flag of every step.
struct GradScaling {
  const float *scale = nullptr;      // null: the gradient is not scaled
  const uint8_t *foundInf = nullptr; // null: never skip

  __device__ bool skip() const { return foundInf && *foundInf != 0; }
  /// 1 / scale as GradScaler computes it: in double, rounded to fp32.
  __device__ float inverse() const {
    return scale ? static_cast<float>(1.0 / static_cast<double>(*scale)) : 1.0f;
  }
  /// The gradient element the update uses: g * (1 / scale) in g's own type,
  /// as GradScaler.unscale_ leaves it.
  template <typename T> __device__ T grad(T g, float inverse) const {
    return scale ? g * static_cast<T>(inverse) : g;
  }
};

GradScaling gradScaling(const TensorView &lossScale, const TensorView &foundInf,
                        const char *kernel) {
  GradScaling scaling;
  if (!lossScale.empty()) {
    requireScalar(lossScale, DType::F32, kernel, "lossScale");
    scaling.scale = lossScale.as<const float>();
  }
  if (!foundInf.empty()) {
    requireScalar(foundInf, DType::Bool, kernel, "foundInf");
    scaling.foundInf = foundInf.as<const uint8_t>();
  }
  return scaling;
}

/// A skipped update leaves every output equal to its input.
template <typename T>
__device__ void keep(const T *in, T *out, int64_t i) {
  if (in && out && in != out)
    out[i] = in[i];
}

/// SGD's coefficients in the parameters' type T.
template <typename T> struct SgdArgs {
  T lr, momentum, weightDecay, damp; // damp = 1 - dampening
  bool nesterov, useMomentum;
  StepSource step;
  GradScaling scaling;
  DeviceStatus *status;
};

template <typename T>
__global__ void sgdKernel(const T *p, const T *g, const T *buf, T *pOut,
                          T *bufOut, int64_t n, SgdArgs<T> a) {
  if (a.scaling.skip()) {
    REMAT_GRID_STRIDE_LOOP(i, n) {
      keep(p, pOut, i);
      keep(buf, bufOut, i);
    }
    return;
  }
  const float inverse = a.scaling.inverse();
  const int64_t step = a.step.get();
  if (step < 1) {
    if (blockIdx.x == 0 && threadIdx.x == 0)
      reportError(a.status, kOptimizerStep, step);
    return;
  }
  // On step 1 the buffer is initialised from the gradient.
  const bool readBuf = a.useMomentum && step > 1;
  REMAT_GRID_STRIDE_LOOP(i, n) {
    const T pi = p[i];
    T gi = a.scaling.grad(g[i], inverse);
    if (a.weightDecay != T(0))
      gi += a.weightDecay * pi;
    if (a.useMomentum) {
      // The step uses the buffer as stored, as torch does.
      const T b = readBuf ? a.momentum * buf[i] + a.damp * gi : gi;
      bufOut[i] = b;
      gi = a.nesterov ? gi + a.momentum * b : b;
    }
    pOut[i] = pi - a.lr * gi;
  }
}

/// Adam's coefficients in the parameters' type T.
template <typename T> struct AdamArgs {
  T lr, beta1, beta2, oneMinusBeta1, oneMinusBeta2, eps, weightDecay;
  T decay; // 1 - lr * weightDecay (AdamW)
  bool decoupled;
  // lr / (1 - beta1^t) and sqrt(1 - beta2^t); computed on the device when
  // the step comes from there.
  T stepSize, biasCorrection2Sqrt;
  StepSource step;
  GradScaling scaling;
  DeviceStatus *status;
};

/// 1 - beta^t from 1 - beta: as expm1(t log1p(-(1 - beta))) in fp32, where
/// 1 - pow(beta, t) would cancel (1 - 0.999f loses 4 digits); double keeps
/// the CPU's pow formula.
template <typename T>
__device__ T oneMinusPower(T beta, T oneMinusBeta, T t) {
  if constexpr (std::is_same_v<T, double>)
    return 1.0 - pow(beta, t);
  else
    return -expm1f(t * log1pf(-oneMinusBeta));
}

template <typename T>
__global__ void adamKernel(const T *p, const T *g, const T *m, const T *v,
                           T *pOut, T *mOut, T *vOut, int64_t n, AdamArgs<T> a) {
  if (a.scaling.skip()) {
    REMAT_GRID_STRIDE_LOOP(i, n) {
      keep(p, pOut, i);
      keep(m, mOut, i);
      keep(v, vOut, i);
    }
    return;
  }
  const float inverse = a.scaling.inverse();
  __shared__ T corrections[2];
  __shared__ bool valid;
  if (threadIdx.x == 0) {
    T stepSize = a.stepSize, bc2 = a.biasCorrection2Sqrt;
    const int64_t step = a.step.get();
    valid = step >= 1;
    if (!valid) {
      if (blockIdx.x == 0)
        reportError(a.status, kOptimizerStep, step);
    } else if (a.step.pointer) {
      const T t = static_cast<T>(step);
      stepSize = a.lr / oneMinusPower(a.beta1, a.oneMinusBeta1, t);
      bc2 = dSqrt(oneMinusPower(a.beta2, a.oneMinusBeta2, t));
    }
    corrections[0] = stepSize;
    corrections[1] = bc2;
  }
  __syncthreads();
  if (!valid)
    return;
  const T stepSize = corrections[0], bc2 = corrections[1];
  REMAT_GRID_STRIDE_LOOP(i, n) {
    T pi = p[i], gi = a.scaling.grad(g[i], inverse);
    if (a.weightDecay != T(0)) {
      if (a.decoupled)
        pi *= a.decay;
      else
        gi += a.weightDecay * pi;
    }
    // The step uses the moments as stored, as torch does.
    const T mi = a.beta1 * m[i] + a.oneMinusBeta1 * gi;
    const T vi = a.beta2 * v[i] + a.oneMinusBeta2 * gi * gi;
    mOut[i] = mi;
    vOut[i] = vi;
    const T denom = dSqrt(vi) / bc2 + a.eps;
    pOut[i] = pi - stepSize * mi / denom;
  }
}

/// `readBuf` says whether momentumBuf is read (known on the host only for a
/// host step; a device step requires it whenever momentum is used).
void sgdCommon(const TensorView &param, const TensorView &grad,
               const TensorView &momentumBuf, const TensorView &newParam,
               const TensorView &newMomentumBuf, StepSource step, bool readBuf,
               const SgdOptions &options, GradScaling scaling) {
  const char *kernel = "sgdUpdate";
  requireLike(kernel, param, grad, "grad");
  requireLike(kernel, param, newParam, "newParam");
  const bool useMomentum = options.momentum != 0.0;
  if (useMomentum)
    requireLike(kernel, param, newMomentumBuf, "newMomentumBuf");
  if (readBuf)
    requireLike(kernel, param, momentumBuf, "momentumBuf");
  Context &ctx = context(kernel);
  dispatchFloat(param.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const SgdArgs<T> args{static_cast<T>(options.lr),
                          static_cast<T>(options.momentum),
                          static_cast<T>(options.weightDecay),
                          static_cast<T>(1.0 - options.dampening),
                          options.nesterov,
                          useMomentum,
                          step,
                          scaling,
                          ctx.status};
    const int64_t n = param.numel();
    if (n == 0)
      return;
    sgdKernel<T><<<gridFor(n), kThreads, 0, ctx.stream>>>(
        param.as<const T>(), grad.as<const T>(),
        momentumBuf.empty() ? nullptr : momentumBuf.as<const T>(),
        newParam.as<T>(), useMomentum ? newMomentumBuf.as<T>() : nullptr, n,
        args);
    checkLaunch(kernel);
  });
}

void adamCommon(const TensorView &param, const TensorView &grad,
                const TensorView &m, const TensorView &v,
                const TensorView &newParam, const TensorView &newM,
                const TensorView &newV, StepSource step,
                const AdamOptions &options, GradScaling scaling) {
  const char *kernel = "adamUpdate";
  requireLike(kernel, param, grad, "grad");
  requireLike(kernel, param, m, "m");
  requireLike(kernel, param, v, "v");
  requireLike(kernel, param, newParam, "newParam");
  requireLike(kernel, param, newM, "newM");
  requireLike(kernel, param, newV, "newV");
  Context &ctx = context(kernel);
  // The scalar coefficients in double, as the CPU computes them, rounded
  // once to the parameters' type.
  const double lr = options.lr, b1 = options.beta1, b2 = options.beta2;
  double stepSize = 0, biasCorrection2Sqrt = 0;
  if (!step.pointer) {
    const double t = static_cast<double>(step.value);
    stepSize = lr / (1.0 - std::pow(b1, t));
    biasCorrection2Sqrt = std::sqrt(1.0 - std::pow(b2, t));
  }
  dispatchFloat(param.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    AdamArgs<T> args;
    args.lr = static_cast<T>(lr);
    args.beta1 = static_cast<T>(b1);
    args.beta2 = static_cast<T>(b2);
    args.oneMinusBeta1 = static_cast<T>(1.0 - b1);
    args.oneMinusBeta2 = static_cast<T>(1.0 - b2);
    args.eps = static_cast<T>(options.eps);
    args.weightDecay = static_cast<T>(options.weightDecay);
    args.decay = static_cast<T>(1.0 - lr * options.weightDecay);
    args.decoupled = options.decoupledWeightDecay;
    args.stepSize = static_cast<T>(stepSize);
    args.biasCorrection2Sqrt = static_cast<T>(biasCorrection2Sqrt);
    args.step = step;
    args.scaling = scaling;
    args.status = ctx.status;
    const int64_t n = param.numel();
    if (n == 0)
      return;
    adamKernel<T><<<gridFor(n), kThreads, 0, ctx.stream>>>(
        param.as<const T>(), grad.as<const T>(), m.as<const T>(),
        v.as<const T>(), newParam.as<T>(), newM.as<T>(), newV.as<T>(), n, args);
    checkLaunch(kernel);
  });
}

} // namespace

void sgdUpdate(const TensorView &param, const TensorView &grad,
               const TensorView &momentumBuf, const TensorView &newParam,
               const TensorView &newMomentumBuf, int64_t step,
               const SgdOptions &options, const TensorView &lossScale,
               const TensorView &foundInf) {
  GradScaling scaling = gradScaling(lossScale, foundInf, "sgdUpdate");
  // A step that may be skipped may carry any number; the device checks it.
  if (!scaling.foundInf)
    require(step >= 1, "sgdUpdate", "step must be >= 1");
  sgdCommon(param, grad, momentumBuf, newParam, newMomentumBuf,
            StepSource{step, nullptr}, options.momentum != 0.0 && step > 1,
            options, scaling);
}

void sgdUpdate(const TensorView &param, const TensorView &grad,
               const TensorView &momentumBuf, const TensorView &newParam,
               const TensorView &newMomentumBuf, const int64_t *step,
               const SgdOptions &options, const TensorView &lossScale,
               const TensorView &foundInf) {
  require(step != nullptr, "sgdUpdate", "the step pointer is null");
  sgdCommon(param, grad, momentumBuf, newParam, newMomentumBuf,
            StepSource{0, step}, options.momentum != 0.0, options,
            gradScaling(lossScale, foundInf, "sgdUpdate"));
}

void adamUpdate(const TensorView &param, const TensorView &grad,
                const TensorView &m, const TensorView &v,
                const TensorView &newParam, const TensorView &newM,
                const TensorView &newV, int64_t step,
                const AdamOptions &options, const TensorView &lossScale,
                const TensorView &foundInf) {
  GradScaling scaling = gradScaling(lossScale, foundInf, "adamUpdate");
  if (!scaling.foundInf)
    require(step >= 1, "adamUpdate", "step must be >= 1");
  adamCommon(param, grad, m, v, newParam, newM, newV, StepSource{step, nullptr},
             options, scaling);
}

void adamUpdate(const TensorView &param, const TensorView &grad,
                const TensorView &m, const TensorView &v,
                const TensorView &newParam, const TensorView &newM,
                const TensorView &newV, const int64_t *step,
                const AdamOptions &options, const TensorView &lossScale,
                const TensorView &foundInf) {
  require(step != nullptr, "adamUpdate", "the step pointer is null");
  adamCommon(param, grad, m, v, newParam, newM, newV, StepSource{0, step},
             options, gradScaling(lossScale, foundInf, "adamUpdate"));
}

} // namespace remat::rt::cuda
