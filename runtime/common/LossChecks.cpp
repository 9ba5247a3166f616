//===- LossChecks.cpp - Loss operand checks -------------------------------===//

#include "common/LossChecks.h"

#include "common/Check.h"

namespace remat::rt::common {

LossShape checkNll(const char *kernel, const TensorView &logProb,
                   const TensorView &target, const TensorView &weights,
                   const TensorView &loss, LossReduction reduction) {
  require(logProb.rank() >= 2, kernel, "input must be [N, C, d...]");
  const int64_t N = logProb.shape[0], C = logProb.shape[1];
  const int64_t D = N * C == 0 ? 0 : logProb.numel() / (N * C);
  require(target.rank() == logProb.rank() - 1, kernel,
          "labels must be [N, d...]");
  requireNumel(target, N * D, kernel, "labels");
  requireDType(loss, logProb.dtype, kernel, "loss");
  requireNumel(loss, reduction == LossReduction::None ? N * D : 1, kernel,
               "loss");
  if (!weights.empty()) {
    requireDType(weights, logProb.dtype, kernel, "weights");
    requireNumel(weights, C, kernel, "weights");
  }
  return {N, C, D};
}

LossShape checkLossBackward(const char *kernel, const TensorView &dloss,
                            const TensorView &input, const TensorView &labels,
                            const TensorView &weights,
                            const TensorView &dinput, LossReduction reduction) {
  require(input.rank() >= 2, kernel, "input must be [N, C, d...]");
  requireDType(dinput, input.dtype, kernel, "input gradient");
  requireShape(dinput, input.shape, kernel, "input gradient");
  LossShape s;
  s.N = input.shape[0];
  s.C = input.shape[1];
  s.D = s.N * s.C == 0 ? 0 : input.numel() / (s.N * s.C);
  require(labels.rank() == input.rank() - 1, kernel,
          "labels must be [N, d...]");
  requireNumel(labels, s.N * s.D, kernel, "labels");
  requireDType(dloss, input.dtype, kernel, "dloss");
  requireNumel(dloss, reduction == LossReduction::None ? s.N * s.D : 1, kernel,
               "dloss");
  if (!weights.empty()) {
    requireDType(weights, input.dtype, kernel, "weights");
    requireNumel(weights, s.C, kernel, "weights");
  }
  return s;
}

} // namespace remat::rt::common
