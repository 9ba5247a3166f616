//===- KernelCallWriter.h - Kernel bindings written as C++ ------*- C++ -*-===//
//
// Private to the C++ emitter. The Call of compiler/include/remat/Target/
// KernelBindings.h that writes an op's kernel call into the generated
// program: tensor arguments become views at the value's planned address
// (from the OpEmitContext, i.e. the TrainStepEmitter), plain values become
// C++ literals. The interpreter evaluates the same bindings, so generated
// code makes the calls remat-run makes.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TARGET_CPP_KERNELCALLWRITER_H
#define REMAT_TARGET_CPP_KERNELCALLWRITER_H

#include "CppLiterals.h"

#include "remat/Target/KernelBindings.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <type_traits>
#include <vector>

namespace remat {

/// What the writer needs of the emitter. Expressions are C++ text.
class OpEmitContext {
public:
  virtual ~OpEmitContext() = default;

  /// A TensorView expression for the value; "remat::rt::TensorView()" for a
  /// null Value (an absent optional operand).
  virtual std::string operand(mlir::Value value) = 0;
  /// The view the op writes the result into.
  virtual std::string result(mlir::Value value) = 0;
  /// As result(), but an empty view when the result has no uses (the kernel
  /// then skips that output, as the interpreter's optionalResult does).
  virtual std::string optionalResult(mlir::Value value) = 0;
  /// The result's buffer viewed with another shape (same element count).
  virtual std::string resultWithShape(mlir::Value value,
                                      llvm::ArrayRef<int64_t> shape) = 0;
  /// The 1-based step number an optimizer reads from a 0-d i64 tensor: the
  /// value on the CPU, a device pointer to it on CUDA.
  virtual std::string stepNumber(mlir::Value step) = 0;
  /// The steps taken before this one (the dropout RNG key).
  virtual std::string dropoutStep() = 0;

  /// Writes `kernel(args...);` calling the backend's kernel of that name.
  virtual void call(llvm::StringRef kernel,
                    llvm::ArrayRef<std::string> args) = 0;
};

/// A C++ expression, as opposed to a value to be written as a literal.
struct CppExpr {
  std::string text;
};

class KernelCallWriter {
public:
  explicit KernelCallWriter(OpEmitContext &ctx) : ctx_(ctx) {}

  CppExpr operand(mlir::Value value) { return {ctx_.operand(value)}; }
  CppExpr result(mlir::Value value) { return {ctx_.result(value)}; }
  CppExpr optionalResult(mlir::Value value) {
    return {ctx_.optionalResult(value)};
  }
  CppExpr resultWithShape(mlir::Value value,
                          const std::vector<int64_t> &shape) {
    return {ctx_.resultWithShape(value, shape)};
  }
  CppExpr operands(mlir::ValueRange values) {
    std::vector<std::string> views;
    for (mlir::Value value : values)
      views.push_back(ctx_.operand(value));
    return viewList(views);
  }
  CppExpr results(mlir::ValueRange values) {
    std::vector<std::string> views;
    for (mlir::Value value : values)
      views.push_back(ctx_.result(value));
    return viewList(views);
  }
  CppExpr none() { return {"remat::rt::TensorView()"}; }
  CppExpr stepNumber(mlir::Value step) { return {ctx_.stepNumber(step)}; }
  CppExpr dropoutStep() { return {ctx_.dropoutStep()}; }

  template <typename Run, typename Scratch, typename... Args>
  mlir::LogicalResult call(const KernelRef<Run, Scratch> &kernel,
                           const Args &...args) {
    ctx_.call(kernel.name, {text(args)...});
    return mlir::success();
  }
  /// Constants and reshapes get storage from the emitter's layout, not code.
  mlir::LogicalResult alias(mlir::Value, mlir::Value) {
    return mlir::success();
  }
  mlir::LogicalResult constant(mlir::Value, mlir::ElementsAttr) {
    return mlir::success();
  }
  mlir::LogicalResult fail(mlir::Operation *op, const std::string &message) {
    return op->emitOpError(message);
  }

private:
  static CppExpr viewList(const std::vector<std::string> &views) {
    std::string text = "remat::rt::TensorViewList{"; // no heap: Tensor.h
    for (size_t i = 0; i < views.size(); ++i)
      text += (i ? ", " : "") + views[i];
    return {text + "}"};
  }

  static std::string text(const CppExpr &expr) { return expr.text; }
  static std::string text(bool value) { return cppBool(value); }
  static std::string text(double value) { return cppDouble(value); }
  static std::string text(int64_t value) { return cppInt(value); }
  static std::string text(uint64_t value) { return cppUnsigned(value); }
  static std::string text(const std::vector<int64_t> &values) {
    return cppIntList(values);
  }
  template <typename T>
  static auto text(const T &value) -> decltype(cppLiteral(value)) {
    return cppLiteral(value);
  }

  OpEmitContext &ctx_;
};

} // namespace remat

#endif // REMAT_TARGET_CPP_KERNELCALLWRITER_H
