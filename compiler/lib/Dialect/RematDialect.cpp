//===- RematDialect.cpp - The remat dialect -------------------------------===//

#include "remat/Dialect/RematDialect.h"
#include "remat/Dialect/RematOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace remat;

#include "remat/Dialect/RematDialect.cpp.inc"

void RematDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "remat/Dialect/RematOps.cpp.inc"
      >();
}

Operation *RematDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                             Type type, Location loc) {
  auto elements = llvm::dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}

/// Function arguments carry their ONNX name and role; check both so that a
/// typo in hand-written IR is caught where it is made, not in the planner.
LogicalResult RematDialect::verifyRegionArgAttribute(Operation *op,
                                                     unsigned regionIndex,
                                                     unsigned argIndex,
                                                     NamedAttribute attribute) {
  if (attribute.getName() == kNameAttr) {
    if (!llvm::isa<StringAttr>(attribute.getValue()))
      return op->emitError() << "argument " << argIndex << ": '" << kNameAttr
                             << "' must be a string";
    return success();
  }
  if (attribute.getName() == kRoleAttr) {
    auto role = llvm::dyn_cast<StringAttr>(attribute.getValue());
    if (!role || !llvm::is_contained({"input", "parameter", "buffer"},
                                     role.getValue()))
      return op->emitError() << "argument " << argIndex << ": '" << kRoleAttr
                             << "' must be \"input\", \"parameter\" or "
                                "\"buffer\"";
    return success();
  }
  return op->emitError() << "unknown remat argument attribute '"
                         << attribute.getName() << "'";
}
