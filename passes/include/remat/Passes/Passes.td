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

def FoldTransposeIntoMatMul : Pass<"remat-fold-transpose-into-matmul",
                                   "mlir::func::FuncOp"> {
  let summary = "Read a transposed matmul operand through transpose_lhs/rhs";
  let description = [{
    A `remat.transpose` that swaps the last two dims of a matmul operand
    (batch dims in place) becomes the matmul's `transpose_lhs` or
    `transpose_rhs` flag; the GEMM reads the operand in its own layout, and
    the transpose, if nothing else reads it, goes. Exporters write a tied
    or `nn.Linear` weight as `MatMul(x, Transpose(W))`: for GPT-2 small's
    LM head that copy is [768, 50257] (154 MB in fp32), made in forward,
    again for each recomputation, and transposed back for the gradient.
  }];
  let dependentDialects = ["remat::RematDialect"];
}

def FuseAttention : Pass<"remat-fuse-attention", "mlir::func::FuncOp"> {
  let summary = "Fuse exported scaled dot-product attention into remat.attention";
  let description = [{
    Recognises, from each softmax over the last axis, the attention that
    exporters write out:
    `MatMul(Q, K^T) -> Mul/Div(scale) -> Where(bool mask, ., fill) and/or
    Add(mask) -> Softmax -> [Dropout] -> MatMul(., V)`,
    with the scale possibly applied to Q and/or K before the matmul (as
    constants or as a runtime scalar, which is then applied to Q), K given
    transposed or not, grouped key/value heads repeated by
    Reshape -> Expand -> Reshape (stripped: Hkv < Hq), and 3-D
    [batch * heads, seq, dim] operands (reshaped to 4-D around the op).
    A mask that is a compile-time constant equal to the causal pattern
    becomes `causal = true`; any other mask becomes the additive mask
    operand (a boolean Where-mask as where(cond, fill, 0) with the model's
    own fill value). The fused op keeps only the output and one log-sum-exp
    per row for backward instead of the seq x seq probabilities.

    Left unfused: anything that does not match exactly, scores or
    probabilities with other users, and masks that depend on a parameter
    (their gradient is the seq x seq tensor fusion avoids). With
    `explain`, one line per candidate softmax says fused or why not.
    The function gets `remat.fused_attention` (blocks fused) and
    `remat.fused_attention_bytes` (bytes of seq x seq tensors that the
    unfused graph kept for backward: probabilities, dropout output and mask).
  }];
  let dependentDialects = ["remat::RematDialect"];
  let options = [
    Option<"explain", "explain", "bool", "false",
           "Print one line per candidate softmax: fused, or why not">,
  ];
}

def MixedPrecision : Pass<"remat-mixed-precision", "mlir::func::FuncOp"> {
  let summary = "Assign bf16/fp16 compute dtypes by an autocast-style policy";
  let description = [{
    Runs on @forward before remat-autodiff. Each fp32 op gets a compute
    dtype by its class (the policy table in passes/MixedPrecision.cpp, one
    reason per class): matmul, conv, conv_backward_data and attention
    compute in the low dtype (16-bit operands, fp32 accumulation in the
    kernels); softmax, log-softmax, layer norm, reductions, exp/log/pow/
    reciprocal/softplus and the losses in fp32; batch norm keeps its data's
    dtype with fp32 statistics and affine parameters; every other op follows
    its inputs (the widest float operand, 0-d and splat constants aside; a
    bias added to a low-precision GEMM joins it). Casts are explicit
    `remat.cast` ops, one per value and dtype, placed before the first op
    that needs them (a weight is cast once per step however often it is
    used); constants are converted at compile time; a cast of an exact
    widening reads the narrower value directly. The signature stays:
    parameters are fp32 master weights and outputs are cast back to their
    declared types, so autodiff casts each weight's gradient back to fp32
    before the optimizer. f64 and existing 16-bit computations are left as
    they are. The function gets `remat.precision`.
  }];
  let dependentDialects = ["remat::RematDialect"];
  let options = [
    Option<"precision", "precision", "std::string", "\"bf16\"",
           "fp32 (no change), bf16 or fp16">,
  ];
}

def Autodiff : Pass<"remat-autodiff", "mlir::ModuleOp"> {
  let summary = "Build @train_step (forward, backward, optimizer) from @forward";
  let description = [{
    Reverse-mode differentiation of `@forward` into
    `@train_step(inputs..., parameters..., buffers..., optimizer state...,
    step) -> (loss, new parameters..., updated buffers..., new optimizer
    state..., new step)`. Every op states its own gradient through
    DifferentiableOpInterface. The loss is the model's scalar output, or is
    appended to the logits (`loss=cross-entropy|mse`, with a new `labels`
    input). Each parameter is updated by one fused optimizer op with
    torch.optim's formulas; a parameter that does not reach the loss is left
    unchanged (as torch.optim skips parameters without a gradient).
    BatchNorm running statistics computed in training mode become the new
    values of their buffers. Function arguments and results carry
    `remat.name` and `remat.role` so runtimes can feed results back.

    Loss scaling (`loss-scale`, for fp16): the backward is seeded with the
    scale instead of 1, every parameter gradient is checked for inf/NaN
    (a chain of remat.any_nonfinite), and the updates take the scale (they
    unscale the gradient) and the overflow flag (they skip the update); the
    step counter only advances on a step that was taken. `dynamic` adds the
    scale (initial 65536) and its growth tracker as persistent state (role
    `loss_scale`, initial value `init-loss-scale` in `remat.initial_value`)
    updated by remat.loss_scale_update, exactly as torch.amp.GradScaler.
  }];
  let dependentDialects = ["remat::RematDialect", "mlir::func::FuncDialect"];
  let options = [
    Option<"loss", "loss", "std::string", "\"auto\"",
           "auto (the scalar output), cross-entropy or mse">,
    Option<"labels", "labels", "std::string", "\"labels\"",
           "Name of the labels input added for an appended loss">,
    Option<"logits", "logits", "std::string", "\"\"",
           "Output that an appended loss reads (default: the only output)">,
    Option<"optimizer", "optimizer", "std::string", "\"sgd\"",
           "sgd, adam or adamw">,
    Option<"lr", "lr", "double", "-1.0",
           "Learning rate (default 0.01 for sgd, 0.001 for adam/adamw)">,
    Option<"momentum", "momentum", "double", "0.0", "SGD momentum">,
    Option<"dampening", "dampening", "double", "0.0", "SGD dampening">,
    Option<"nesterov", "nesterov", "bool", "false", "SGD Nesterov momentum">,
    Option<"beta1", "beta1", "double", "0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", "0.999", "Adam beta2">,
    Option<"eps", "eps", "double", "1e-8", "Adam epsilon">,
    Option<"weightDecay", "weight-decay", "double", "-1.0",
           "Weight decay (default 0, or 0.01 for adamw as torch.optim.AdamW)">,
    Option<"returnGradients", "return-gradients", "bool", "false",
           "Also return each parameter's gradient (for testing and dumps)">,
    Option<"lossScale", "loss-scale", "std::string", "\"none\"",
           "none, dynamic (torch.amp.GradScaler: 2^16, x2 after 2000 finite "
           "steps, x0.5 and the step skipped on inf/NaN) or a fixed scale">,
    Option<"growthInterval", "growth-interval", "int64_t", "2000",
           "Dynamic loss scaling: finite steps before the scale grows">,
    Option<"initLossScale", "init-loss-scale", "double", "65536.0",
           "Dynamic loss scaling: the scale of the first step "
           "(GradScaler's init_scale)">,
  ];
}

def ScheduleUpdates : Pass<"remat-schedule-updates", "mlir::func::FuncOp"> {
  let summary = "Apply each parameter's update as soon as its gradient is complete";
  let description = [{
    A memory-aware schedule for training steps: each optimizer update (and
    the step counter it reads) moves up to right after the last op that
    defines one of its operands, so each gradient dies as soon as it is
    complete instead of all gradients living until the end of backward.
    Updates are written in place into persistent state, so an update also
    stays after every other read of the parameter and state it overwrites
    (e.g. the backward matmul that reads a weight to propagate the gradient).
    The body order is the schedule; values and results are unchanged.
  }];
}

def PlanTrainStep : Pass<"remat-plan", "mlir::ModuleOp"> {
  let summary = "Choose what to recompute under a memory budget and plan the arena";
  let description = [{
    Plans @train_step (after remat-autodiff and remat-schedule-updates):
    estimates op costs for a target, picks the rematerialization plan with the
    least estimated step time whose peak fits the budget (persistent state +
    arena + workspace), materialises it (recomputed ops are clones marked
    `remat.recompute_of`), and assigns every arena tensor a 256-byte aligned
    offset (`remat.arena_offsets`, `remat.arena_offset`, `remat.arena_bytes`).
    The plan's figures go on the function as `remat.plan` (a dictionary);
    remat-opt prints them as the report. An infeasible budget is an error
    that says what the minimum is and why.
  }];
  let dependentDialects = ["remat::RematDialect", "mlir::func::FuncDialect"];
  let options = [
    Option<"budget", "budget", "std::string", "\"\"",
           "Peak device memory: 40GB, 1.5GiB, 512MB or bytes">,
    Option<"strategy", "strategy", "std::string", "\"auto\"",
           "none, all, sqrt, milp or auto">,
    Option<"target", "target", "std::string", "\"h100\"",
           "Cost-model target: h100, h200, a100 or cpu">,
    Option<"milpSeconds", "milp-seconds", "double", "10.0",
           "Time limit of the MILP solver">,
    Option<"reportFloor", "report-floor", "bool", "false",
           "Also find the smallest budget that works (minimum_feasible_bytes) "
           "when the budget fits; it is always found when it does not">,
    Option<"costTable", "cost-table", "std::string", "\"\"",
           "JSON file of measured per-op times that replace estimates">,
    Option<"workspace", "workspace", "std::string", "\"\"",
           "Runtime workspace counted against the budget (default: 64MiB on "
           "GPU targets, 0 on cpu)">,
  ];
}

def VerifyMemoryPlan : Pass<"remat-verify-memory-plan", "mlir::func::FuncOp"> {
  let summary = "Prove that a planned function's arena offsets are safe";
  let description = [{
    Checks the static memory plan that remat-plan wrote into the IR, from
    the attributes alone (not the planner's data structures): on a function
    with `remat.arena_bytes`, every non-persistent tensor that is used has
    an offset (`remat.arena_offsets` on ops, one entry per result, -1 for
    results written in place into persistent state; `remat.arena_offset` on
    input arguments), a `remat.reshape` has its input's offset (it is a
    view), offsets are multiples of `alignment`, every tensor lies inside
    the arena, and no two tensors that are live at the same time (over the
    body order; inputs from the start, returned values to the end) overlap.
    Constants live in the persistent region and are not checked. Errors are
    reported on the op (or the function, for arguments) and name both
    tensors and their byte ranges. Functions without `remat.arena_bytes`
    are left alone. The drivers' planning pipeline runs it after remat-plan.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "256",
           "Required alignment of every arena offset, in bytes">,
  ];
}

#endif // REMAT_PASSES
