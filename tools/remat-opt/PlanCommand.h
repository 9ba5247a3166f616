//===- PlanCommand.h - remat-opt --budget -----------------------*- C++ -*-===//

#ifndef REMAT_TOOLS_PLANCOMMAND_H
#define REMAT_TOOLS_PLANCOMMAND_H

#include "EmitCommand.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace remat {

struct PlanCommandOptions {
  std::string budget;
  std::string strategy = "auto";
  std::string target = "h100";
  double milpSeconds = 10;
  std::string costTable;
  std::string workspace;
  std::string emit = "report"; // report, json, mlir, cpp, cuda or exe
  // Training step construction (remat-autodiff options).
  std::string loss = "auto", labels = "labels", logits, optimizer = "adam";
  double lr = -1, momentum = 0, weightDecay = -1;
  bool nesterov = false;
  /// --emit=cpp|cuda|exe: where and how to write the training executable.
  EmitCommandOptions codegen;
};

/// Builds the training step of `module` if it has none, plans it under the
/// budget and prints what `emit` asks for to `os`. Returns the process exit
/// status: 0 when a plan fits, 2 when none does (after saying what the
/// minimum is and why), 1 on any other error.
int runPlanCommand(mlir::ModuleOp module, const PlanCommandOptions &options,
                   llvm::raw_ostream &os);

} // namespace remat

#endif // REMAT_TOOLS_PLANCOMMAND_H
