//===- Interpreter.h - Reference interpreter over the remat dialect -*- C++ -*-===//
//
// Executes a `func.func` in the remat dialect op by op with the runtime's CPU
// kernels (DESIGN.md: the interpreter and generated code share one kernel
// implementation per backend). Used by `remat-run`, by tests, and to check
// generated code.
//
// Values live in owned buffers allocated with each result's static shape and
// dtype; every value is freed right after its last use (computed once, at
// construction), so a long chain of ops holds only what is still needed.
// `remat.reshape` aliases its operand's buffer instead of copying.
//
// Arena mode: a function planned by remat-plan (it carries
// `remat.arena_bytes`) runs in ONE 64-byte aligned arena allocated at
// construction and reused by every run. Each op result with a
// `remat.arena_offsets` entry >= 0 is bound to arena + offset, and each input
// argument with `remat.arena_offset` is copied into its slot at the start of
// a run; results with offset -1 (written in place into persistent state, or
// without an arena buffer) and constants are allocated as in the default
// mode. The interpreter measures the arena high-water mark (the largest
// offset + bytes it wrote) and, with setCheckArena(true), verifies before
// every write that no live value occupies the bytes about to be written.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_INTERPRETER_INTERPRETER_H
#define REMAT_INTERPRETER_INTERPRETER_H

#include "remat/runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace remat {

/// Errors the interpreter reports: bad arguments, unsupported ops or
/// attributes, and kernel failures (rethrown with the op's name and
/// location). Derives from rt::RuntimeError so one catch handles both.
struct InterpreterError : rt::RuntimeError {
  using rt::RuntimeError::RuntimeError;
};

class Interpreter {
public:
  /// Prepares `func` for execution: checks that the body is one block of
  /// supported ops, precomputes each value's last use, and converts constants.
  /// Throws InterpreterError naming every unsupported op. `func` must outlive
  /// the interpreter.
  explicit Interpreter(mlir::func::FuncOp func);
  ~Interpreter();
  Interpreter(const Interpreter &) = delete;
  Interpreter &operator=(const Interpreter &) = delete;

  /// Runs the function. `args` are in function-argument order and must match
  /// the argument types exactly (dtype and shape); they are only read.
  /// Returns the results in result order, each an owned tensor.
  std::vector<rt::Tensor> run(const std::vector<const rt::TensorView *> &args);

  /// The training step that keys the dropout RNG (remat.dropout's mask is a
  /// function of seed, stream, step and element index). Default 0.
  void setStep(uint64_t step) { step_ = step; }
  uint64_t step() const { return step_; }

  /// Largest number of bytes held at once by values the interpreter
  /// allocated during the last run (op results; not the arguments, nor
  /// constants, which are converted once and kept). Reset by each run.
  size_t peakLiveBytes() const { return peakLiveBytes_; }
  /// Bytes of op results currently allocated (0 between runs).
  size_t liveBytes() const { return liveBytes_; }

  /// Whether the function runs in an arena (it carries remat.arena_bytes).
  bool usesArena() const;
  /// The arena size the plan asks for (remat.arena_bytes); 0 without one.
  int64_t plannedArenaBytes() const;
  /// Largest offset + bytes of any tensor written into the arena, over all
  /// runs so far (0 without an arena). Exceeding plannedArenaBytes() means
  /// the plan's offsets do not fit its own arena (the interpreter allocates
  /// enough for every offset, so this is measured, not undefined).
  size_t arenaHighWaterBytes() const { return arenaHighWater_; }
  /// Debug check for arena mode: before a result (or input argument) is
  /// written into the arena, verify that no other live value overlaps its
  /// [offset, offset + bytes) range (throws InterpreterError naming both
  /// ops), and fill the range with a poison pattern (all bits set: NaN for
  /// floats) so a kernel that reads its output before writing it shows.
  void setCheckArena(bool check) { checkArena_ = check; }
  bool checkArena() const { return checkArena_; }

  /// The interpreted function.
  mlir::func::FuncOp function() const { return func_; }

private:
  struct Plan;
  class Run;
  friend class Run;

  mlir::func::FuncOp func_;
  std::unique_ptr<Plan> plan_;
  uint64_t step_ = 0;
  size_t liveBytes_ = 0;
  size_t peakLiveBytes_ = 0;
  size_t arenaHighWater_ = 0;
  bool checkArena_ = false;
};

/// "remat.matmul at model.mlir:3:8" style description used in messages.
std::string describeOp(mlir::Operation *op);

/// A location as messages show it: "file:line:col", "'node name'", ...
std::string describeLocation(mlir::Location loc);

} // namespace remat

#endif // REMAT_INTERPRETER_INTERPRETER_H
