//===- AttentionOps.cpp - remat.attention and its backward ----------------===//
//
// Shape rules of the fused attention op and its backward. Both take the same
// query/key/value/mask operands, so one function checks them; the backward
// additionally checks that output, logsumexp and output_grad are what the
// forward would have produced.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematOps.h"

#include "mlir/IR/Diagnostics.h"

#include <cmath>

using namespace mlir;
using namespace remat;

static RankedTensorType rankedType(Value value) {
  return llvm::cast<RankedTensorType>(value.getType());
}

namespace {
/// The dimensions of one attention call: [B, Hq, Sq, D] queries against
/// [B, Hkv, Sk, D] keys and [B, Hkv, Sk, Dv] values.
struct AttentionShape {
  int64_t batch, queryHeads, keyValueHeads, querySeq, keySeq, headDim,
      valueDim;
  SmallVector<int64_t> output() const {
    return {batch, queryHeads, querySeq, valueDim};
  }
  SmallVector<int64_t> logsumexp() const { return {batch, queryHeads, querySeq}; }
  SmallVector<int64_t> scores() const {
    return {batch, queryHeads, querySeq, keySeq};
  }
};
} // namespace

static FailureOr<AttentionShape>
checkAttentionOperands(std::optional<Location> loc, Value query, Value key,
                       Value value, Value mask) {
  auto q = rankedType(query), k = rankedType(key), v = rankedType(value);
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4)
    return emitOptionalError(
        loc, "attention query, key and value must be [batch, heads, seq, dim]"
             " (rank 4), got ranks ",
        q.getRank(), ", ", k.getRank(), ", ", v.getRank());
  if (q.getElementType() != k.getElementType() ||
      q.getElementType() != v.getElementType())
    return emitOptionalError(loc, "attention query, key and value must have "
                                  "one element type");
  AttentionShape s{q.getDimSize(0), q.getDimSize(1), k.getDimSize(1),
                   q.getDimSize(2), k.getDimSize(2), q.getDimSize(3),
                   v.getDimSize(3)};
  if (k.getDimSize(0) != s.batch || v.getDimSize(0) != s.batch)
    return emitOptionalError(loc, "attention batch sizes differ: query ",
                             shapeString(q.getShape()), ", key ",
                             shapeString(k.getShape()), ", value ",
                             shapeString(v.getShape()));
  if (v.getDimSize(1) != s.keyValueHeads || v.getDimSize(2) != s.keySeq)
    return emitOptionalError(loc, "attention key ", shapeString(k.getShape()),
                             " and value ", shapeString(v.getShape()),
                             " differ in heads or sequence length");
  if (k.getDimSize(3) != s.headDim)
    return emitOptionalError(loc, "attention query head size ", s.headDim,
                             " differs from the key's ", k.getDimSize(3));
  if (s.keyValueHeads <= 0 || s.queryHeads % s.keyValueHeads != 0)
    return emitOptionalError(loc, "attention query heads (", s.queryHeads,
                             ") must be a multiple of key/value heads (",
                             s.keyValueHeads, ")");
  if (mask) {
    auto m = rankedType(mask);
    if (m.getElementType() != q.getElementType())
      return emitOptionalError(loc, "attention mask must have the query's "
                                    "element type");
    if (!isBroadcastableTo(m.getShape(), s.scores()))
      return emitOptionalError(loc, "attention mask ",
                               shapeString(m.getShape()),
                               " does not broadcast to the scores ",
                               shapeString(s.scores()));
  }
  return s;
}

static LogicalResult checkAttentionAttributes(Operation *op, double scale,
                                              double ratio) {
  if (!std::isfinite(scale) || scale == 0.0)
    return op->emitOpError("scale must be finite and non-zero, got ") << scale;
  if (!(ratio >= 0.0 && ratio < 1.0))
    return op->emitOpError("dropout_ratio must be in [0, 1), got ") << ratio;
  return success();
}

/// The softmax statistics are kept in at least fp32.
static Type statisticsElement(Type element) {
  if (element.getIntOrFloatBitWidth() < 32)
    return Float32Type::get(element.getContext());
  return element;
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto shape = checkAttentionOperands(loc, adaptor.getQuery(), adaptor.getKey(),
                                      adaptor.getValue(), adaptor.getMask());
  if (failed(shape))
    return failure();
  Type element = rankedType(adaptor.getQuery()).getElementType();
  types.push_back(RankedTensorType::get(shape->output(), element));
  types.push_back(
      RankedTensorType::get(shape->logsumexp(), statisticsElement(element)));
  return success();
}

LogicalResult AttentionOp::verify() {
  return checkAttentionAttributes(*this, getScale().convertToDouble(),
                                  getDropoutRatio().convertToDouble());
}

LogicalResult AttentionBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto shape = checkAttentionOperands(loc, adaptor.getQuery(), adaptor.getKey(),
                                      adaptor.getValue(), adaptor.getMask());
  if (failed(shape))
    return failure();
  auto q = rankedType(adaptor.getQuery());
  auto expectOutput = RankedTensorType::get(shape->output(), q.getElementType());
  auto expectLse = RankedTensorType::get(
      shape->logsumexp(), statisticsElement(q.getElementType()));
  if (adaptor.getOutput().getType() != expectOutput ||
      adaptor.getOutputGrad().getType() != expectOutput)
    return emitOptionalError(loc, "attention_backward output and output_grad "
                                  "must be ",
                             expectOutput);
  if (adaptor.getLogsumexp().getType() != expectLse)
    return emitOptionalError(loc, "attention_backward logsumexp must be ",
                             expectLse);
  types.push_back(q);
  types.push_back(adaptor.getKey().getType());
  types.push_back(adaptor.getValue().getType());
  return success();
}

LogicalResult AttentionBackwardOp::verify() {
  return checkAttentionAttributes(*this, getScale().convertToDouble(),
                                  getDropoutRatio().convertToDouble());
}
