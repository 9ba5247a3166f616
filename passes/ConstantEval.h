//===- ConstantEval.h - Evaluate small constant subgraphs -------*- C++ -*-===//
//
// Exporters often build attention masks from literals (Range -> Less -> Or ->
// Where) that the importer leaves as ops. Passes that need to know such a
// value (e.g. whether a mask is the causal pattern) evaluate it here, with
// each result rounded to its element type as the kernels would.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASSES_CONSTANTEVAL_H
#define REMAT_PASSES_CONSTANTEVAL_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <vector>

namespace remat {

/// A small tensor's values as doubles (booleans as 0/1), row-major.
struct ConstantTensor {
  llvm::SmallVector<int64_t> shape;
  std::vector<double> values;

  /// The element at `index` of a shape that `shape` broadcasts to
  /// (right-aligned, size-1 dims repeat).
  double at(llvm::ArrayRef<int64_t> index) const;
};

/// The value of `value` if it is computed from remat.constant ops alone by
/// elementwise arithmetic (add, sub, mul, div, neg, sqrt,
/// reciprocal), comparisons, logic, where, cast, reshape and
/// expand, and has at most `maxElements` elements; nullopt otherwise.
std::optional<ConstantTensor> evaluateConstant(mlir::Value value,
                                               int64_t maxElements = 1 << 22);

} // namespace remat

#endif // REMAT_PASSES_CONSTANTEVAL_H
