//===- LossChecks.h - Loss operand checks ------------------------*- C++ -*-===//
//
// SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss, forward and
// backward, see their input as [N, C, D] (D = product of the extra dims)
// with labels [N, D]. The operand checks are shared by both backends so that
// they accept the same arguments with the same messages.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_LOSSCHECKS_H
#define REMAT_RUNTIME_COMMON_LOSSCHECKS_H

#include "remat/runtime/Kernels.h"

namespace remat::rt::common {

/// The [N, C, D] view of a loss input (passed to CUDA kernels by value).
struct LossShape {
  int64_t N, C, D;
};

/// Forward: logProb [N, C, d...], target [N, d...], optional weights [C],
/// loss per reduction ([N, d...] for None, else one element).
LossShape checkNll(const char *kernel, const TensorView &logProb,
                   const TensorView &target, const TensorView &weights,
                   const TensorView &loss, LossReduction reduction);

/// Backward: input [N, C, d...] and its gradient alike, labels [N, d...],
/// optional weights [C], dloss per reduction.
LossShape checkLossBackward(const char *kernel, const TensorView &dloss,
                            const TensorView &input, const TensorView &labels,
                            const TensorView &weights,
                            const TensorView &dinput, LossReduction reduction);

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_LOSSCHECKS_H
