//===- RematDialect.h - The remat dialect -----------------------*- C++ -*-===//

#ifndef REMAT_DIALECT_REMATDIALECT_H
#define REMAT_DIALECT_REMATDIALECT_H

#include "mlir/IR/Dialect.h"

#include "remat/Dialect/RematDialect.h.inc"

#endif // REMAT_DIALECT_REMATDIALECT_H
