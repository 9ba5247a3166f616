//===- OpEmitter.h - Translating one op into a kernel call ------*- C++ -*-===//
//
// Private to the C++ emitter. Mirrors the interpreter's executor table
// (runtime/interpreter): for each op, the runtime kernel call that executes
// it, written as C++ text. The emitter supplies the views (constant offsets
// into the arena or the persistent region); an op emitter only decides which
// kernel to call with which attributes. Forward ops register in
// OpEmitters.cpp, backward and optimizer ops in TrainingOpEmitters.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TARGET_CPP_OPEMITTER_H
#define REMAT_TARGET_CPP_OPEMITTER_H

#include "remat/Target/Cpp/TrainStepEmitter.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <string>
#include <vector>

namespace remat {

/// What an op emitter sees of the emitter. Expressions are C++ text.
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

/// Writes the kernel call(s) for one op. Reports unsupported attribute
/// combinations with op->emitOpError and returns failure.
using OpEmitter =
    std::function<mlir::LogicalResult(mlir::Operation *, OpEmitContext &)>;
using OpEmitterTable = llvm::DenseMap<mlir::TypeID, OpEmitter>;

/// Registers `fn(OpT, OpEmitContext&)` for OpT.
template <typename OpT, typename Fn>
void addEmitter(OpEmitterTable &table, Fn fn) {
  table[mlir::TypeID::get<OpT>()] = [fn](mlir::Operation *op,
                                         OpEmitContext &ctx) {
    return fn(llvm::cast<OpT>(op), ctx);
  };
}

/// The emitter of `op`, or null: constants and reshapes have none (the
/// emitter binds them to storage without code).
const OpEmitter *lookupOpEmitter(mlir::Operation *op);
void addTrainingOpEmitters(OpEmitterTable &table);

// C++ literals.
std::string cppBool(bool value);
std::string cppInt(int64_t value);
/// Round-trips exactly (17 significant digits, or the named infinities).
std::string cppDouble(double value);
std::string cppIntList(llvm::ArrayRef<int64_t> values);
/// `remat::rt::WindowParams{...}`; empty dilations mean all ones.
std::string cppWindowParams(llvm::ArrayRef<int64_t> kernel,
                            llvm::ArrayRef<int64_t> strides,
                            llvm::ArrayRef<int64_t> pads,
                            llvm::ArrayRef<int64_t> dilations = {});
/// `remat::rt::LossReduction::Mean` for "mean", ...; empty on an unknown one.
std::string cppLossReduction(llvm::StringRef reduction);
/// A C++ string literal.
std::string cppString(llvm::StringRef text);

} // namespace remat

#endif // REMAT_TARGET_CPP_OPEMITTER_H
