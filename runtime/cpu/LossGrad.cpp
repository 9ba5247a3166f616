//===- LossGrad.cpp - SoftmaxCrossEntropyLoss and NLL backward ------------===//
//
// Both losses are sum_t w[label_t] * (-logProb[t, label_t]) * r_t with r_t the
// reduction's factor (dloss[t] for None, dloss for Sum, dloss / sum(w) for
// Mean). The per-target coefficient dL/d(-logProb[t, label_t]) is computed
// once here; the two kernels differ only in how it reaches their input.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"
#include "Scratch.h"
#include "common/LossChecks.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace remat::rt {
using namespace cpu;

namespace {

/// Per target t = (n, d): its label (-1 when ignored) and its coefficient.
struct LossTargets {
  int64_t N = 0, C = 0, D = 0;
  int64_t *label = nullptr;    // scratch, N * D
  double *coefficient = nullptr; // scratch, N * D
};

template <typename T, typename I>
void computeTargets(const char *kernel, const T *dloss, const I *labels,
                    const T *weights, LossReduction reduction,
                    int64_t ignoreIndex, bool hasIgnoreIndex,
                    LossTargets &t) {
  const int64_t count = t.N * t.D;
  std::fill(t.label, t.label + count, -1);
  std::fill(t.coefficient, t.coefficient + count, 0.0);
  double weightSum = 0;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t label = static_cast<int64_t>(labels[i]);
    if (hasIgnoreIndex && label == ignoreIndex)
      continue;
    if (label < 0 || label >= t.C)
      fail(kernel, "label " + std::to_string(label) + " out of range for " +
                       std::to_string(t.C) + " classes");
    t.label[i] = label;
    t.coefficient[i] =
        weights ? static_cast<double>(toCompute(weights[label])) : 1.0;
    weightSum += t.coefficient[i];
  }
  // Mean divides by the same denominator as the forward (every target
  // ignored: all coefficients stay 0 and the division is never used).
  const double scalar =
      reduction == LossReduction::None ? 0.0
      : reduction == LossReduction::Sum
          ? static_cast<double>(toCompute(dloss[0]))
          : static_cast<double>(toCompute(dloss[0])) / weightSum;
  for (int64_t i = 0; i < count; ++i)
    if (t.label[i] >= 0)
      t.coefficient[i] *= reduction == LossReduction::None
                              ? static_cast<double>(toCompute(dloss[i]))
                              : scalar;
}

/// Checks the operands ([N, C, d...] input and gradient, [N, d...] labels,
/// dloss per reduction) and runs write(T tag, targets) on the coefficients.
template <typename Write>
void lossBackwardCommon(const char *kernel, const TensorView &dloss,
                        const TensorView &input, const TensorView &labels,
                        const TensorView &weights, const TensorView &dinput,
                        LossReduction reduction, int64_t ignoreIndex,
                        bool hasIgnoreIndex, Write &&write) {
  const LossShape s = checkLossBackward(kernel, dloss, input, labels, weights,
                                        dinput, reduction);
  LossTargets t;
  t.N = s.N;
  t.C = s.C;
  t.D = s.D;
  Scratch scratch(kernel, lossBackwardScratchBytes(labels));
  t.label = scratch.take<int64_t>(t.N * t.D);
  t.coefficient = scratch.take<double>(t.N * t.D);
  dispatchFloatStorage(input.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatchIndex(labels.dtype, kernel, [&](auto indexTag) {
      using I = typename decltype(indexTag)::type;
      computeTargets<T, I>(kernel, dloss.as<const T>(), labels.as<const I>(),
                           weights.empty() ? nullptr : weights.as<const T>(),
                           reduction, ignoreIndex, hasIgnoreIndex, t);
    });
    write(tag, t);
  });
}

} // namespace

void softmaxCrossEntropyLossBackward(const TensorView &dloss,
                                     const TensorView &logProb,
                                     const TensorView &labels,
                                     const TensorView &weights,
                                     const TensorView &dscores,
                                     LossReduction reduction,
                                     int64_t ignoreIndex, bool hasIgnoreIndex) {
  lossBackwardCommon(
      "softmaxCrossEntropyLossBackward", dloss, logProb, labels, weights,
      dscores, reduction, ignoreIndex, hasIgnoreIndex,
      [&](auto tag, const LossTargets &t) {
        using T = typename decltype(tag)::type;
        const T *lp = logProb.as<const T>();
        T *ds = dscores.as<T>();
        for (int64_t n = 0; n < t.N; ++n)
          for (int64_t d = 0; d < t.D; ++d) {
            const int64_t i = n * t.D + d, label = t.label[i];
            const double coef = t.coefficient[i];
            for (int64_t c = 0; c < t.C; ++c) {
              const int64_t at = (n * t.C + c) * t.D + d;
              if (label < 0) {
                ds[at] = T{};
                continue;
              }
              const double p =
                  std::exp(static_cast<double>(toCompute(lp[at])));
              ds[at] = fromDouble<T>((p - (c == label ? 1.0 : 0.0)) * coef);
            }
          }
      });
}

void nllLossBackward(const TensorView &dloss, const TensorView &target,
                     const TensorView &weights, const TensorView &dinput,
                     LossReduction reduction, int64_t ignoreIndex,
                     bool hasIgnoreIndex) {
  // The input itself is not needed: dinput has its shape.
  lossBackwardCommon("nllLossBackward", dloss, dinput, target, weights,
                     dinput, reduction, ignoreIndex, hasIgnoreIndex,
                     [&](auto tag, const LossTargets &t) {
                       using T = typename decltype(tag)::type;
                       T *di = dinput.as<T>();
                       std::memset(di, 0, dinput.bytes());
                       for (int64_t n = 0; n < t.N; ++n)
                         for (int64_t d = 0; d < t.D; ++d) {
                           const int64_t i = n * t.D + d;
                           if (t.label[i] >= 0)
                             di[(n * t.C + t.label[i]) * t.D + d] =
                                 fromDouble<T>(-t.coefficient[i]);
                         }
                     });
}

} // namespace remat::rt
