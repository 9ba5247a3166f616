//===- OpCosts.cpp - FLOP counts of ops that are not one per element ------===//
//
// Counts are the usual ones (a multiply-add is two operations); constant
// factors for transcendental-heavy ops are rough, which is all an estimate
// that is max(compute, memory) + launch needs: such ops are memory bound.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematOps.h"

#include <algorithm>

using namespace mlir;
using namespace remat;

static double elements(Value value) {
  return static_cast<double>(
      llvm::cast<RankedTensorType>(value.getType()).getNumElements());
}

static double product(ArrayRef<int64_t> values) {
  double p = 1;
  for (int64_t v : values)
    p *= static_cast<double>(v);
  return p;
}

/// 2 * output elements * (input channels per group) * kernel elements: the
/// same for conv and both of its backward ops.
static double convFlops(Value weight, Value output) {
  auto w = llvm::cast<RankedTensorType>(weight.getType());
  return 2.0 * elements(output) * product(w.getShape().drop_front(1));
}

// Pure data movement and constants: no arithmetic.
double ConstantOp::getFlops() { return 0; }
double ReshapeOp::getFlops() { return 0; }
double TransposeOp::getFlops() { return 0; }
double ConcatOp::getFlops() { return 0; }
double SplitOp::getFlops() { return 0; }
double SliceOp::getFlops() { return 0; }
double GatherOp::getFlops() { return 0; }
double GatherElementsOp::getFlops() { return 0; }
double ExpandOp::getFlops() { return 0; }
double PadOp::getFlops() { return 0; }
double TileOp::getFlops() { return 0; }
double TriluOp::getFlops() { return 0; }

double MatMulOp::getFlops() {
  auto lhs = getLhs().getType();
  int64_t k = getTransposeLhs() ? lhs.getDimSize(lhs.getRank() - 2)
                                : lhs.getDimSize(lhs.getRank() - 1);
  return 2.0 * elements(getOutput()) * static_cast<double>(k);
}

double GeluOp::getFlops() { return 8 * elements(getOutput()); }
double SoftmaxOp::getFlops() { return 4 * elements(getOutput()); }
double LogSoftmaxOp::getFlops() { return 4 * elements(getOutput()); }
double LayerNormOp::getFlops() { return 8 * elements(getOutput()); }
double BatchNormInferenceOp::getFlops() { return 2 * elements(getOutput()); }
double BatchNormTrainingOp::getFlops() { return 6 * elements(getOutput()); }
double ReduceSumOp::getFlops() { return elements(getInput()); }
double ReduceMeanOp::getFlops() { return elements(getInput()); }
double ReduceMaxOp::getFlops() { return elements(getInput()); }

double ConvOp::getFlops() {
  return convFlops(getWeight(), getOutput()) +
         (getBias() ? elements(getOutput()) : 0);
}
double MaxPoolOp::getFlops() {
  return elements(getOutput()) * product(getKernelShape());
}
double AveragePoolOp::getFlops() {
  return elements(getOutput()) * product(getKernelShape());
}
double GlobalAveragePoolOp::getFlops() { return elements(getInput()); }

double SoftmaxCrossEntropyLossOp::getFlops() { return 5 * elements(getScores()); }
double NllLossOp::getFlops() { return elements(getLoss()); }

// Backward ops.
double ReluBackwardOp::getFlops() { return elements(getInputGrad()); }
double GeluBackwardOp::getFlops() { return 12 * elements(getInputGrad()); }
// A compare, an exp or sin/cos, two multiplies (elu, selu, softplus, ...).
double ActivationBackwardOp::getFlops() { return 4 * elements(getInputGrad()); }
double SoftmaxBackwardOp::getFlops() { return 4 * elements(getInputGrad()); }
double LogSoftmaxBackwardOp::getFlops() { return 4 * elements(getInputGrad()); }
double LayerNormBackwardOp::getFlops() { return 12 * elements(getInputGrad()); }
double BatchNormTrainingBackwardOp::getFlops() {
  return 10 * elements(getInputGrad());
}
double ConvBackwardDataOp::getFlops() {
  return convFlops(getWeight(), getOutputGrad());
}
double ConvBackwardFilterOp::getFlops() {
  return convFlops(getWeightGrad(), getOutputGrad());
}
double MaxPoolBackwardOp::getFlops() { return elements(getOutputGrad()); }
double AveragePoolBackwardOp::getFlops() {
  return elements(getOutputGrad()) * product(getKernelShape());
}
double GatherBackwardOp::getFlops() { return elements(getOutputGrad()); }
double GatherElementsBackwardOp::getFlops() {
  return elements(getOutputGrad());
}
double SliceBackwardOp::getFlops() { return 0; }
// One addition per dy element (each is read by exactly one dx element).
double PadBackwardOp::getFlops() { return elements(getOutputGrad()); }
double SoftmaxCrossEntropyLossBackwardOp::getFlops() {
  return 3 * elements(getScoresGrad());
}
double NllLossBackwardOp::getFlops() { return elements(getLossGrad()); }

// Optimizer updates, per parameter element.
double SgdOp::getFlops() { return 3 * elements(getParam()); }
double SgdMomentumOp::getFlops() { return 6 * elements(getParam()); }
double AdamOp::getFlops() { return 14 * elements(getParam()); }
double AnyNonFiniteOp::getFlops() { return elements(getInput()); }
double LossScaleUpdateOp::getFlops() { return 1; }

/// Query-key pairs an attention op scores: B * Hq * Sq * Sk, about half of
/// them when causal (the kernels skip hidden tiles).
static double attentionPairs(Value query, Value key, bool causal) {
  auto q = llvm::cast<RankedTensorType>(query.getType());
  auto k = llvm::cast<RankedTensorType>(key.getType());
  double pairs = product(q.getShape().drop_back()) *
                 static_cast<double>(k.getDimSize(2));
  return causal ? pairs / 2 : pairs;
}

static int64_t lastDim(Value v) {
  return llvm::cast<RankedTensorType>(v.getType()).getShape().back();
}

/// Forward: S = Q.K^T (2 * D per pair) and O = P.V (2 * Dv per pair), i.e.
/// 4 * b * h * s^2 * d when D == Dv.
double AttentionOp::getFlops() {
  return attentionPairs(getQuery(), getKey(), getCausal()) *
         (2.0 * lastDim(getQuery()) + 2.0 * lastDim(getValue()));
}

/// Backward: recomputes S = Q.K^T, then dV = P^T.dO, dP = dO.V^T,
/// dQ = dS.K and dK = dS^T.Q: 2 * (3 * D + 2 * Dv) per pair, 2.5 times the
/// forward (FlashAttention-2's figure).
double AttentionBackwardOp::getFlops() {
  return attentionPairs(getQuery(), getKey(), getCausal()) *
         (6.0 * lastDim(getQuery()) + 4.0 * lastDim(getValue()));
}

// N-dimensional indexing and resampling.
double GatherNDOp::getFlops() { return 0; }
double ScatterNDOp::getFlops() {
  return getReduction() == "none" ? 0 : elements(getUpdates());
}
/// Linear and cubic modes: a multiply-add per tap combination of the
/// interpolated dims (2^m or 4^m for m resized dims); nearest only moves
/// data.
static double resizeFlops(StringRef mode, Value input, Value output) {
  if (mode == "nearest")
    return 0;
  const double taps = mode == "cubic" ? 4 : 2;
  auto in = llvm::cast<RankedTensorType>(input.getType());
  auto out = llvm::cast<RankedTensorType>(output.getType());
  double corners = 1;
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (in.getDimSize(d) != out.getDimSize(d))
      corners *= taps;
  return 2 * corners * elements(output);
}
double ResizeOp::getFlops() {
  return resizeFlops(getMode(), getInput(), getOutput());
}
double GatherNDBackwardOp::getFlops() { return elements(getOutputGrad()); }
double ResizeBackwardOp::getFlops() {
  return std::max(resizeFlops(getMode(), getInputGrad(), getOutputGrad()),
                  elements(getOutputGrad()));
}
