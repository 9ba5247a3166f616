//===- EmitCommand.h - remat-opt --emit=cpp|cuda|exe ------------*- C++ -*-===//

#ifndef REMAT_TOOLS_EMITCOMMAND_H
#define REMAT_TOOLS_EMITCOMMAND_H

#include "remat/Planning/TrainStepPlanner.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace remat {

struct EmitCommandOptions {
  std::string emit;    // cpp, cuda or exe
  std::string output;  // a directory (cpp, cuda) or the executable's path
  std::string backend; // exe: cpu or cuda (empty: cuda when available)
  /// The RematRuntime CMake package directory (empty: next to remat-opt).
  std::string runtimeDir;
  /// argv[0], to find the runtime package beside the remat-opt binary.
  const char *argv0 = nullptr;
};

/// Writes (and for exe builds) the training executable of the planned
/// @train_step in `module`, built with `optimizer` (remat-autodiff's).
/// Returns 0 or 1 (after printing the error).
int runEmitCommand(mlir::ModuleOp module, const PlanReport &report,
                   const std::string &optimizer,
                   const EmitCommandOptions &options);

} // namespace remat

#endif // REMAT_TOOLS_EMITCOMMAND_H
