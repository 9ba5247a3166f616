//===- InPlace.cpp - Which results may be written over an operand ---------===//

#include "remat/Dialect/InPlace.h"

#include "remat/Dialect/RematTraits.h"

using namespace mlir;

namespace remat {

bool mayWriteInPlace(Operation *op, OpResult result, OpOperand &operand) {
  return op->hasTrait<InPlaceElementwise>() &&
         !op->hasTrait<OptimizerUpdate>() && result.getOwner() == op &&
         result.getResultNumber() == 0 && operand.getOwner() == op &&
         operand.get().getType() == result.getType();
}

} // namespace remat
