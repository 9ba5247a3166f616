//===- CostOpInterface.h - Ops that state their arithmetic cost -*- C++ -*-===//

#ifndef REMAT_DIALECT_COSTOPINTERFACE_H
#define REMAT_DIALECT_COSTOPINTERFACE_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

#include "remat/Dialect/CostOpInterface.h.inc"

#endif // REMAT_DIALECT_COSTOPINTERFACE_H
