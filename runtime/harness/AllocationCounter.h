//===- AllocationCounter.h - Heap allocations made during steps --*- C++ -*-===//
//
// The training executable promises that a step allocates nothing: every
// kernel's scratch lives in the planned workspace, so the plan's peak is the
// executable's peak. AllocationCounter.cpp checks that promise for real: it
// replaces the C allocation functions (malloc, calloc, realloc, the aligned
// ones; operator new calls malloc) in the executable, and counts the calls
// made between beginCounting() and endCounting(). The harness brackets each
// Device::runStep with them and reports the total (step_allocations).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_HARNESS_ALLOCATIONCOUNTER_H
#define REMAT_RUNTIME_HARNESS_ALLOCATIONCOUNTER_H

#include <cstdint>

namespace remat::rt::harness {

/// Starts counting allocations (from any thread) made from now on.
void beginCountingAllocations();
/// Stops counting; the count so far stays.
void endCountingAllocations();
/// Allocations made while counting, since the process started.
int64_t countedAllocations();
/// False when the allocation functions could not be replaced (a sanitizer
/// build owns them); the count is then meaningless and reported as -1.
bool allocationCountingAvailable();

} // namespace remat::rt::harness

#endif // REMAT_RUNTIME_HARNESS_ALLOCATIONCOUNTER_H
