//===- PlanCommand.h - remat-opt --budget -----------------------*- C++ -*-===//

#ifndef REMAT_TOOLS_PLANCOMMAND_H
#define REMAT_TOOLS_PLANCOMMAND_H

#include "EmitCommand.h"

#include "remat/Passes/Passes.h"
#include "remat/Tools/PlanPipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace remat {

/// remat-opt --budget's settings: the two passes' own option structs
/// (Passes.td), filled straight from the command line, and the output.
struct PlanCommandOptions {
  /// How to build @train_step when the module has none.
  AutodiffOptions autodiff;
  FusionOptions fusion;
  /// --precision: fp32, bf16 or fp16 (remat-mixed-precision).
  std::string precision = "fp32";
  /// remat-plan: budget, strategy, target, MILP limit, cost table, workspace.
  PlanTrainStepOptions plan;
  std::string emit = "report"; // report, json, mlir, cpp, cuda or exe
  /// --emit=cpp|cuda|exe: where and how to write the training executable.
  EmitCommandOptions codegen;
  /// --emit=html: plans to compare (--compare), the sweep and the title.
  std::string compare;
  int sweepPoints = 6;
  std::string model;
};

/// Builds the training step of `module` if it has none, plans it under the
/// budget and prints what `emit` asks for to `os`. Returns the process exit
/// status: 0 when a plan fits, 2 when none does (after saying what the
/// minimum is and why), 1 on any other error.
int runPlanCommand(mlir::ModuleOp module, const PlanCommandOptions &options,
                   llvm::raw_ostream &os);

} // namespace remat

#endif // REMAT_TOOLS_PLANCOMMAND_H
