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

/// Checks `remat.name` and `remat.role` on a function argument or result,
/// so that a typo in hand-written IR is caught where it is made.
static LogicalResult verifyNameOrRole(Operation *op, StringRef what,
                                      unsigned index, NamedAttribute attribute,
                                      ArrayRef<StringRef> roles) {
  if (attribute.getName() == RematDialect::kNameAttr) {
    if (!llvm::isa<StringAttr>(attribute.getValue()))
      return op->emitError() << what << " " << index << ": '"
                             << RematDialect::kNameAttr << "' must be a string";
    return success();
  }
  if (attribute.getName() == RematDialect::kRoleAttr) {
    auto role = llvm::dyn_cast<StringAttr>(attribute.getValue());
    if (!role || !llvm::is_contained(roles, role.getValue())) {
      std::string valid;
      for (StringRef r : roles)
        valid += (valid.empty() ? "" : ", ") + r.str();
      return op->emitError() << what << " " << index << ": '"
                             << RematDialect::kRoleAttr << "' must be one of: "
                             << valid;
    }
    return success();
  }
  return op->emitError() << "unknown remat " << what << " attribute '"
                         << attribute.getName() << "'";
}

LogicalResult RematDialect::verifyRegionArgAttribute(Operation *op,
                                                     unsigned regionIndex,
                                                     unsigned argIndex,
                                                     NamedAttribute attribute) {
  // The memory planner's byte offset of an input in the arena.
  if (attribute.getName() == kArenaOffsetAttr) {
    if (!llvm::isa<IntegerAttr>(attribute.getValue()))
      return op->emitError() << "argument " << argIndex << ": '"
                             << kArenaOffsetAttr << "' must be an integer";
    return success();
  }
  // The value persistent state starts from when it is not zero (the loss
  // scale).
  if (attribute.getName() == kInitialValueAttr) {
    if (!llvm::isa<FloatAttr>(attribute.getValue()))
      return op->emitError() << "argument " << argIndex << ": '"
                             << kInitialValueAttr << "' must be a float";
    return success();
  }
  return verifyNameOrRole(op, "argument", argIndex, attribute,
                          {"input", "parameter", "buffer", "optimizer_state",
                           "step", "loss_scale"});
}

LogicalResult RematDialect::verifyRegionResultAttribute(
    Operation *op, unsigned regionIndex, unsigned resultIndex,
    NamedAttribute attribute) {
  return verifyNameOrRole(op, "result", resultIndex, attribute,
                          {"output", "loss", "parameter", "buffer",
                           "optimizer_state", "step", "loss_scale",
                           "gradient"});
}
