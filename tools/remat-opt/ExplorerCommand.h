//===- ExplorerCommand.h - remat-opt --emit=html [--compare ...] -*- C++ -*-===//

#ifndef REMAT_TOOLS_EXPLORERCOMMAND_H
#define REMAT_TOOLS_EXPLORERCOMMAND_H

#include "remat/Passes/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace remat {

struct ExplorerCommandOptions {
  /// The plan the command line asks for; --compare varies it.
  PlanTrainStepOptions plan;
  /// "A,B[,C]": strategies (auto, sqrt, ...) and/or budget=SIZE items; empty
  /// for one plan.
  std::string compare;
  /// Budgets per strategy in the step-time/budget sweep of a comparison
  /// (0: no sweep).
  int sweepPoints = 6;
  /// Shown in the page's title: the input file's name.
  std::string model;
};

/// Plans each variant of a module whose @train_step is built (not planned)
/// and writes the explorer page to `os`. Returns the exit status: 0 when
/// every compared plan fits, 2 when one does not (the page shows it and
/// why), 1 on a usage or planning error (reported on stderr).
int runExplorerCommand(mlir::ModuleOp module,
                       const ExplorerCommandOptions &options,
                       llvm::raw_ostream &os);

} // namespace remat

#endif // REMAT_TOOLS_EXPLORERCOMMAND_H
