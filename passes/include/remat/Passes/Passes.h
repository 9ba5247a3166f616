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

struct PlanReport;
/// remat-plan for drivers: also copies the report to `out` and uses the
/// peak of the step before remat-schedule-updates in it.
std::unique_ptr<mlir::Pass>
createPlanTrainStepWithReport(const PlanTrainStepOptions &options,
                              PlanReport *out, int64_t plainOrderPeakBytes);

#define GEN_PASS_REGISTRATION
#include "remat/Passes/Passes.h.inc"

} // namespace remat

#endif // REMAT_PASSES_PASSES_H
