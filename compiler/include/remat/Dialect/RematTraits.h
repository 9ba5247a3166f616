//===- RematTraits.h - Kernel properties of remat ops -----------*- C++ -*-===//
//
// Op traits that state what an op's runtime kernel can do, so that passes,
// the interpreter and the emitter ask the op (`op->hasTrait<...>()`) instead
// of keeping lists of op classes. Declared in ODS (RematOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_DIALECT_REMATTRAITS_H
#define REMAT_DIALECT_REMATTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace remat {

/// A fused optimizer update: reads a parameter (and its optimizer state) and
/// returns the new values, which the step writes over the old ones.
template <typename ConcreteType>
class OptimizerUpdate
    : public mlir::OpTrait::TraitBase<ConcreteType, OptimizerUpdate> {};

/// The kernel reads each element of an operand before it writes the element
/// at the same index of a result of that shape, so such a result may be
/// written over the operand: in-place updates of persistent state, and in
/// the arena the first result over an operand of its type that dies at the
/// op (InPlace.h). Kernels with several results compute the others (batch
/// statistics, parameter gradients) without reading an operand element
/// after the first result's element at that index is written. Every CPU
/// and CUDA kernel of an op with this trait keeps that promise.
template <typename ConcreteType>
class InPlaceElementwise
    : public mlir::OpTrait::TraitBase<ConcreteType, InPlaceElementwise> {};

/// The kernel reduces operand 0 along one axis and reads every element of a
/// row (the elements along that axis at one position of the others) before
/// it writes any element of that row of its result of operand 0's type, and
/// reads nothing of operand 0 afterwards; so that result may be written
/// over operand 0 when operand 0 dies at the op (InPlace.h). Softmax and
/// log-softmax (the output), SoftmaxCrossEntropyLoss (the log-probabilities,
/// from which its loss is then taken). A cross-entropy's logits are the
/// biggest tensor of a language model's step (GPT-2 small: 1.6 GB), and
/// they die where the log-probabilities are born. Every CPU and CUDA kernel
/// of an op with this trait keeps that promise.
template <typename ConcreteType>
class InPlaceRowwise
    : public mlir::OpTrait::TraitBase<ConcreteType, InPlaceRowwise> {};

} // namespace remat

#endif // REMAT_DIALECT_REMATTRAITS_H
