//===- TrainingLoop.h - remat-run --train ----------------------*- C++ -*-===//
//
// Builds @train_step with remat-autodiff and runs it for N steps on one
// batch: inputs from the input files (graph input order; the labels of an
// appended loss come from the next file), parameters and buffers from the
// initializers, optimizer state zero, step 0. After each step the results
// are fed back by role and name. Prints `step <i> loss <value>` per step and
// a summary line; then dumps, checks and writes weights as asked.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TOOLS_REMAT_RUN_TRAININGLOOP_H
#define REMAT_TOOLS_REMAT_RUN_TRAININGLOOP_H

#include "Options.h"

#include "mlir/IR/MLIRContext.h"

namespace remat::run {

/// Returns the exit status: 0 success, 1 a check failed. Throws ToolError.
int runTraining(mlir::MLIRContext &context, const Options &options);

} // namespace remat::run

#endif // REMAT_TOOLS_REMAT_RUN_TRAININGLOOP_H
