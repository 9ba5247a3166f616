//===- ExecutorRegistry.h - Building the op executor table ------*- C++ -*-===//
//
// Private to the interpreter: the table from op TypeID to executor, and the
// small helpers executors share. Forward ops register in OpExecutors.cpp,
// training-only ops (backward, optimizers) in TrainingExecutors.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_INTERPRETER_EXECUTORREGISTRY_H
#define REMAT_INTERPRETER_EXECUTORREGISTRY_H

#include "ExecContext.h"

#include "remat/Interpreter/Interpreter.h"
#include "remat/runtime/Kernels.h"

#include "llvm/ADT/DenseMap.h"

#include <vector>

namespace remat {

using ExecutorTable = llvm::DenseMap<mlir::TypeID, OpExecutor>;

/// Registers `fn(OpT, ExecContext&)` as the executor of OpT.
template <typename OpT, typename Fn>
void add(ExecutorTable &table, Fn fn) {
  table[mlir::TypeID::get<OpT>()] = [fn](mlir::Operation *op, ExecContext &ctx) {
    fn(llvm::cast<OpT>(op), ctx);
  };
}

inline std::vector<int64_t> toVector(llvm::ArrayRef<int64_t> values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

/// A view of `view`'s data with another shape (same dtype and numel).
inline rt::TensorView reshaped(const rt::TensorView &view, rt::Shape shape) {
  return rt::TensorView(view.dtype, std::move(shape), view.data);
}

inline rt::LossReduction lossReduction(llvm::StringRef reduction) {
  if (reduction == "none")
    return rt::LossReduction::None;
  if (reduction == "sum")
    return rt::LossReduction::Sum;
  if (reduction == "mean")
    return rt::LossReduction::Mean;
  throw InterpreterError("unknown loss reduction '" + reduction.str() + "'");
}

/// Window parameters of a conv or pooling op (dilations default to 1).
inline rt::WindowParams windowParams(llvm::ArrayRef<int64_t> kernel,
                                     llvm::ArrayRef<int64_t> strides,
                                     llvm::ArrayRef<int64_t> pads,
                                     llvm::ArrayRef<int64_t> dilations = {}) {
  rt::WindowParams params;
  params.kernel = toVector(kernel);
  params.strides = toVector(strides);
  params.pads = toVector(pads);
  params.dilations = dilations.empty()
                         ? std::vector<int64_t>(kernel.size(), 1)
                         : toVector(dilations);
  return params;
}

/// Conv window parameters with the kernel taken from the weight's shape
/// [M, C/group, k...].
inline rt::WindowParams convParams(llvm::ArrayRef<int64_t> weightShape,
                                   llvm::ArrayRef<int64_t> strides,
                                   llvm::ArrayRef<int64_t> pads,
                                   llvm::ArrayRef<int64_t> dilations) {
  return windowParams(weightShape.drop_front(2), strides, pads, dilations);
}

/// Registers the executors of backward and optimizer ops.
void addTrainingExecutors(ExecutorTable &table);

} // namespace remat

#endif // REMAT_INTERPRETER_EXECUTORREGISTRY_H
