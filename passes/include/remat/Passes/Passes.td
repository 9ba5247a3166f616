//===- Passes.td - remat pass declarations ----------------*- tablegen -*-===//

#ifndef REMAT_PASSES
#define REMAT_PASSES

include "mlir/Pass/PassBase.td"

def FuseGelu : Pass<"remat-fuse-gelu", "mlir::func::FuncOp"> {
  let summary = "Fuse exported exact-GELU subgraphs into remat.gelu";
  let description = [{
    PyTorch exports `nn.GELU()` as
    `Mul(Mul(x, Add(Erf(Div(x, sqrt(2))), 1)), 0.5)`. One `remat.gelu` op
    keeps a single activation alive for backward instead of four, and is one
    kernel instead of five.
  }];
  let dependentDialects = ["remat::RematDialect"];
}

#endif // REMAT_PASSES
