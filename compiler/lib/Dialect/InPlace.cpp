//===- InPlace.cpp - Which results may be written over an operand ---------===//

#include "remat/Dialect/InPlace.h"

#include "remat/Dialect/RematTraits.h"

using namespace mlir;

namespace remat {

bool mayWriteInPlace(Operation *op, OpResult result, OpOperand &operand) {
  if (result.getOwner() != op || operand.getOwner() != op ||
      operand.get().getType() != result.getType())
    return false;
  if (op->hasTrait<InPlaceElementwise>())
    return !op->hasTrait<OptimizerUpdate>() && result.getResultNumber() == 0;
  return op->hasTrait<InPlaceRowwise>() && operand.getOperandNumber() == 0;
}

} // namespace remat
