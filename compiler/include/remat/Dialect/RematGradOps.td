//===- RematGradOps.td - Backward ops -----------------------*- tablegen -*-===//
//
// Ops that only appear in training steps: the backward of forward ops whose
// gradient is not a short composition of forward ops. Each maps to one
// runtime kernel (runtime/include/remat/runtime/KernelApi.inc). Ops whose
// result shape is not implied by their operands take it from the result
// type; their verifiers check it against the attributes.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_GRAD_OPS
#define REMAT_GRAD_OPS

class Remat_GradOp<string mnemonic, list<Trait> traits = []>
    : Remat_Op<mnemonic, !listconcat(traits, [Pure]), Remat_CustomFlops>;

// Remat_InPlaceElementwise on a backward op: its first result may be written
// over a dying operand of its type (compiler/include/remat/Dialect/InPlace.h);
// the CPU and CUDA kernels read each element of it before writing that
// element of the result (reductions first where there are any).

def Remat_ReluBackwardOp : Remat_GradOp<"relu_backward",
    [Remat_InPlaceElementwise, AllTypesMatch<["output", "output_grad", "input_grad"]>]> {
  let summary = "dx = y > 0 ? dy : 0 from relu's output y";
  let description = [{
    The gradient of remat.relu from its output, as PyTorch's
    threshold_backward on the result: y > 0 exactly where x > 0, so the
    forward's input need not be kept for it. The gradient is 0 where x <= 0
    (at 0 too, as PyTorch) and where y is NaN.
  }];
  let arguments = (ins Remat_FloatTensor:$output, Remat_FloatTensor:$output_grad);
  let results = (outs Remat_FloatTensor:$input_grad);
}

def Remat_GeluBackwardOp : Remat_GradOp<"gelu_backward",
    [Remat_InPlaceElementwise, AllTypesMatch<["input", "output_grad", "input_grad"]>]> {
  let summary = "dx = dy * gelu'(x)";
  let arguments = (ins Remat_FloatTensor:$input, Remat_FloatTensor:$output_grad,
                   DefaultValuedAttr<Remat_StrOneOf<["none", "tanh"]>, "\"none\"">:$approximate);
  let results = (outs Remat_FloatTensor:$input_grad);
}

def Remat_ActivationBackwardOp : Remat_GradOp<"activation_backward",
    [Remat_InPlaceElementwise, AllTypesMatch<["input", "output_grad", "input_grad"]>]> {
  let summary = "dx = dy * f'(x) for a parameterised activation f";
  let description = [{
    The backward of the remat.<activation> op named by `activation`, from
    its input x, with that op's parameters (the attributes it has, of the
    same names; the verifier requires them). At the kinks f' is PyTorch's
    one-sided derivative (runtime/include/remat/runtime/KernelApi.inc,
    activationBackward).
  }];
  let arguments = (ins Remat_FloatTensor:$input, Remat_FloatTensor:$output_grad,
                   Remat_StrOneOf<["leaky_relu", "elu", "selu", "softplus",
                                   "softsign", "hard_sigmoid", "clip", "sin",
                                   "cos"]>:$activation,
                   OptionalAttr<F64Attr>:$alpha, OptionalAttr<F64Attr>:$beta,
                   OptionalAttr<F64Attr>:$gamma, OptionalAttr<F64Attr>:$min,
                   OptionalAttr<F64Attr>:$max);
  let results = (outs Remat_FloatTensor:$input_grad);
  let hasVerifier = 1;
}

class Remat_SoftmaxBackwardLikeOp<string mnemonic, string formula>
    : Remat_GradOp<mnemonic, [Remat_InPlaceElementwise,
                              AllTypesMatch<["output", "output_grad", "input_grad"]>]> {
  let summary = formula;
  let arguments = (ins Remat_FloatTensor:$output, Remat_FloatTensor:$output_grad,
                   I64Attr:$axis);
  let results = (outs Remat_FloatTensor:$input_grad);
}
def Remat_SoftmaxBackwardOp : Remat_SoftmaxBackwardLikeOp<"softmax_backward",
    "dx = y * (dy - sum(dy * y, axis)) from the softmax output y">;
def Remat_LogSoftmaxBackwardOp : Remat_SoftmaxBackwardLikeOp<"log_softmax_backward",
    "dx = dy - exp(y) * sum(dy, axis) from the log-softmax output y">;

def Remat_AttentionBackwardOp : Remat_GradOp<"attention_backward",
    [InferTypeOpAdaptor]> {
  let summary = "attention backward, recomputing the probabilities";
  let description = [{
    The gradient of remat.attention (same operands and attributes) from its
    output, its logsumexp and the output's gradient, as FlashAttention-2:
    D = rowsum(output_grad * output), then per tile P = exp(scale * q.k^T +
    mask - logsumexp) (with the same causal hiding and dropout),
    dV = P^T.dO, dP = dO.V^T, dS = P * (dP - D), dQ = scale * dS.K,
    dK = scale * dS^T.Q. Key and value gradients of a grouped head sum over
    the query heads that read it. Results have the types of query, key and
    value.
  }];
  let arguments = (ins Remat_FloatTensor:$query, Remat_FloatTensor:$key,
                   Remat_FloatTensor:$value, Remat_FloatTensor:$output,
                   Remat_FloatTensor:$logsumexp, Remat_FloatTensor:$output_grad,
                   Optional<Remat_FloatTensor>:$mask, F64Attr:$scale,
                   DefaultValuedAttr<BoolAttr, "false">:$causal,
                   DefaultValuedAttr<F64Attr, "0.0">:$dropout_ratio,
                   DefaultValuedAttr<I64Attr, "0">:$seed,
                   DefaultValuedAttr<I64Attr, "0">:$stream);
  let results = (outs Remat_FloatTensor:$query_grad, Remat_FloatTensor:$key_grad,
                 Remat_FloatTensor:$value_grad);
  let hasVerifier = 1;
}

def Remat_LayerNormBackwardOp : Remat_GradOp<"layer_norm_backward",
    [Remat_InPlaceElementwise, InferTypeOpAdaptor]> {
  let summary = "layer_norm backward from the saved mean and 1/std";
  let description = [{
    Results: dx (input's type), and dscale, dbias with shape
    input.shape[axis:] (autodiff reduces them further when the forward scale
    or bias was broadcast).
  }];
  let arguments = (ins Remat_FloatTensor:$input, Remat_FloatTensor:$scale,
                   Remat_FloatTensor:$mean, Remat_FloatTensor:$inv_std_dev,
                   Remat_FloatTensor:$output_grad, I64Attr:$axis);
  let results = (outs Remat_FloatTensor:$input_grad, Remat_FloatTensor:$scale_grad,
                 Remat_FloatTensor:$bias_grad);
}

def Remat_BatchNormTrainingBackwardOp : Remat_GradOp<"batch_norm_training_backward",
    [Remat_InPlaceElementwise, InferTypeOpAdaptor]> {
  let summary = "batch_norm_training backward through the batch statistics";
  let arguments = (ins Remat_FloatTensor:$input, Remat_FloatTensor:$scale,
                   Remat_FloatTensor:$saved_mean, Remat_FloatTensor:$saved_inv_std,
                   Remat_FloatTensor:$output_grad);
  let results = (outs Remat_FloatTensor:$input_grad, Remat_FloatTensor:$scale_grad,
                 Remat_FloatTensor:$bias_grad);
}

def Remat_ConvBackwardDataOp : Remat_GradOp<"conv_backward_data", [Remat_Differentiable]> {
  let summary = "gradient of conv with respect to its input";
  let description = [{
    Also ONNX ConvTranspose (the transposed convolution is this op with the
    ConvTranspose input as `output_grad`), hence differentiable itself.
  }];
  let arguments = (ins Remat_FloatTensor:$output_grad, Remat_FloatTensor:$weight,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Remat_FloatTensor:$input_grad);
  let hasVerifier = 1;
}

def Remat_ConvBackwardFilterOp : Remat_GradOp<"conv_backward_filter"> {
  let summary = "gradient of conv with respect to its weight";
  let arguments = (ins Remat_FloatTensor:$input, Remat_FloatTensor:$output_grad,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Remat_FloatTensor:$weight_grad);
  let hasVerifier = 1;
}

def Remat_MaxPoolBackwardOp : Remat_GradOp<"max_pool_backward"> {
  let summary = "sum of dy at the argmax positions max_pool recorded";
  let description = [{
    dx[i] sums dy over the outputs whose recorded argmax is i. The window
    attributes are the forward's: they tell a kernel which outputs can name
    each input element, so that it can gather those instead of scattering
    (no atomics on the GPU, a fixed order).
  }];
  let arguments = (ins Remat_FloatTensor:$output_grad, Remat_TensorOf<[I64]>:$indices,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations);
  let results = (outs Remat_FloatTensor:$input_grad);
}

def Remat_AveragePoolBackwardOp : Remat_GradOp<"average_pool_backward"> {
  let summary = "spreads dy over each window with the forward's divisor";
  let arguments = (ins Remat_FloatTensor:$output_grad,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs Remat_FloatTensor:$input_grad);
}

def Remat_GatherBackwardOp : Remat_GradOp<"gather_backward"> {
  let summary = "scatter-add of dy into zeros of the gathered input's shape";
  let arguments = (ins Remat_FloatTensor:$output_grad, Remat_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Remat_FloatTensor:$input_grad);
}

def Remat_GatherElementsBackwardOp : Remat_GradOp<"gather_elements_backward"> {
  let summary = "scatter-add of dy into zeros of the input's shape at the indices";
  let arguments = (ins Remat_FloatTensor:$output_grad, Remat_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Remat_FloatTensor:$input_grad);
  let hasVerifier = 1;
}

def Remat_SliceBackwardOp : Remat_GradOp<"slice_backward"> {
  let summary = "dy written into zeros of the sliced input's shape";
  let arguments = (ins Remat_FloatTensor:$output_grad, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$steps);
  let results = (outs Remat_FloatTensor:$input_grad);
}

def Remat_PadBackwardOp : Remat_GradOp<"pad_backward"> {
  let summary = "sums dy over the output positions that read each input element";
  let description = [{
    The gradient of remat.pad for the reflect, edge and wrap modes (constant
    mode's is a slice or a cropping pad of dy). `pads` and `mode` are the
    forward's; the result type is the forward input's.
  }];
  let arguments = (ins Remat_FloatTensor:$output_grad, DenseI64ArrayAttr:$pads,
                   Remat_StrOneOf<["constant", "reflect", "edge", "wrap"]>:$mode);
  let results = (outs Remat_FloatTensor:$input_grad);
  let hasVerifier = 1;
}

def Remat_SoftmaxCrossEntropyLossBackwardOp
    : Remat_GradOp<"softmax_cross_entropy_loss_backward",
                   [Remat_InPlaceElementwise, AllTypesMatch<["log_prob", "scores_grad"]>]> {
  let summary = "(softmax - onehot) scaled by weights and the reduction";
  let arguments = (ins Remat_FloatTensor:$loss_grad, Remat_FloatTensor:$log_prob,
                   Remat_IndexTensor:$labels, Optional<Remat_FloatTensor>:$weights,
                   Remat_StrOneOf<["none", "sum", "mean"]>:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Remat_FloatTensor:$scores_grad);
}

def Remat_NllLossBackwardOp : Remat_GradOp<"nll_loss_backward"> {
  let summary = "-weight[label] scaled by the reduction at each label";
  let arguments = (ins Remat_FloatTensor:$loss_grad, Remat_IndexTensor:$target,
                   Optional<Remat_FloatTensor>:$weights,
                   Remat_StrOneOf<["none", "sum", "mean"]>:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Remat_FloatTensor:$input_grad);
}

#endif // REMAT_GRAD_OPS
