//===- Optimizers.cu - torch.optim SGD and Adam / AdamW updates -----------===//
//
// The CUDA versions of runtime/cpu/Optimizers.cpp: one fused elementwise
// pass per tensor with the same double-precision formulas (and no FMA
// contraction, see CMakeLists.txt), so with a host step number the results
// are bitwise the CPU's. Each element is read before it is written, so
// in-place use is safe. The device-step overloads read the step when the
// kernel runs (Adam's bias corrections are then computed once per block on
// the GPU), which keeps a captured CUDA Graph valid across steps.
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
  const float *scale = nullptr;     // null: the gradient is not scaled
  const uint8_t *foundInf = nullptr; // null: never skip

  __device__ bool skip() const { return foundInf && *foundInf != 0; }
  /// 1 / scale as GradScaler computes it (in double, rounded to fp32).
  __device__ double inverse() const {
    return scale ? static_cast<double>(static_cast<float>(
                       1.0 / static_cast<double>(*scale)))
                 : 1.0;
  }
  /// The gradient element the update uses: unscaled in its own dtype.
  template <typename T> __device__ double grad(T g, double inverse) const {
    return scale ? static_cast<double>(
                       static_cast<T>(static_cast<double>(g) * inverse))
                 : static_cast<double>(g);
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

struct SgdArgs {
  double lr, momentum, weightDecay, damp; // damp = 1 - dampening
  bool nesterov, useMomentum;
  StepSource step;
  GradScaling scaling;
  DeviceStatus *status;
};

template <typename T>
__global__ void sgdKernel(const T *p, const T *g, const T *buf, T *pOut,
                          T *bufOut, int64_t n, SgdArgs a) {
  if (a.scaling.skip()) {
    REMAT_GRID_STRIDE_LOOP(i, n) {
      keep(p, pOut, i);
      keep(buf, bufOut, i);
    }
    return;
  }
  const double inverse = a.scaling.inverse();
  const int64_t step = a.step.get();
  if (step < 1) {
    if (blockIdx.x == 0 && threadIdx.x == 0)
      reportError(a.status, kOptimizerStep, step);
    return;
  }
  // On step 1 the buffer is initialised from the gradient.
  const bool readBuf = a.useMomentum && step > 1;
  REMAT_GRID_STRIDE_LOOP(i, n) {
    const double pi = static_cast<double>(p[i]);
    double gi = a.scaling.grad(g[i], inverse);
    if (a.weightDecay != 0.0)
      gi += a.weightDecay * pi;
    if (a.useMomentum) {
      // The step uses the buffer as stored, as torch does.
      const T bufT = static_cast<T>(
          readBuf ? a.momentum * static_cast<double>(buf[i]) + a.damp * gi
                  : gi);
      bufOut[i] = bufT;
      const double b = static_cast<double>(bufT);
      gi = a.nesterov ? gi + a.momentum * b : b;
    }
    pOut[i] = static_cast<T>(pi - a.lr * gi);
  }
}

struct AdamArgs {
  double lr, beta1, beta2, eps, weightDecay;
  bool decoupled;
  // lr / (1 - beta1^t) and sqrt(1 - beta2^t); computed on the device when
  // the step comes from there.
  double stepSize, biasCorrection2Sqrt;
  StepSource step;
  GradScaling scaling;
  DeviceStatus *status;
};

template <typename T>
__global__ void adamKernel(const T *p, const T *g, const T *m, const T *v,
                           T *pOut, T *mOut, T *vOut, int64_t n, AdamArgs a) {
  if (a.scaling.skip()) {
    REMAT_GRID_STRIDE_LOOP(i, n) {
      keep(p, pOut, i);
      keep(m, mOut, i);
      keep(v, vOut, i);
    }
    return;
  }
  const double inverse = a.scaling.inverse();
  __shared__ double corrections[2];
  __shared__ bool valid;
  if (threadIdx.x == 0) {
    double stepSize = a.stepSize, bc2 = a.biasCorrection2Sqrt;
    const int64_t step = a.step.get();
    valid = step >= 1;
    if (!valid) {
      if (blockIdx.x == 0)
        reportError(a.status, kOptimizerStep, step);
    } else if (a.step.pointer) {
      const double t = static_cast<double>(step);
      stepSize = a.lr / (1.0 - ::pow(a.beta1, t));
      bc2 = ::sqrt(1.0 - ::pow(a.beta2, t));
    }
    corrections[0] = stepSize;
    corrections[1] = bc2;
  }
  __syncthreads();
  if (!valid)
    return;
  const double stepSize = corrections[0], bc2 = corrections[1];
  const double b1 = a.beta1, b2 = a.beta2, wd = a.weightDecay;
  REMAT_GRID_STRIDE_LOOP(i, n) {
    double pi = static_cast<double>(p[i]), gi = a.scaling.grad(g[i], inverse);
    if (wd != 0.0) {
      if (a.decoupled)
        pi *= 1.0 - a.lr * wd;
      else
        gi += wd * pi;
    }
    // The step uses the moments as stored, as torch does.
    const T mT =
        static_cast<T>(b1 * static_cast<double>(m[i]) + (1.0 - b1) * gi);
    const T vT =
        static_cast<T>(b2 * static_cast<double>(v[i]) + (1.0 - b2) * gi * gi);
    mOut[i] = mT;
    vOut[i] = vT;
    const double denom = ::sqrt(static_cast<double>(vT)) / bc2 + a.eps;
    pOut[i] = static_cast<T>(pi - stepSize * static_cast<double>(mT) / denom);
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
  SgdArgs args{options.lr,
               options.momentum,
               options.weightDecay,
               1.0 - options.dampening,
               options.nesterov,
               useMomentum,
               step,
               scaling,
               ctx.status};
  dispatchFloat(param.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
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
  AdamArgs args;
  args.lr = options.lr;
  args.beta1 = options.beta1;
  args.beta2 = options.beta2;
  args.eps = options.eps;
  args.weightDecay = options.weightDecay;
  args.decoupled = options.decoupledWeightDecay;
  args.stepSize = 0;
  args.biasCorrection2Sqrt = 0;
  if (!step.pointer) { // as the CPU computes them, on the host
    const double t = static_cast<double>(step.value);
    args.stepSize = options.lr / (1.0 - std::pow(options.beta1, t));
    args.biasCorrection2Sqrt = std::sqrt(1.0 - std::pow(options.beta2, t));
  }
  args.step = step;
  args.scaling = scaling;
  args.status = ctx.status;
  dispatchFloat(param.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
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
