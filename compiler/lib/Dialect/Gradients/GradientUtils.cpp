//===- GradientUtils.cpp - Helpers shared by the ops' gradient rules ------===//

#include "GradientUtils.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace remat {

Type elementTypeOf(Value value) { return tensorTypeOf(value).getElementType(); }

RankedTensorType tensorTypeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType());
}

Value scalarConstant(OpBuilder &builder, Location loc, Type elementType,
                     double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element;
  if (auto floatType = llvm::dyn_cast<FloatType>(elementType)) {
    bool losesInfo = false;
    APFloat apValue(value);
    apValue.convert(floatType.getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &losesInfo);
    element = builder.getFloatAttr(elementType, apValue);
  } else {
    element = builder.getIntegerAttr(elementType, static_cast<int64_t>(value));
  }
  return builder.create<ConstantOp>(loc, type,
                                    DenseElementsAttr::get(type, element));
}

Value zeros(OpBuilder &builder, Location loc, RankedTensorType type) {
  Attribute zero = llvm::isa<FloatType>(type.getElementType())
                       ? Attribute(builder.getFloatAttr(type.getElementType(), 0.0))
                       : Attribute(builder.getIntegerAttr(type.getElementType(), 0));
  return builder.create<ConstantOp>(loc, type, DenseElementsAttr::get(type, zero));
}

Value reshapeTo(OpBuilder &builder, Location loc, Value value,
                ArrayRef<int64_t> shape) {
  auto type = tensorTypeOf(value);
  if (type.getShape() == shape)
    return value;
  return builder.create<ReshapeOp>(
      loc, RankedTensorType::get(shape, type.getElementType()), value);
}

Value reduceToShape(OpBuilder &builder, Location loc, Value grad,
                    RankedTensorType target) {
  auto type = tensorTypeOf(grad);
  if (type.getShape() == target.getShape())
    return grad;
  int64_t offset = type.getRank() - target.getRank();
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool leading = d < offset;
    if (leading || (target.getDimSize(d - offset) == 1 && type.getDimSize(d) != 1))
      axes.push_back(d);
  }
  Value sum = grad;
  if (!axes.empty())
    sum = builder.create<ReduceSumOp>(loc, grad,
                                      builder.getDenseI64ArrayAttr(axes),
                                      builder.getBoolAttr(true));
  return reshapeTo(builder, loc, sum, target.getShape());
}

Value expandTo(OpBuilder &builder, Location loc, Value value,
               RankedTensorType target) {
  auto type = tensorTypeOf(value);
  if (type.getShape() == target.getShape())
    return value;
  return builder.create<ExpandOp>(
      loc, RankedTensorType::get(target.getShape(), type.getElementType()),
      value);
}

Value maskToFloat(OpBuilder &builder, Location loc, Value mask,
                  Type elementType) {
  auto type = tensorTypeOf(mask);
  return builder.create<CastOp>(loc, type.clone(elementType), mask);
}

} // namespace remat
