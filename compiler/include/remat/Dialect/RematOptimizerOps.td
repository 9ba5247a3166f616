//===- RematOptimizerOps.td - Fused optimizer updates -------*- tablegen -*-===//
//
// One op per parameter update, with PyTorch's torch.optim formulas exactly.
// `step` is the 1-based number of the step being taken (a 0-d i64 tensor),
// which SGD's first momentum step and Adam's bias correction need.
//
// Loss scaling (fp16 mixed precision, as torch.amp.GradScaler): an update
// may take the loss scale the gradient was computed with (`loss_scale`, a
// 0-d f32: the gradient is multiplied by 1/scale in the parameter's dtype
// before the update, as GradScaler.unscale_) and a skip flag (`found_inf`,
// a 0-d i1 from remat.any_nonfinite: when set, the parameter and its state
// are returned unchanged, as GradScaler.step skips optimizer.step).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_OPTIMIZER_OPS
#define REMAT_OPTIMIZER_OPS

/// The optional loss-scaling operands every update takes, written after
/// the others: `unscale %scale skip_if %found_inf`.
class Remat_OptimizerOp<string mnemonic, list<Trait> traits, string operands>
    : Remat_Op<mnemonic, !listconcat(traits, [Remat_InPlaceElementwise,
        Remat_OptimizerUpdate, Pure, AttrSizedOperandSegments]), Remat_CustomFlops> {
  let hasVerifier = 1;
  let assemblyFormat = operands # [{
    (`unscale` $loss_scale^)? (`skip_if` $found_inf^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def Remat_SgdOp : Remat_OptimizerOp<"sgd",
    [AllTypesMatch<["param", "grad", "new_param"]>], "$param `,` $grad"> {
  let summary = "torch.optim.SGD without momentum: p - lr * (g + wd * p)";
  let arguments = (ins Remat_FloatTensor:$param, Remat_FloatTensor:$grad,
                   Optional<Remat_TensorOf<[F32]>>:$loss_scale,
                   Optional<Remat_BoolTensor>:$found_inf,
                   F64Attr:$lr, DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
  let results = (outs Remat_FloatTensor:$new_param);
}

def Remat_SgdMomentumOp : Remat_OptimizerOp<"sgd_momentum",
    [AllTypesMatch<["param", "grad", "momentum_buffer", "new_param",
                   "new_momentum_buffer"]>],
    "$param `,` $grad `,` $momentum_buffer `,` $step"> {
  let summary = "torch.optim.SGD with momentum (optionally Nesterov)";
  let arguments = (ins Remat_FloatTensor:$param, Remat_FloatTensor:$grad,
                   Remat_FloatTensor:$momentum_buffer, Remat_TensorOf<[I64]>:$step,
                   Optional<Remat_TensorOf<[F32]>>:$loss_scale,
                   Optional<Remat_BoolTensor>:$found_inf,
                   F64Attr:$lr, F64Attr:$momentum,
                   DefaultValuedAttr<F64Attr, "0.0">:$dampening,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                   DefaultValuedAttr<BoolAttr, "false">:$nesterov);
  let results = (outs Remat_FloatTensor:$new_param,
                 Remat_FloatTensor:$new_momentum_buffer);
}

def Remat_AdamOp : Remat_OptimizerOp<"adam",
    [AllTypesMatch<["param", "grad", "exp_avg", "exp_avg_sq", "new_param",
                   "new_exp_avg", "new_exp_avg_sq"]>],
    "$param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $step"> {
  let summary = "torch.optim.Adam, or AdamW with decoupled = true";
  let arguments = (ins Remat_FloatTensor:$param, Remat_FloatTensor:$grad,
                   Remat_FloatTensor:$exp_avg, Remat_FloatTensor:$exp_avg_sq,
                   Remat_TensorOf<[I64]>:$step,
                   Optional<Remat_TensorOf<[F32]>>:$loss_scale,
                   Optional<Remat_BoolTensor>:$found_inf,
                   F64Attr:$lr, F64Attr:$beta1, F64Attr:$beta2, F64Attr:$eps,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                   DefaultValuedAttr<BoolAttr, "false">:$decoupled);
  let results = (outs Remat_FloatTensor:$new_param, Remat_FloatTensor:$new_exp_avg,
                 Remat_FloatTensor:$new_exp_avg_sq);
}

//===----------------------------------------------------------------------===//
// Dynamic loss scaling (torch.amp.GradScaler)
//===----------------------------------------------------------------------===//

def Remat_AnyNonFiniteOp : Remat_Op<"any_nonfinite",
    [Pure, AllTypesMatch<["found", "result"]>], Remat_CustomFlops> {
  let summary = "found, or any element of input is inf or NaN (0-d i1)";
  let description = [{
    One link of the step's overflow check: `found` is the flag of the
    gradients checked before this one (a constant false for the first), so
    a chain over every parameter gradient gives GradScaler's found_inf.
  }];
  let arguments = (ins Remat_FloatTensor:$input, Remat_BoolTensor:$found);
  let results = (outs Remat_BoolTensor:$result);
  let hasVerifier = 1;
}

def Remat_LossScaleUpdateOp : Remat_Op<"loss_scale_update",
    [Remat_InPlaceElementwise, Remat_OptimizerUpdate, Pure,
     AllTypesMatch<["scale", "new_scale"]>,
     AllTypesMatch<["growth_tracker", "new_growth_tracker"]>], Remat_CustomFlops> {
  let summary = "GradScaler.update(): back off on overflow, grow after a run";
  let description = [{
    torch._amp_update_scale_: with found_inf, scale *= backoff_factor and
    the tracker restarts at 0; otherwise the tracker counts this finite
    step, and when it reaches growth_interval the scale is multiplied by
    growth_factor (unless that overflows fp32) and the tracker restarts.
    Scale (f32) and tracker (i32) are 0-d persistent state of the step.
  }];
  let arguments = (ins Remat_TensorOf<[F32]>:$scale,
                   Remat_TensorOf<[I32]>:$growth_tracker,
                   Remat_BoolTensor:$found_inf,
                   DefaultValuedAttr<F64Attr, "2.0">:$growth_factor,
                   DefaultValuedAttr<F64Attr, "0.5">:$backoff_factor,
                   DefaultValuedAttr<I64Attr, "2000">:$growth_interval);
  let results = (outs Remat_TensorOf<[F32]>:$new_scale,
                 Remat_TensorOf<[I32]>:$new_growth_tracker);
  let hasVerifier = 1;
}

#endif // REMAT_OPTIMIZER_OPS
