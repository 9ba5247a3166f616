//===- Passes.h - remat passes ----------------------------------*- C++ -*-===//

#ifndef REMAT_PASSES_PASSES_H
#define REMAT_PASSES_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "remat/Dialect/RematDialect.h"

namespace remat {

#define GEN_PASS_DECL
#include "remat/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "remat/Passes/Passes.h.inc"

} // namespace remat

#endif // REMAT_PASSES_PASSES_H
