//===- SyntheticData.h - A made-up batch for runs without data -*- C++ -*-===//
//
// Timing and memory runs need no real data, only a batch of the right
// shapes with values the step accepts: floats N(0, 1), integers that are
// valid indices or class labels, random booleans. Values are reproducible
// (HarnessRandom.h): a stream per input name from the harness seed.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_HARNESS_SYNTHETICDATA_H
#define REMAT_RUNTIME_HARNESS_SYNTHETICDATA_H

#include "remat/runtime/Program.h"

namespace remat::rt::harness {

/// A tensor for input `arg`: float dtypes N(0, 1); integer dtypes uniform in
/// [0, arg.syntheticBound), or in {0, 1} when the bound is 0 (unknown);
/// Bool uniform.
Tensor syntheticInput(const ArgumentSpec &arg);

} // namespace remat::rt::harness

#endif // REMAT_RUNTIME_HARNESS_SYNTHETICDATA_H
