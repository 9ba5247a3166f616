//===- ExecContext.h - What an op executor sees of the interpreter -*- C++ -*-===//
//
// Private to the interpreter. An executor reads its operands and obtains its
// result buffers through this interface; the interpreter owns the buffers and
// their lifetimes.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_INTERPRETER_EXECCONTEXT_H
#define REMAT_INTERPRETER_EXECCONTEXT_H

#include "remat/runtime/Tensor.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Operation.h"

#include <cstdint>

namespace remat {

class ExecContext {
public:
  virtual ~ExecContext() = default;

  /// The value's tensor; a null Value (absent optional operand) gives an
  /// empty view.
  virtual rt::TensorView operand(mlir::Value value) = 0;

  /// The result's buffer with its static shape and dtype: freshly allocated
  /// (zero-filled), or in arena mode the result's arena slot, whose contents
  /// are unspecified (poisoned under the arena check): kernels must write
  /// every element.
  virtual rt::TensorView result(mlir::Value value) = 0;

  /// Like result(), but returns an empty view without allocating when the
  /// result has no uses (for kernels whose corresponding output is optional).
  virtual rt::TensorView optionalResult(mlir::Value value) = 0;

  /// Binds `result` to `source`'s buffer, viewed with the result's shape
  /// (same dtype and element count): reshape without a copy.
  virtual void aliasResult(mlir::Value result, mlir::Value source) = 0;

  /// Binds `result` to the constant `value`, converted once and cached.
  virtual void constantResult(mlir::Value result, mlir::ElementsAttr value) = 0;

  /// The training step keying the dropout RNG.
  virtual uint64_t step() const = 0;
};

} // namespace remat

#endif // REMAT_INTERPRETER_EXECCONTEXT_H
