//===- DifferentiableOpInterface.h - Ops that state their gradient -*- C++ -*-===//

#ifndef REMAT_DIALECT_DIFFERENTIABLEOPINTERFACE_H
#define REMAT_DIALECT_DIFFERENTIABLEOPINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "remat/Dialect/DifferentiableOpInterface.h.inc"

#endif // REMAT_DIALECT_DIFFERENTIABLEOPINTERFACE_H
