//===- RematOptimizerOps.td - Fused optimizer updates -------*- tablegen -*-===//
//
// One op per parameter update, with PyTorch's torch.optim formulas exactly.
// `step` is the 1-based number of the step being taken (a 0-d i64 tensor),
// which SGD's first momentum step and Adam's bias correction need.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_OPTIMIZER_OPS
#define REMAT_OPTIMIZER_OPS

def Remat_SgdOp : Remat_Op<"sgd", [Remat_InPlaceElementwise, Remat_OptimizerUpdate, Pure,
    AllTypesMatch<["param", "grad", "new_param"]>], Remat_CustomFlops> {
  let summary = "torch.optim.SGD without momentum: p - lr * (g + wd * p)";
  let arguments = (ins Remat_FloatTensor:$param, Remat_FloatTensor:$grad,
                   F64Attr:$lr, DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
  let results = (outs Remat_FloatTensor:$new_param);
}

def Remat_SgdMomentumOp : Remat_Op<"sgd_momentum", [Remat_InPlaceElementwise, Remat_OptimizerUpdate, Pure,
    AllTypesMatch<["param", "grad", "momentum_buffer", "new_param",
                   "new_momentum_buffer"]>], Remat_CustomFlops> {
  let summary = "torch.optim.SGD with momentum (optionally Nesterov)";
  let arguments = (ins Remat_FloatTensor:$param, Remat_FloatTensor:$grad,
                   Remat_FloatTensor:$momentum_buffer, Remat_TensorOf<[I64]>:$step,
                   F64Attr:$lr, F64Attr:$momentum,
                   DefaultValuedAttr<F64Attr, "0.0">:$dampening,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                   DefaultValuedAttr<BoolAttr, "false">:$nesterov);
  let results = (outs Remat_FloatTensor:$new_param,
                 Remat_FloatTensor:$new_momentum_buffer);
}

def Remat_AdamOp : Remat_Op<"adam", [Remat_InPlaceElementwise, Remat_OptimizerUpdate, Pure,
    AllTypesMatch<["param", "grad", "exp_avg", "exp_avg_sq", "new_param",
                   "new_exp_avg", "new_exp_avg_sq"]>], Remat_CustomFlops> {
  let summary = "torch.optim.Adam, or AdamW with decoupled = true";
  let arguments = (ins Remat_FloatTensor:$param, Remat_FloatTensor:$grad,
                   Remat_FloatTensor:$exp_avg, Remat_FloatTensor:$exp_avg_sq,
                   Remat_TensorOf<[I64]>:$step,
                   F64Attr:$lr, F64Attr:$beta1, F64Attr:$beta2, F64Attr:$eps,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                   DefaultValuedAttr<BoolAttr, "false">:$decoupled);
  let results = (outs Remat_FloatTensor:$new_param, Remat_FloatTensor:$new_exp_avg,
                 Remat_FloatTensor:$new_exp_avg_sq);
}

#endif // REMAT_OPTIMIZER_OPS
