//===- RematOps.h - remat dialect operations --------------------*- C++ -*-===//

#ifndef REMAT_DIALECT_REMATOPS_H
#define REMAT_DIALECT_REMATOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "remat/Dialect/CostOpInterface.h"
#include "remat/Dialect/DifferentiableOpInterface.h"
#include "remat/Dialect/RematDialect.h"
#include "remat/Dialect/RematTraits.h"
#include "remat/Dialect/ShapeInference.h"

#include <limits> // default bounds of remat.clip

#define GET_OP_CLASSES
#include "remat/Dialect/RematOps.h.inc"

#endif // REMAT_DIALECT_REMATOPS_H
