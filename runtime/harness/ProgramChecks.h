//===- ProgramChecks.h - Consistency of a generated ProgramSpec -*- C++ -*-===//
//
// Generated code is trusted to be right, but a wrong offset would corrupt
// memory silently, far from its cause. Checking the layout the ProgramSpec
// states (every slot inside its region, in-place results on their
// argument's slot, one scalar float loss) costs nothing and turns an
// emitter bug into a clear message before any device work.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_HARNESS_PROGRAMCHECKS_H
#define REMAT_RUNTIME_HARNESS_PROGRAMCHECKS_H

#include "remat/runtime/Program.h"

namespace remat::rt::harness {

/// Throws RuntimeError ("the program is inconsistent: ...") naming the
/// argument, result or constant at fault.
void checkProgram(const ProgramSpec &program);

/// The index into program.results of the loss (checkProgram ensures there
/// is exactly one).
size_t lossResult(const ProgramSpec &program);

} // namespace remat::rt::harness

#endif // REMAT_RUNTIME_HARNESS_PROGRAMCHECKS_H
