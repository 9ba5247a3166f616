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
};

/// "remat.matmul at model.mlir:3:8" style description used in messages.
std::string describeOp(mlir::Operation *op);

/// A location as messages show it: "file:line:col", "'node name'", ...
std::string describeLocation(mlir::Location loc);

} // namespace remat

#endif // REMAT_INTERPRETER_INTERPRETER_H
