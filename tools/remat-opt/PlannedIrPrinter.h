//===- PlannedIrPrinter.h - Planned IR laid out for reading and diffing -*- C++ -*-===//
//
// remat-opt --budget --emit=mlir (and -o FILE.mlir): the planned module as
// MLIR that still parses, laid out for people and for diffing two plans side
// by side (Compiler Explorer's panes and diff view): each function opens
// with a comment block of the plan's headline figures, signatures list one
// argument or result per line instead of one line of thousands of
// characters, and recomputed ops end with a "// recomputed" comment naming
// the node they recompute.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TOOLS_PLANNEDIRPRINTER_H
#define REMAT_TOOLS_PLANNEDIRPRINTER_H

#include "remat/Planning/TrainStepPlanner.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace remat {

void printPlannedModule(mlir::ModuleOp module, const PlanReport &report,
                        llvm::raw_ostream &os);

} // namespace remat

#endif // REMAT_TOOLS_PLANNEDIRPRINTER_H
