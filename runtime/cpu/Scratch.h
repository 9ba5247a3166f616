//===- Scratch.h - A kernel's scratch buffers in the workspace ---*- C++ -*-===//
//
// A kernel states its scratch need up front (from its *ScratchBytes
// function in KernelScratch.h, the same one the planner sums), then takes
// buffers in the order that function counts them. Each buffer starts on a
// kScratchAlignment boundary.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CPU_SCRATCH_H
#define REMAT_RUNTIME_CPU_SCRATCH_H

#include "remat/runtime/KernelScratch.h"
#include "remat/runtime/Workspace.h"

#include <cstddef>
#include <cstdint>

namespace remat::rt::cpu {

class Scratch {
public:
  /// Reserves `bytes` of the workspace for this kernel call; throws
  /// RuntimeError (naming `kernel`) if the workspace is smaller.
  Scratch(const char *kernel, size_t bytes);
  /// Hands the reservation back. Reservations do not nest (a kernel that
  /// holds scratch calls no kernel that takes some).
  ~Scratch();
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;

  /// The next `count` elements of T (uninitialised).
  template <typename T> T *take(int64_t count) {
    return static_cast<T *>(takeBytes(scratchPiece<T>(count)));
  }

private:
  void *takeBytes(size_t bytes);

  const char *kernel_;
  char *base_;
  size_t bytes_, used_ = 0;
};

} // namespace remat::rt::cpu

#endif // REMAT_RUNTIME_CPU_SCRATCH_H
