//===- Workspace.h - Where CPU kernels take their scratch from ---*- C++ -*-===//
//
// Kernels that need scratch (im2col columns, double accumulators, index
// lists, the fp32 panels of 16-bit GEMMs) take it from one workspace
// region instead of the heap, so a training step allocates nothing and the
// plan's workspace figure is what the step really uses. The executable hands the region over once, before
// the first step; a kernel that finds it too small throws a RuntimeError
// naming itself, the bytes it needs and the bytes available.
//
// Until setWorkspace is called the workspace grows on demand: callers that
// are not planned (the interpreter, constant folding at import, tests) need
// nothing else. Once the executable sets the plan's workspace it stays
// fixed: too little is an error, never a silent heap fallback.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_WORKSPACE_H
#define REMAT_RUNTIME_WORKSPACE_H

#include <cstddef>

namespace remat::rt {

/// Alignment of the workspace and of every scratch buffer carved from it.
constexpr size_t kScratchAlignment = 64;

/// Kernels take scratch from [data, data + bytes) from now on (`data`
/// aligned to kScratchAlignment; the caller keeps it alive). Turns growth
/// off.
void setWorkspace(void *data, size_t bytes);

/// From now on a kernel that needs more scratch than the workspace holds
/// gets a larger one (owned by the runtime, kept for later calls): the
/// state before the first setWorkspace.
void useGrowableWorkspace();

} // namespace remat::rt

#endif // REMAT_RUNTIME_WORKSPACE_H
