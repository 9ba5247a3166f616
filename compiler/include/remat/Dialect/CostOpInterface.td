//===- CostOpInterface.td - Ops that state their arithmetic cost ----------===//

#ifndef REMAT_COST_OP_INTERFACE
#define REMAT_COST_OP_INTERFACE

include "mlir/IR/OpBase.td"

def Remat_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::remat";
  let description = [{
    The floating-point operations an op performs, for the cost model
    (compiler/include/remat/Analysis/CostModel.h), which combines them with
    the bytes the op moves and a target's peak figures. The default, one
    operation per result element, fits elementwise ops; ops that do more
    (matmul, conv, normalisations, losses) or nothing (pure data movement)
    override it.
  }];
  let methods = [
    InterfaceMethod<"Floating-point operations of one execution.",
      "double", "getFlops", (ins), [{}], [{
        double total = 0;
        for (::mlir::Value result : $_op->getResults())
          if (auto type = ::llvm::dyn_cast<::mlir::RankedTensorType>(result.getType()))
            total += static_cast<double>(type.getNumElements());
        return total;
      }]>,
  ];
}

#endif // REMAT_COST_OP_INTERFACE
