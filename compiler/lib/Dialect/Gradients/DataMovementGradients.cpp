//===- DataMovementGradients.cpp - Gradients of shape and indexing ops ----===//

#include "GradientUtils.h"

using namespace mlir;
using namespace remat;

LogicalResult ReshapeOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                       ArrayRef<bool> needs,
                                       SmallVectorImpl<Value> &grads) {
  grads.push_back(needs[0] ? reshapeTo(b, getLoc(), dys[0],
                                       getInput().getType().getShape())
                           : Value());
  return success();
}

LogicalResult TransposeOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                         ArrayRef<bool> needs,
                                         SmallVectorImpl<Value> &grads) {
  if (!needs[0]) {
    grads.push_back(Value());
    return success();
  }
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[perm[i]] = i;
  grads.push_back(b.create<TransposeOp>(getLoc(), dys[0],
                                        b.getDenseI64ArrayAttr(inverse)));
  return success();
}

LogicalResult ConcatOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                      ArrayRef<bool> needs,
                                      SmallVectorImpl<Value> &grads) {
  // Each input receives its slab of dy along the axis.
  Location loc = getLoc();
  auto outType = tensorTypeOf(getResult());
  int64_t axis = getAxis(), offset = 0;
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    auto inType = tensorTypeOf(input);
    int64_t size = inType.getDimSize(axis);
    if (needs[index]) {
      SmallVector<int64_t> starts(outType.getRank(), 0);
      SmallVector<int64_t> limits(outType.getShape());
      SmallVector<int64_t> steps(outType.getRank(), 1);
      starts[axis] = offset;
      limits[axis] = offset + size;
      grads.push_back(b.create<SliceOp>(loc, dys[0], b.getDenseI64ArrayAttr(starts),
                                        b.getDenseI64ArrayAttr(limits),
                                        b.getDenseI64ArrayAttr(steps)));
    } else {
      grads.push_back(Value());
    }
    offset += size;
  }
  return success();
}

LogicalResult SplitOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                     ArrayRef<bool> needs,
                                     SmallVectorImpl<Value> &grads) {
  // Outputs that do not reach the loss contribute zeros.
  if (!needs[0]) {
    grads.push_back(Value());
    return success();
  }
  Location loc = getLoc();
  SmallVector<Value> parts;
  for (auto [index, result] : llvm::enumerate(getResults()))
    parts.push_back(dys[index] ? dys[index]
                               : zeros(b, loc, tensorTypeOf(result)));
  grads.push_back(b.create<ConcatOp>(loc, parts, getAxisAttr()));
  return success();
}

LogicalResult SliceOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                     ArrayRef<bool> needs,
                                     SmallVectorImpl<Value> &grads) {
  grads.push_back(needs[0] ? b.create<SliceBackwardOp>(
                                 getLoc(), getInput().getType(), dys[0],
                                 getStartsAttr(), getStepsAttr())
                           : Value());
  return success();
}

/// dy with the positions that read row `padding` (index p, or its negative
/// alias p - rows) zeroed: torch.nn.Embedding's padding_idx.
static Value maskPaddingRow(OpBuilder &b, Location loc, Value dy,
                            Value indices, int64_t padding, int64_t rows) {
  Type indexType = elementTypeOf(indices);
  Value isPad = b.create<EqualOp>(loc, indices,
                                  scalarConstant(b, loc, indexType, padding));
  Value isAlias = b.create<EqualOp>(
      loc, indices, scalarConstant(b, loc, indexType, padding - rows));
  Value either = b.create<OrOp>(loc, isPad, isAlias);
  // indices [q...] against dy [q..., row dims...]: trailing unit dims.
  SmallVector<int64_t> shape(tensorTypeOf(indices).getShape());
  shape.append(tensorTypeOf(dy).getRank() - shape.size(), 1);
  Value mask = reshapeTo(b, loc, either, shape);
  return b.create<WhereOp>(loc, mask,
                           scalarConstant(b, loc, elementTypeOf(dy), 0.0), dy);
}

LogicalResult GatherOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                      ArrayRef<bool> needs,
                                      SmallVectorImpl<Value> &grads) {
  Value dy = dys[0];
  if (needs[0] && getPaddingIdx())
    dy = maskPaddingRow(b, getLoc(), dy, getIndices(), *getPaddingIdx(),
                        getInput().getType().getDimSize(0));
  grads.push_back(needs[0] ? b.create<GatherBackwardOp>(
                                 getLoc(), getInput().getType(), dy,
                                 getIndices(), getAxisAttr())
                           : Value());
  grads.push_back(Value()); // indices
  return success();
}

LogicalResult GatherElementsOp::buildGradient(OpBuilder &b,
                                              ArrayRef<Value> dys,
                                              ArrayRef<bool> needs,
                                              SmallVectorImpl<Value> &grads) {
  grads.push_back(needs[0] ? b.create<GatherElementsBackwardOp>(
                                 getLoc(), getInput().getType(), dys[0],
                                 getIndices(), getAxisAttr())
                           : Value());
  grads.push_back(Value()); // indices
  return success();
}

LogicalResult ExpandOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                      ArrayRef<bool> needs,
                                      SmallVectorImpl<Value> &grads) {
  grads.push_back(needs[0] ? reduceToShape(b, getLoc(), dys[0],
                                           getInput().getType())
                           : Value());
  return success();
}

LogicalResult PadOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                   ArrayRef<bool> needs,
                                   SmallVectorImpl<Value> &grads) {
  if (!needs[0]) {
    grads.push_back(Value());
    return success();
  }
  Location loc = getLoc();
  ArrayRef<int64_t> pads = getPads();
  auto inType = getInput().getType();
  int64_t rank = inType.getRank();
  if (getMode() != "constant") {
    // Edge elements are read from several positions: a gathering kernel.
    grads.push_back(b.create<PadBackwardOp>(loc, inType, dys[0], getPadsAttr(),
                                            getModeAttr()));
    return success();
  }
  // Constant mode reads each kept element once: dx is dy's window over them.
  if (llvm::all_of(pads, [](int64_t p) { return p >= 0; })) {
    SmallVector<int64_t> starts(pads.take_front(rank)), limits, steps(rank, 1);
    for (int64_t d = 0; d < rank; ++d)
      limits.push_back(starts[d] + inType.getDimSize(d));
    grads.push_back(b.create<SliceOp>(loc, dys[0], b.getDenseI64ArrayAttr(starts),
                                      b.getDenseI64ArrayAttr(limits),
                                      b.getDenseI64ArrayAttr(steps)));
    return success();
  }
  // With cropping, the negated pads restore the cropped elements as zeros.
  SmallVector<int64_t> negated;
  for (int64_t p : pads)
    negated.push_back(-p);
  grads.push_back(b.create<PadOp>(loc, dys[0], b.getDenseI64ArrayAttr(negated),
                                  b.getStringAttr("constant"),
                                  b.getF64FloatAttr(0.0)));
  return success();
}

LogicalResult TileOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                    ArrayRef<bool> needs,
                                    SmallVectorImpl<Value> &grads) {
  if (!needs[0]) {
    grads.push_back(Value());
    return success();
  }
  // The tiles are a wrap pad's end pads: its backward sums them.
  auto inType = getInput().getType();
  SmallVector<int64_t> pads(inType.getRank(), 0);
  for (int64_t d = 0; d < inType.getRank(); ++d)
    pads.push_back((getRepeats()[d] - 1) * inType.getDimSize(d));
  grads.push_back(b.create<PadBackwardOp>(getLoc(), inType, dys[0],
                                          b.getDenseI64ArrayAttr(pads),
                                          b.getStringAttr("wrap")));
  return success();
}

LogicalResult TriluOp::buildGradient(OpBuilder &b, ArrayRef<Value> dys,
                                     ArrayRef<bool> needs,
                                     SmallVectorImpl<Value> &grads) {
  // A mask: the kept elements pass dy through, the others get none.
  grads.push_back(needs[0] ? b.create<TriluOp>(getLoc(), getType(), dys[0],
                                               getUpperAttr(), getKAttr())
                           : Value());
  return success();
}
