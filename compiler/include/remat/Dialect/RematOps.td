//===- RematOps.td - remat dialect operations --------------*- tablegen -*-===//
//
// Conventions:
//  - Elementwise ops broadcast numpy-style; their result type is inferred.
//  - Axes in attributes are non-negative (the importer normalises them).
//  - Ops whose result shape is a function of operands and attributes
//    implement InferTypeOpInterface, so the verifier checks results for free.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_OPS
#define REMAT_OPS

include "remat/Dialect/RematDialect.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "remat/Dialect/CostOpInterface.td"
include "remat/Dialect/DifferentiableOpInterface.td"

/// A string attribute restricted to a fixed set of values.
class Remat_StrOneOf<list<string> cases> : ConfinedAttr<StrAttr, [
    AttrConstraint<Or<!foreach(c, cases,
        CPred<"::llvm::cast<::mlir::StringAttr>($_self).getValue() == \"" # c # "\"">)>,
      "one of: " # !interleave(cases, ", ")>]>;

// Kernel properties (compiler/include/remat/Dialect/RematTraits.h).
class Remat_KernelTrait<string name> : NativeOpTrait<name> {
  let cppNamespace = "::remat";
}
def Remat_OptimizerUpdate : Remat_KernelTrait<"OptimizerUpdate">;
def Remat_InPlaceElementwise : Remat_KernelTrait<"InPlaceElementwise">;
def Remat_InPlaceRowwise : Remat_KernelTrait<"InPlaceRowwise">;

/// Ops whose FLOP count is not one per result element define getFlops()
/// (compiler/lib/Dialect/OpCosts.cpp).
def Remat_CustomFlops : DeclareOpInterfaceMethods<Remat_CostOpInterface, ["getFlops"]>;

class Remat_Op<string mnemonic, list<Trait> traits = [],
               Trait cost = Remat_CostOpInterface>
    : Op<Remat_Dialect, mnemonic, !listconcat(traits, [cost])> {
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Remat_ConstantOp : Remat_Op<"constant", [ConstantLike, Pure,
    AllTypesMatch<["value", "result"]>], Remat_CustomFlops> {
  let summary = "A small constant tensor (ONNX Constant, scalar literals)";
  let description = [{
    Holds literal data that is part of the graph (scale factors, epsilon
    tensors, masks built from literals). Model weights are never constants:
    they are function arguments.
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Remat_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Remat_UnaryOp<string mnemonic, Type operandType, list<Trait> traits = [],
                    Trait cost = Remat_CostOpInterface>
    : Remat_Op<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultType]), cost> {
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$output);
}

def Remat_NegOp : Remat_UnaryOp<"neg", Remat_ArithTensor, [Remat_InPlaceElementwise, Remat_Differentiable]> { let summary = "-x"; }
def Remat_AbsOp : Remat_UnaryOp<"abs", Remat_ArithTensor, [Remat_InPlaceElementwise, Remat_Differentiable]> { let summary = "|x|"; }
def Remat_SqrtOp : Remat_UnaryOp<"sqrt", Remat_FloatTensor, [Remat_InPlaceElementwise, Remat_Differentiable]> { let summary = "sqrt(x)"; }
def Remat_ExpOp : Remat_UnaryOp<"exp", Remat_FloatTensor, [Remat_InPlaceElementwise, Remat_Differentiable]> { let summary = "exp(x)"; }
def Remat_LogOp : Remat_UnaryOp<"log", Remat_FloatTensor, [Remat_InPlaceElementwise, Remat_Differentiable]> { let summary = "log(x)"; }
def Remat_ReciprocalOp : Remat_UnaryOp<"reciprocal", Remat_FloatTensor, [Remat_InPlaceElementwise, Remat_Differentiable]> { let summary = "1/x"; }
def Remat_ErfOp : Remat_UnaryOp<"erf", Remat_FloatTensor, [Remat_Differentiable]> { let summary = "erf(x)"; }
def Remat_TanhOp : Remat_UnaryOp<"tanh", Remat_FloatTensor, [Remat_InPlaceElementwise, Remat_Differentiable]> { let summary = "tanh(x)"; }
def Remat_SigmoidOp : Remat_UnaryOp<"sigmoid", Remat_FloatTensor, [Remat_InPlaceElementwise, Remat_Differentiable]> { let summary = "1/(1+exp(-x))"; }
def Remat_ReluOp : Remat_UnaryOp<"relu", Remat_ArithTensor, [Remat_InPlaceElementwise, Remat_Differentiable]> { let summary = "max(x, 0)"; }
def Remat_NotOp : Remat_UnaryOp<"not", Remat_BoolTensor> { let summary = "logical not"; }

def Remat_GeluOp : Remat_UnaryOp<"gelu", Remat_FloatTensor, [Remat_Differentiable],
                                 Remat_CustomFlops> {
  let summary = "GELU, exact (erf) or tanh-approximated";
  let description = [{
    `approximate = "none"`: x * Φ(x) with the exact normal CDF (PyTorch's
    default, exported as Div/Erf/Add/Mul/Mul and fused by remat-fuse-gelu);
    `"tanh"`: the tanh approximation.
  }];
  let arguments = (ins Remat_FloatTensor:$input,
                   DefaultValuedAttr<Remat_StrOneOf<["none", "tanh"]>, "\"none\"">:$approximate);
}

// Parameterised activations (ONNX's formulas and attribute defaults) and the
// trigonometric ops. Their gradients are one remat.activation_backward each.
class Remat_ActivationOp<string mnemonic>
    : Remat_UnaryOp<mnemonic, Remat_FloatTensor,
                    [Remat_InPlaceElementwise, Remat_Differentiable]>;

def Remat_LeakyReluOp : Remat_ActivationOp<"leaky_relu"> {
  let summary = "x >= 0 ? x : alpha * x";
  let arguments = (ins Remat_FloatTensor:$input,
                   DefaultValuedAttr<F64Attr, "0.01">:$alpha);
}
def Remat_EluOp : Remat_ActivationOp<"elu"> {
  let summary = "x >= 0 ? x : alpha * (exp(x) - 1)";
  let arguments = (ins Remat_FloatTensor:$input,
                   DefaultValuedAttr<F64Attr, "1.0">:$alpha);
}
def Remat_SeluOp : Remat_ActivationOp<"selu"> {
  let summary = "x > 0 ? gamma * x : gamma * alpha * (exp(x) - 1)";
  let arguments = (ins Remat_FloatTensor:$input,
                   DefaultValuedAttr<F64Attr, "1.67326319217681884765625">:$alpha,
                   DefaultValuedAttr<F64Attr, "1.05070102214813232421875">:$gamma);
}
def Remat_SoftplusOp : Remat_ActivationOp<"softplus"> { let summary = "log(1 + exp(x))"; }
def Remat_SoftsignOp : Remat_ActivationOp<"softsign"> { let summary = "x / (1 + |x|)"; }
def Remat_HardSigmoidOp : Remat_ActivationOp<"hard_sigmoid"> {
  let summary = "max(0, min(1, alpha * x + beta))";
  let arguments = (ins Remat_FloatTensor:$input,
                   DefaultValuedAttr<F64Attr, "0.2">:$alpha,
                   DefaultValuedAttr<F64Attr, "0.5">:$beta);
}
def Remat_ClipOp : Remat_ActivationOp<"clip"> {
  let summary = "min(max(x, min), max)";
  let description = [{
    ONNX Clip with compile-time bounds (an absent bound is infinite). Where
    min > max every element becomes max, as numpy.clip.
  }];
  let arguments = (ins Remat_FloatTensor:$input,
                   DefaultValuedAttr<F64Attr, "-std::numeric_limits<double>::infinity()">:$min,
                   DefaultValuedAttr<F64Attr, "std::numeric_limits<double>::infinity()">:$max);
}
def Remat_SinOp : Remat_ActivationOp<"sin"> { let summary = "sin(x)"; }
def Remat_CosOp : Remat_ActivationOp<"cos"> { let summary = "cos(x)"; }

def Remat_PReluOp : Remat_Op<"prelu", [Remat_InPlaceElementwise, Remat_Differentiable,
                                       Pure, InferTypeOpAdaptor,
                                       SameOperandsAndResultElementType]> {
  let summary = "x < 0 ? slope * x : x; slope broadcasts to x (one way)";
  let description = [{
    ONNX PRelu: the slope broadcasts unidirectionally to the input's shape
    (numpy rules), so the result has the input's type.
  }];
  let arguments = (ins Remat_FloatTensor:$input, Remat_FloatTensor:$slope);
  let results = (outs Remat_FloatTensor:$output);
}

class Remat_BinaryOp<string mnemonic, Type operandType, list<Trait> traits = []>
    : Remat_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor,
                                              SameOperandsElementType])> {
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$output);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::remat::inferBroadcastResult(loc, {adaptor.getLhs(), adaptor.getRhs()},
                                           /*resultElement=*/nullptr, types);
    }
  }];
}

def Remat_AddOp : Remat_BinaryOp<"add", Remat_ArithTensor, [Remat_InPlaceElementwise, Commutative, Remat_Differentiable]> { let summary = "a + b"; }
def Remat_SubOp : Remat_BinaryOp<"sub", Remat_ArithTensor, [Remat_InPlaceElementwise, Remat_Differentiable]> { let summary = "a - b"; }
def Remat_MulOp : Remat_BinaryOp<"mul", Remat_ArithTensor, [Remat_InPlaceElementwise, Commutative, Remat_Differentiable]> { let summary = "a * b"; }
def Remat_DivOp : Remat_BinaryOp<"div", Remat_ArithTensor, [Remat_InPlaceElementwise, Remat_Differentiable]> { let summary = "a / b (integers truncate)"; }
def Remat_MaxOp : Remat_BinaryOp<"max", Remat_ArithTensor, [Remat_InPlaceElementwise, Commutative, Remat_Differentiable]> { let summary = "max(a, b)"; }
def Remat_MinOp : Remat_BinaryOp<"min", Remat_ArithTensor, [Remat_InPlaceElementwise, Commutative, Remat_Differentiable]> { let summary = "min(a, b)"; }
def Remat_AndOp : Remat_BinaryOp<"and", Remat_BoolTensor, [Commutative]> { let summary = "a and b"; }
def Remat_OrOp : Remat_BinaryOp<"or", Remat_BoolTensor, [Commutative]> { let summary = "a or b"; }

def Remat_PowOp : Remat_Op<"pow", [Remat_InPlaceElementwise, Remat_Differentiable, Pure, InferTypeOpAdaptor]> {
  let summary = "a ^ b; the exponent may be of another (numeric) type";
  let arguments = (ins Remat_FloatTensor:$lhs, Remat_ArithTensor:$rhs);
  let results = (outs Remat_FloatTensor:$output);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::remat::inferBroadcastResult(loc, {adaptor.getLhs(), adaptor.getRhs()},
          ::llvm::cast<::mlir::ShapedType>(adaptor.getLhs().getType()).getElementType(),
          types);
    }
  }];
}

class Remat_CompareOp<string mnemonic, list<Trait> traits = []>
    : Remat_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor,
                                              SameOperandsElementType])> {
  let arguments = (ins Remat_Tensor:$lhs, Remat_Tensor:$rhs);
  let results = (outs Remat_BoolTensor:$output);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::remat::inferBroadcastResult(loc, {adaptor.getLhs(), adaptor.getRhs()},
          ::mlir::IntegerType::get(context, 1), types);
    }
  }];
}

def Remat_EqualOp : Remat_CompareOp<"equal", [Commutative]> { let summary = "a == b"; }
def Remat_LessOp : Remat_CompareOp<"less"> { let summary = "a < b"; }
def Remat_GreaterOp : Remat_CompareOp<"greater"> { let summary = "a > b"; }

def Remat_WhereOp : Remat_Op<"where", [Remat_InPlaceElementwise, Remat_Differentiable, Pure, InferTypeOpAdaptor,
    AllElementTypesMatch<["on_true", "on_false", "output"]>]> {
  let summary = "cond ? on_true : on_false, broadcasting all three";
  let arguments = (ins Remat_BoolTensor:$condition, Remat_Tensor:$on_true,
                   Remat_Tensor:$on_false);
  let results = (outs Remat_Tensor:$output);
}

def Remat_CastOp : Remat_Op<"cast", [Remat_InPlaceElementwise, Remat_Differentiable, Pure, SameOperandsAndResultShape]> {
  let summary = "element type conversion; the result type names the target";
  let arguments = (ins Remat_Tensor:$input);
  let results = (outs Remat_Tensor:$output);
  let hasFolder = 1;
}

def Remat_DropoutOp : Remat_Op<"dropout", [Remat_Differentiable, Pure, InferTypeOpAdaptor]> {
  let summary = "training-mode dropout with a counter-based RNG";
  let description = [{
    Keeps each element with probability 1 - ratio and scales kept elements
    by 1 / (1 - ratio). The mask is a function of (seed, stream, training
    step, element index) only, so recomputing the op reproduces it exactly.
    `stream` is unique per dropout op in a module (assigned at import).
    Inference-mode ONNX Dropout imports as its input.
  }];
  let arguments = (ins Remat_FloatTensor:$input, F64Attr:$ratio,
                   I64Attr:$seed, I64Attr:$stream);
  let results = (outs Remat_FloatTensor:$output, Remat_BoolTensor:$mask);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Remat_MatMulOp : Remat_Op<"matmul", [Remat_Differentiable, Pure, InferTypeOpAdaptor,
                                         SameOperandsAndResultElementType], Remat_CustomFlops> {
  let summary = "batched matrix product with broadcast batch dims";
  let description = [{
    lhs [..., M, K] (or [..., K, M] with transpose_lhs), rhs [..., K, N]
    (or [..., N, K] with transpose_rhs), result [..., M, N]. Operands have
    rank >= 2 (ONNX's 1-D promotion is expanded at import); batch dims
    broadcast numpy-style. ONNX Gemm imports as matmul, mul and add.
  }];
  let arguments = (ins Remat_FloatTensor:$lhs, Remat_FloatTensor:$rhs,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_lhs,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_rhs);
  let results = (outs Remat_FloatTensor:$output);
}

//===----------------------------------------------------------------------===//
// Normalisation and softmax
//===----------------------------------------------------------------------===//

class Remat_SoftmaxLikeOp<string mnemonic>
    : Remat_Op<mnemonic, [Pure, SameOperandsAndResultType, Remat_Differentiable,
                          Remat_InPlaceRowwise],
               Remat_CustomFlops> {
  let arguments = (ins Remat_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Remat_FloatTensor:$output);
  let hasVerifier = 1;
}
def Remat_SoftmaxOp : Remat_SoftmaxLikeOp<"softmax"> { let summary = "softmax over one axis"; }
def Remat_LogSoftmaxOp : Remat_SoftmaxLikeOp<"log_softmax"> { let summary = "log-softmax over one axis"; }

def Remat_LayerNormOp : Remat_Op<"layer_norm", [Remat_Differentiable, Pure, InferTypeOpAdaptor], Remat_CustomFlops> {
  let summary = "layer normalisation over dims [axis, rank)";
  let description = [{
    Results: the normalised output, and the mean and inverse standard
    deviation (shape: input dims before `axis`, then ones), which backward
    uses. Statistics are computed in at least fp32.
  }];
  let arguments = (ins Remat_FloatTensor:$input, Remat_FloatTensor:$scale,
                   Optional<Remat_FloatTensor>:$bias, I64Attr:$axis,
                   F64Attr:$epsilon);
  let results = (outs Remat_FloatTensor:$output, Remat_FloatTensor:$mean,
                 Remat_FloatTensor:$inv_std_dev);
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def Remat_AttentionOp : Remat_Op<"attention",
    [Remat_Differentiable, Pure, InferTypeOpAdaptor], Remat_CustomFlops> {
  let summary = "fused scaled dot-product attention (FlashAttention-style)";
  let description = [{
    output = dropout(softmax(scale * query . key^T + mask)) . value, per
    batch and head, without materialising the seq x seq scores:
    query [B, Hq, Sq, D], key [B, Hkv, Sk, D], value [B, Hkv, Sk, Dv], with
    Hq a multiple of Hkv (grouped-query attention: query head h reads key
    and value head h / (Hq / Hkv)). `mask` (optional) is additive, of the
    query's element type, and broadcasts to [B, Hq, Sq, Sk]. `causal` hides
    key j from query i when j > i (aligned top-left, as PyTorch's
    scaled_dot_product_attention and ONNX Attention). A row whose keys are
    all hidden has output 0 and logsumexp -inf.

    Results: output [B, Hq, Sq, Dv] and logsumexp [B, Hq, Sq] (at least
    fp32), the log of each row's softmax denominator, which is all the
    backward keeps of the probabilities.

    Dropout (ratio > 0) drops probabilities with the dropout op's
    counter-based RNG, element (b, h, i, j) keyed by (seed, stream, step,
    its row-major index in [B, Hq, Sq, Sk]), so the backward regenerates it.
  }];
  let arguments = (ins Remat_FloatTensor:$query, Remat_FloatTensor:$key,
                   Remat_FloatTensor:$value, Optional<Remat_FloatTensor>:$mask,
                   F64Attr:$scale, DefaultValuedAttr<BoolAttr, "false">:$causal,
                   DefaultValuedAttr<F64Attr, "0.0">:$dropout_ratio,
                   DefaultValuedAttr<I64Attr, "0">:$seed,
                   DefaultValuedAttr<I64Attr, "0">:$stream);
  let results = (outs Remat_FloatTensor:$output, Remat_FloatTensor:$logsumexp);
  let hasVerifier = 1;
}

def Remat_BatchNormInferenceOp : Remat_Op<"batch_norm_inference",
    [Remat_Differentiable, Pure, InferTypeOpAdaptor], Remat_CustomFlops> {
  let summary = "batch normalisation with running statistics (eval mode)";
  let arguments = (ins Remat_FloatTensor:$input, Remat_FloatTensor:$scale,
                   Remat_FloatTensor:$bias, Remat_FloatTensor:$running_mean,
                   Remat_FloatTensor:$running_var, F64Attr:$epsilon);
  let results = (outs Remat_FloatTensor:$output);
}

def Remat_BatchNormTrainingOp : Remat_Op<"batch_norm_training",
    [Remat_InPlaceElementwise, Remat_Differentiable, Pure, InferTypeOpAdaptor], Remat_CustomFlops> {
  let summary = "batch normalisation with batch statistics (train mode)";
  let description = [{
    Normalises with the batch mean and biased variance over all dims but 1,
    and returns the updated running statistics
    (momentum * running + (1 - momentum) * batch, as ONNX opset 15), and the
    batch mean and 1/sqrt(var + eps) that backward uses. The running
    statistics are results, not side effects, so recomputing the op cannot
    update them twice. With `unbiased_running_var`, the running variance
    tracks the unbiased batch variance, as torch.nn.BatchNorm does (the
    importer sets it for models PyTorch exported); the output is normalised
    with the biased variance either way.
  }];
  let arguments = (ins Remat_FloatTensor:$input, Remat_FloatTensor:$scale,
                   Remat_FloatTensor:$bias, Remat_FloatTensor:$running_mean,
                   Remat_FloatTensor:$running_var, F64Attr:$epsilon,
                   F64Attr:$momentum,
                   DefaultValuedAttr<BoolAttr, "false">:$unbiased_running_var);
  let results = (outs Remat_FloatTensor:$output,
                 Remat_FloatTensor:$new_running_mean,
                 Remat_FloatTensor:$new_running_var,
                 Remat_FloatTensor:$saved_mean,
                 Remat_FloatTensor:$saved_inv_std);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Remat_ReduceOp<string mnemonic>
    : Remat_Op<mnemonic, [Pure, InferTypeOpAdaptor, SameOperandsAndResultElementType,
                        Remat_Differentiable], Remat_CustomFlops> {
  let arguments = (ins Remat_ArithTensor:$input, DenseI64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Remat_ArithTensor:$output);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::remat::inferReduceResult(loc, adaptor.getInput(),
                                        adaptor.getAxes(), adaptor.getKeepdims(),
                                        types);
    }
  }];
}
def Remat_ReduceSumOp : Remat_ReduceOp<"reduce_sum"> { let summary = "sum over axes (sorted, unique)"; }

def Remat_CumSumOp : Remat_Op<"cumsum", [Pure, SameOperandsAndResultType, Remat_Differentiable]> {
  let summary = "ONNX CumSum: running sums along one axis";
  let description = [{
    result[..., j, ...] sums the input over positions <= j along `axis`
    (< j with `exclusive`; >= j or > j with `reverse`). Its gradient is the
    cumsum of dy with `reverse` flipped and the same `exclusive`.
  }];
  let arguments = (ins Remat_ArithTensor:$input, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                   DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Remat_ArithTensor:$output);
  let hasVerifier = 1;
}
def Remat_ReduceMeanOp : Remat_ReduceOp<"reduce_mean"> { let summary = "mean over axes (sorted, unique)"; }
def Remat_ReduceMaxOp : Remat_ReduceOp<"reduce_max"> { let summary = "max over axes (sorted, unique)"; }

//===----------------------------------------------------------------------===//
// Convolution and pooling: (N, C, spatial...) with 1 to 3 spatial dims.
// pads = [begin..., end...] as in ONNX.
//===----------------------------------------------------------------------===//

def Remat_ConvOp : Remat_Op<"conv", [Remat_Differentiable, Pure, InferTypeOpAdaptor], Remat_CustomFlops> {
  let summary = "grouped, strided, dilated convolution";
  let arguments = (ins Remat_FloatTensor:$input, Remat_FloatTensor:$weight,
                   Optional<Remat_FloatTensor>:$bias,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Remat_FloatTensor:$output);
}

def Remat_MaxPoolOp : Remat_Op<"max_pool", [Remat_Differentiable, Pure, InferTypeOpAdaptor], Remat_CustomFlops> {
  let summary = "max pooling; also returns the flat argmax indices";
  let arguments = (ins Remat_FloatTensor:$input,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let results = (outs Remat_FloatTensor:$output,
                 Remat_TensorOf<[I64]>:$indices);
}

def Remat_AveragePoolOp : Remat_Op<"average_pool", [Remat_Differentiable, Pure, InferTypeOpAdaptor], Remat_CustomFlops> {
  let summary = "average pooling (dilated windows as AveragePool-19)";
  let arguments = (ins Remat_FloatTensor:$input,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs Remat_FloatTensor:$output);
}

def Remat_GlobalAveragePoolOp : Remat_Op<"global_average_pool",
    [Remat_Differentiable, Pure, InferTypeOpAdaptor], Remat_CustomFlops> {
  let summary = "mean over all spatial dims, keeping them as ones";
  let arguments = (ins Remat_FloatTensor:$input);
  let results = (outs Remat_FloatTensor:$output);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Remat_ReshapeOp : Remat_Op<"reshape", [Remat_Differentiable, Pure,
    SameOperandsAndResultElementType], Remat_CustomFlops> {
  let summary = "reinterpret the shape; the result type names it";
  let description = [{
    ONNX Reshape, Flatten, Squeeze and Unsqueeze all import as reshape.
  }];
  let arguments = (ins Remat_Tensor:$input);
  let results = (outs Remat_Tensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Remat_TransposeOp : Remat_Op<"transpose", [Remat_Differentiable, Pure, InferTypeOpAdaptor], Remat_CustomFlops> {
  let summary = "permute dims: result.shape[i] = input.shape[permutation[i]]";
  let arguments = (ins Remat_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Remat_Tensor:$output);
}

def Remat_ConcatOp : Remat_Op<"concat", [Remat_Differentiable, Pure, InferTypeOpAdaptor,
                                         SameOperandsAndResultElementType], Remat_CustomFlops> {
  let summary = "concatenate along an axis";
  let arguments = (ins Variadic<Remat_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Remat_Tensor:$output);
}

def Remat_SplitOp : Remat_Op<"split", [Remat_Differentiable, Pure], Remat_CustomFlops> {
  let summary = "split along an axis; result types give the sizes";
  let arguments = (ins Remat_Tensor:$input, I64Attr:$axis);
  let results = (outs Variadic<Remat_Tensor>:$outputs);
  let hasVerifier = 1;
}

def Remat_SliceOp : Remat_Op<"slice", [Remat_Differentiable, Pure, InferTypeOpAdaptor], Remat_CustomFlops> {
  let summary = "strided slice with one (start, limit, step) per dim";
  let description = [{
    Normalised ONNX Slice: for dim d the result holds
    input[start[d] + i * step[d]] for i in [0, count), where count is
    ceil((limit - start) / step) clamped at 0. For a positive step
    0 <= start <= limit <= size; for a negative step
    -1 <= limit <= start <= size - 1.
  }];
  let arguments = (ins Remat_Tensor:$input, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$limits, DenseI64ArrayAttr:$steps);
  let results = (outs Remat_Tensor:$output);
}

def Remat_GatherOp : Remat_Op<"gather", [Remat_Differentiable, Pure, InferTypeOpAdaptor], Remat_CustomFlops> {
  let summary = "ONNX Gather: index the input along one axis";
  let description = [{
    With `padding_idx` (axis 0 only), the gather is an embedding lookup with
    torch.nn.Embedding's padding_idx: the value is unchanged, but the
    positions that read that row (by its index or its negative alias)
    contribute no gradient to it. ONNX has no such attribute and PyTorch's
    exporters drop it; the importer sets it from `--padding-idx`.
  }];
  let arguments = (ins Remat_Tensor:$input, Remat_IndexTensor:$indices,
                   I64Attr:$axis, OptionalAttr<I64Attr>:$padding_idx);
  let results = (outs Remat_Tensor:$output);
  let hasVerifier = 1;
}

def Remat_GatherElementsOp : Remat_Op<"gather_elements", [Remat_Differentiable, Pure, InferTypeOpAdaptor], Remat_CustomFlops> {
  let summary = "ONNX GatherElements: index the input elementwise along one axis";
  let description = [{
    result has the indices' shape, and result[p] is the input at p with its
    `axis` coordinate replaced by indices[p] (negative values count from the
    end). indices has the input's rank and is no larger along other dims.
  }];
  let arguments = (ins Remat_Tensor:$input, Remat_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Remat_Tensor:$output);
}

def Remat_ExpandOp : Remat_Op<"expand", [Remat_Differentiable, Pure,
    SameOperandsAndResultElementType], Remat_CustomFlops> {
  let summary = "broadcast to the result type's shape (numpy rules)";
  let arguments = (ins Remat_Tensor:$input);
  let results = (outs Remat_Tensor:$output);
  let hasVerifier = 1;
}

def Remat_PadOp : Remat_Op<"pad", [Remat_Differentiable, Pure, InferTypeOpAdaptor], Remat_CustomFlops> {
  let summary = "ONNX Pad: constant, reflect, edge or wrap padding";
  let description = [{
    `pads` holds the begin pad of every dim, then the end pad of every
    dim (the importer expands ONNX's `axes`). Negative pads crop: each dim
    is first cropped by its negative pads, then padded by its positive ones;
    reflect, edge and wrap read the cropped input (periodically where a pad
    exceeds it, as numpy.pad) and need an element left wherever they pad.
    `value` is the constant mode's fill, converted to the element type.
  }];
  let arguments = (ins Remat_Tensor:$input, DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<Remat_StrOneOf<["constant", "reflect", "edge", "wrap"]>, "\"constant\"">:$mode,
                   DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Remat_Tensor:$output);
}

def Remat_TileOp : Remat_Op<"tile", [Remat_Differentiable, Pure, InferTypeOpAdaptor], Remat_CustomFlops> {
  let summary = "ONNX Tile: repeat the input `repeats[d]` times along dim d";
  let description = [{
    result.shape[d] = input.shape[d] * repeats[d], and result[i] reads
    input[i mod input.shape]: a wrap-mode pad with no begin pads, which is
    the kernel that runs it. Its gradient sums the tiles.
  }];
  let arguments = (ins Remat_Tensor:$input, DenseI64ArrayAttr:$repeats);
  let results = (outs Remat_Tensor:$output);
}

def Remat_TriluOp : Remat_Op<"trilu", [Remat_Differentiable, Pure, SameOperandsAndResultType], Remat_CustomFlops> {
  let summary = "ONNX Trilu: keep the upper or lower triangle of the last two dims";
  let description = [{
    Element [..., i, j] is kept where j - i >= k (`upper`) or j - i <= k
    (lower), and zero elsewhere. Its gradient is the same trilu of dy.
  }];
  let arguments = (ins Remat_Tensor:$input,
                   DefaultValuedAttr<BoolAttr, "true">:$upper,
                   DefaultValuedAttr<I64Attr, "0">:$k);
  let results = (outs Remat_Tensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Remat_SoftmaxCrossEntropyLossOp : Remat_Op<"softmax_cross_entropy_loss",
    [Remat_Differentiable, Pure, InferTypeOpAdaptor, Remat_InPlaceRowwise],
    Remat_CustomFlops> {
  let summary = "ONNX SoftmaxCrossEntropyLoss (scores [N, C, d...])";
  let arguments = (ins Remat_FloatTensor:$scores, Remat_IndexTensor:$labels,
                   Optional<Remat_FloatTensor>:$weights,
                   Remat_StrOneOf<["none", "sum", "mean"]>:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Remat_FloatTensor:$loss, Remat_FloatTensor:$log_prob);
}

def Remat_NllLossOp : Remat_Op<"nll_loss", [Remat_Differentiable, Pure, InferTypeOpAdaptor], Remat_CustomFlops> {
  let summary = "ONNX NegativeLogLikelihoodLoss (input [N, C, d...])";
  let arguments = (ins Remat_FloatTensor:$input, Remat_IndexTensor:$target,
                   Optional<Remat_FloatTensor>:$weights,
                   Remat_StrOneOf<["none", "sum", "mean"]>:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Remat_FloatTensor:$loss);
}

include "remat/Dialect/RematGradOps.td"
include "remat/Dialect/RematOptimizerOps.td"
include "remat/Dialect/RematIndexingOps.td"

#endif // REMAT_OPS
