//===- Loss.cpp - SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss ---===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"
#include "common/LossChecks.h"

namespace remat::rt {
using namespace cpu;

namespace {

/// NLL over log-probabilities [N, C, D] (D = product of the extra dims) with
/// labels [N, D]. Ignored targets contribute 0 loss and 0 weight; Mean
/// divides by the total weight (ONNX: NaN when every target is ignored).
template <typename T, typename I>
void nllImpl(const char *kernel, const T *logProb, const I *labels,
             const T *weights, int64_t N, int64_t C, int64_t D, T *loss,
             LossReduction reduction, int64_t ignoreIndex,
             bool hasIgnoreIndex) {
  double total = 0, weightSum = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      const int64_t label = static_cast<int64_t>(labels[n * D + d]);
      double l = 0, w = 0;
      if (!(hasIgnoreIndex && label == ignoreIndex)) {
        if (label < 0 || label >= C)
          fail(kernel, "label " + std::to_string(label) +
                           " out of range for " + std::to_string(C) +
                           " classes");
        w = weights ? static_cast<double>(toCompute(weights[label])) : 1.0;
        l = -static_cast<double>(toCompute(logProb[(n * C + label) * D + d])) *
            w;
      }
      if (reduction == LossReduction::None)
        loss[n * D + d] = fromDouble<T>(l);
      total += l;
      weightSum += w;
    }
  if (reduction == LossReduction::Sum)
    loss[0] = fromDouble<T>(total);
  else if (reduction == LossReduction::Mean)
    loss[0] = fromDouble<T>(total / weightSum);
}

/// Checks the operands and runs nllImpl on log-probabilities `logProb`.
void nllCommon(const char *kernel, const TensorView &logProb,
               const TensorView &target, const TensorView &weights,
               const TensorView &loss, LossReduction reduction,
               int64_t ignoreIndex, bool hasIgnoreIndex) {
  const LossShape s =
      checkNll(kernel, logProb, target, weights, loss, reduction);
  const int64_t N = s.N, C = s.C, D = s.D;
  dispatchFloatStorage(logProb.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatchIndex(target.dtype, kernel, [&](auto indexTag) {
      using I = typename decltype(indexTag)::type;
      nllImpl<T, I>(kernel, logProb.as<const T>(), target.as<const I>(),
                    weights.empty() ? nullptr : weights.as<const T>(), N, C,
                    D, loss.as<T>(), reduction, ignoreIndex, hasIgnoreIndex);
    });
  });
}

} // namespace

void softmaxCrossEntropyLoss(const TensorView &scores, const TensorView &labels,
                             const TensorView &weights, const TensorView &loss,
                             const TensorView &logProb, LossReduction reduction,
                             int64_t ignoreIndex, bool hasIgnoreIndex) {
  const char *kernel = "softmaxCrossEntropyLoss";
  require(scores.rank() >= 2, kernel, "scores must be [N, C, d...]");
  // Log-probabilities go to the optional output, or to scratch.
  Tensor scratch;
  TensorView lp = logProb;
  if (lp.empty()) {
    scratch = Tensor(scores.dtype, scores.shape);
    lp = scratch.view();
  }
  logSoftmax(scores, lp, 1);
  nllCommon(kernel, lp, labels, weights, loss, reduction, ignoreIndex,
            hasIgnoreIndex);
}

void nllLoss(const TensorView &input, const TensorView &target,
             const TensorView &weights, const TensorView &loss,
             LossReduction reduction, int64_t ignoreIndex,
             bool hasIgnoreIndex) {
  nllCommon("nllLoss", input, target, weights, loss, reduction, ignoreIndex,
            hasIgnoreIndex);
}

} // namespace remat::rt
