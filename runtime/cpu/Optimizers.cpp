//===- Optimizers.cpp - torch.optim SGD and Adam / AdamW updates ----------===//
//
// One fused pass per tensor. Each element is read into doubles, updated with
// torch's formulas (single-tensor, non-fused, non-amsgrad path) and written
// back, so in-place use (output view == input view) is safe. The parameter
// step reads the optimizer state as stored (rounded to the tensor's dtype),
// which is what torch's float32 kernels do.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"

#include <cmath>

namespace remat::rt {
using namespace cpu;

namespace {

/// What loss scaling asks of one update (KernelApi.inc, "Optimizers").
struct GradScaling {
  bool skip = false;
  bool scaled = false;
  /// 1 / scale, as GradScaler computes it: in double, rounded to fp32.
  double inverse = 1.0;

  /// The gradient element the update uses: unscaled in its own dtype.
  template <typename T> double grad(T g) const {
    return scaled ? static_cast<double>(
                        static_cast<T>(static_cast<double>(g) * inverse))
                  : static_cast<double>(g);
  }
};

GradScaling readGradScaling(const TensorView &lossScale,
                            const TensorView &foundInf, const char *kernel) {
  GradScaling scaling;
  if (!foundInf.empty()) {
    requireScalar(foundInf, DType::Bool, kernel, "foundInf");
    scaling.skip = foundInf.as<const uint8_t>()[0] != 0;
  }
  if (!lossScale.empty()) {
    requireScalar(lossScale, DType::F32, kernel, "lossScale");
    scaling.scaled = true;
    scaling.inverse = static_cast<float>(
        1.0 / static_cast<double>(lossScale.as<const float>()[0]));
  }
  return scaling;
}

/// A skipped update leaves every output equal to its input.
void keep(const TensorView &input, const TensorView &output) {
  if (!output.empty() && !input.empty() && input.data != output.data)
    copy(input, output);
}

} // namespace

void sgdUpdate(const TensorView &param, const TensorView &grad,
               const TensorView &momentumBuf, const TensorView &newParam,
               const TensorView &newMomentumBuf, int64_t step,
               const SgdOptions &options, const TensorView &lossScale,
               const TensorView &foundInf) {
  const char *kernel = "sgdUpdate";
  const GradScaling scaling = readGradScaling(lossScale, foundInf, kernel);
  if (scaling.skip) {
    keep(param, newParam);
    keep(momentumBuf, newMomentumBuf);
    return;
  }
  require(step >= 1, kernel, "step must be >= 1");
  requireLike(kernel, param, grad, "grad");
  requireLike(kernel, param, newParam, "newParam");
  const bool useMomentum = options.momentum != 0.0;
  // On step 1 the buffer is initialised from the gradient, so the incoming
  // one may be absent.
  const bool readBuf = useMomentum && step > 1;
  if (useMomentum)
    requireLike(kernel, param, newMomentumBuf, "newMomentumBuf");
  if (readBuf)
    requireLike(kernel, param, momentumBuf, "momentumBuf");
  const double lr = options.lr, mu = options.momentum,
               wd = options.weightDecay, damp = 1.0 - options.dampening;
  dispatchFloat(param.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *p = param.as<const T>(), *g = grad.as<const T>();
    const T *b = readBuf ? momentumBuf.as<const T>() : nullptr;
    T *pOut = newParam.as<T>();
    T *bOut = useMomentum ? newMomentumBuf.as<T>() : nullptr;
    for (int64_t i = 0, n = param.numel(); i < n; ++i) {
      const double pi = p[i];
      double gi = scaling.grad(g[i]);
      if (wd != 0.0)
        gi += wd * pi;
      if (useMomentum) {
        // The step uses the buffer as stored, as torch does.
        const T bufT = static_cast<T>(
            readBuf ? mu * static_cast<double>(b[i]) + damp * gi : gi);
        bOut[i] = bufT;
        const double buf = bufT;
        gi = options.nesterov ? gi + mu * buf : buf;
      }
      pOut[i] = static_cast<T>(pi - lr * gi);
    }
  });
}

void adamUpdate(const TensorView &param, const TensorView &grad,
                const TensorView &m, const TensorView &v,
                const TensorView &newParam, const TensorView &newM,
                const TensorView &newV, int64_t step,
                const AdamOptions &options, const TensorView &lossScale,
                const TensorView &foundInf) {
  const char *kernel = "adamUpdate";
  const GradScaling scaling = readGradScaling(lossScale, foundInf, kernel);
  if (scaling.skip) {
    keep(param, newParam);
    keep(m, newM);
    keep(v, newV);
    return;
  }
  require(step >= 1, kernel, "step must be >= 1");
  requireLike(kernel, param, grad, "grad");
  requireLike(kernel, param, m, "m");
  requireLike(kernel, param, v, "v");
  requireLike(kernel, param, newParam, "newParam");
  requireLike(kernel, param, newM, "newM");
  requireLike(kernel, param, newV, "newV");
  const double lr = options.lr, b1 = options.beta1, b2 = options.beta2,
               eps = options.eps, wd = options.weightDecay;
  const double t = static_cast<double>(step);
  const double stepSize = lr / (1.0 - std::pow(b1, t));
  const double biasCorrection2Sqrt = std::sqrt(1.0 - std::pow(b2, t));
  const bool decoupled = options.decoupledWeightDecay;
  dispatchFloat(param.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *p = param.as<const T>(), *g = grad.as<const T>();
    const T *pm = m.as<const T>(), *pv = v.as<const T>();
    T *pOut = newParam.as<T>(), *mOut = newM.as<T>(), *vOut = newV.as<T>();
    for (int64_t i = 0, n = param.numel(); i < n; ++i) {
      double pi = p[i], gi = scaling.grad(g[i]);
      if (wd != 0.0) {
        if (decoupled)
          pi *= 1.0 - lr * wd;
        else
          gi += wd * pi;
      }
      // The step uses the moments as stored, as torch does.
      const T mT = static_cast<T>(b1 * static_cast<double>(pm[i]) +
                                  (1.0 - b1) * gi);
      const T vT = static_cast<T>(b2 * static_cast<double>(pv[i]) +
                                  (1.0 - b2) * gi * gi);
      mOut[i] = mT;
      vOut[i] = vT;
      const double denom =
          std::sqrt(static_cast<double>(vT)) / biasCorrection2Sqrt + eps;
      pOut[i] = static_cast<T>(pi - stepSize * static_cast<double>(mT) / denom);
    }
  });
}

} // namespace remat::rt
