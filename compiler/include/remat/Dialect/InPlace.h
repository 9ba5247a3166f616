//===- InPlace.h - Which results may be written over an operand -*- C++ -*-===//
//
// The arena rule for in-place results, from the InPlaceElementwise and
// InPlaceRowwise traits (RematTraits.h): an elementwise op's first result
// may be written over the storage of an operand of exactly its type (same
// shape, so no broadcast operand; same element type), a row-wise op's
// result of operand 0's type over operand 0, when that operand is read for
// the last time by the op. The
// memory profile shares such a pair as one buffer, the verifier accepts it,
// the interpreter's arena check allows it; each of them decides "read for
// the last time" from its own liveness, and this file says which pairs the
// kernels allow.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_DIALECT_INPLACE_H
#define REMAT_DIALECT_INPLACE_H

#include "mlir/IR/Operation.h"

namespace remat {

/// Whether `op`'s kernel may write `result` over the storage of operand
/// `operand`, which has the result's type: the op has InPlaceElementwise and
/// is not an optimizer update (whose results are persistent state, written
/// over their own argument), and `result` is its first result; or the op has
/// InPlaceRowwise and `operand` is its first operand.
bool mayWriteInPlace(mlir::Operation *op, mlir::OpResult result,
                     mlir::OpOperand &operand);

} // namespace remat

#endif // REMAT_DIALECT_INPLACE_H
