//===- MemoryProfile.h - Liveness and memory by category --------*- C++ -*-===//
//
// Liveness of every tensor of a straight-line function along its schedule
// (the body order), and the resulting memory profile by category. Persistent
// state (parameters, buffers, optimizer state, step) is allocated once and
// updated in place, so it is counted apart from the per-step arena. In the
// arena, a result an op may write over a dying operand (InPlace.h) shares
// that operand's buffer, as a reshape shares its input's.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_MEMORYPROFILE_H
#define REMAT_ANALYSIS_MEMORYPROFILE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <cstdint>
#include <vector>

namespace remat {

enum class MemoryCategory {
  Input,      // the batch: data inputs and labels
  Activation, // forward values that backward reads
  Gradient,   // parameter gradients
  Temporary,  // everything else the step computes
  Count,
};
const char *categoryName(MemoryCategory category);

/// One arena buffer: a value (and the reshapes that alias it, and the
/// results written over it in place), live from the step that defines it to
/// the last read of any of them. Step -1 is "before the first op" (function
/// inputs); results returned by the function live to the end.
struct BufferLifetime {
  /// The value that first occupies the buffer (its root).
  mlir::Value value;
  int64_t bytes = 0;
  int begin = 0;
  int end = 0;
  MemoryCategory category = MemoryCategory::Temporary;
};

struct MemoryProfile {
  std::vector<BufferLifetime> buffers;
  /// Arena buffer of every value that has one (aliases map to their root).
  llvm::DenseMap<mlir::Value, unsigned> bufferOf;
  int64_t persistentBytes = 0;
  int numSteps = 0;
  /// Live arena bytes at each step (index step + 1, so that step -1 fits).
  std::vector<int64_t> liveBytes;
  int64_t peakBytes = 0;
  int peakStep = -1;
  /// Live bytes per category at the peak.
  std::array<int64_t, static_cast<size_t>(MemoryCategory::Count)> peakByCategory{};
};

/// What a training step's values are, from the roles on its arguments and
/// results: persistent state (arguments with a persistent role, and results
/// written in place into it: new parameters, optimizer state, running
/// statistics), the losses, and the forward ops (those a loss depends on;
/// every op when there is no loss).
struct StepRoles {
  llvm::DenseSet<mlir::Value> persistent;
  llvm::SmallVector<mlir::Value> losses;
  llvm::DenseSet<mlir::Operation *> forward;
  bool isForward(mlir::Operation *op) const {
    return losses.empty() || forward.contains(op);
  }
};
StepRoles classifyStep(mlir::func::FuncOp func);

/// Whether an argument or result role is persistent state.
bool isPersistentRole(llvm::StringRef role);

/// Bytes of a ranked tensor type (i1 takes a byte), rounded up to
/// `alignment` when it is non-zero.
int64_t tensorBytes(mlir::Type type, int64_t alignment = 0);

/// The arena offset a planned function's IR gives `v`, as the runtimes read
/// it: `remat.arena_offset` on an input argument, the entry of
/// `remat.arena_offsets` on the op for a result; -1 when there is none.
int64_t arenaOffsetOf(mlir::func::FuncOp func, mlir::Value v);

/// Which in-place pairs (a result an op may write over an operand the op
/// reads for the last time, InPlace.h) share one buffer. Function arguments
/// (the caller's batch) are never written over.
enum class InPlaceSharing {
  /// Every such pair: the liveness a plan is made from.
  Allowed,
  /// Only the pairs the IR's arena offsets put at the same offset: the
  /// liveness of a planned function as the runtimes will run it.
  AsAssigned,
};

/// Computes the profile of `func`, whose arguments and results carry
/// remat.role attributes (a @train_step built by remat-autodiff, or a
/// @forward). Buffer sizes are rounded up to `alignment` bytes.
MemoryProfile computeMemoryProfile(mlir::func::FuncOp func,
                                   int64_t alignment = 256,
                                   InPlaceSharing sharing =
                                       InPlaceSharing::Allowed);

} // namespace remat

#endif // REMAT_ANALYSIS_MEMORYPROFILE_H
