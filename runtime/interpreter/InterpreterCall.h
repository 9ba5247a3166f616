//===- InterpreterCall.h - Kernel bindings evaluated on the CPU -*- C++ -*-===//
//
// Private to the interpreter. The Call of compiler/include/remat/Target/
// KernelBindings.h that executes an op now: its tensor arguments are the
// ExecContext's views and buffers, and call() runs the CPU kernel. The C++
// emitter renders the same bindings as text, so remat-run and generated code
// make the same kernel calls.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_INTERPRETER_INTERPRETERCALL_H
#define REMAT_INTERPRETER_INTERPRETERCALL_H

#include "ExecContext.h"

#include "remat/Interpreter/Interpreter.h"
#include "remat/Target/KernelBindings.h"

#include <string>
#include <utility>
#include <vector>

namespace remat {

class InterpreterCall {
public:
  explicit InterpreterCall(ExecContext &ctx) : ctx_(ctx) {}

  rt::TensorView operand(mlir::Value value) { return ctx_.operand(value); }
  rt::TensorView result(mlir::Value value) { return ctx_.result(value); }
  rt::TensorView optionalResult(mlir::Value value) {
    return ctx_.optionalResult(value);
  }
  /// The result's buffer viewed with another shape (same element count).
  rt::TensorView resultWithShape(mlir::Value value,
                                 const std::vector<int64_t> &shape) {
    rt::TensorView view = ctx_.result(value);
    return rt::TensorView(view.dtype, rt::Shape(shape.begin(), shape.end()),
                          view.data);
  }
  std::vector<rt::TensorView> operands(mlir::ValueRange values) {
    std::vector<rt::TensorView> views;
    for (mlir::Value value : values)
      views.push_back(ctx_.operand(value));
    return views;
  }
  std::vector<rt::TensorView> results(mlir::ValueRange values) {
    std::vector<rt::TensorView> views;
    for (mlir::Value value : values)
      views.push_back(ctx_.result(value));
    return views;
  }
  rt::TensorView none() { return rt::TensorView(); }
  int64_t stepNumber(mlir::Value step) {
    return *ctx_.operand(step).as<int64_t>();
  }
  uint64_t dropoutStep() { return ctx_.step(); }

  template <typename Run, typename Scratch, typename... Args>
  mlir::LogicalResult call(const KernelRef<Run, Scratch> &kernel,
                           Args &&...args) {
    kernel.run(std::forward<Args>(args)...);
    return mlir::success();
  }
  mlir::LogicalResult alias(mlir::Value result, mlir::Value source) {
    ctx_.aliasResult(result, source);
    return mlir::success();
  }
  mlir::LogicalResult constant(mlir::Value result, mlir::ElementsAttr value) {
    ctx_.constantResult(result, value);
    return mlir::success();
  }
  [[noreturn]] mlir::LogicalResult fail(mlir::Operation *,
                                        const std::string &message) {
    throw InterpreterError(message);
  }

private:
  ExecContext &ctx_;
};

/// Executes one op through its kernel binding. Throws rt::RuntimeError
/// (kernels) or InterpreterError.
using OpExecutor = KernelBinding<InterpreterCall>;

/// The executor for `op`, or null if no kernel executes it.
inline const OpExecutor *lookupExecutor(mlir::Operation *op) {
  return KernelBindings<InterpreterCall>::get().lookup(op);
}

} // namespace remat

#endif // REMAT_INTERPRETER_INTERPRETERCALL_H
