//===- RematDialect.td - The remat dialect -----------------*- tablegen -*-===//
//
// The remat dialect models training graphs on builtin ranked tensors with
// static shapes. Ops mirror the ONNX operators that exported models use, with
// the shape-carrying operands of ONNX (Reshape's shape, Slice's starts, ...)
// folded into attributes or result types at import.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_DIALECT
#define REMAT_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Remat_Dialect : Dialect {
  let name = "remat";
  let summary = "Training graphs for memory-budgeted compilation";
  let description = [{
    Tensor ops with static shapes and value semantics. Function arguments
    and results carry `remat.name` (the ONNX name) and `remat.role`:
    `input`, `parameter` (trainable) or `buffer` (constant, or updated only
    by the training step itself, as BatchNorm running statistics) for
    @forward; training steps add `optimizer_state`, `step`, `loss_scale`
    (dynamic loss scaling's scale and growth tracker), and the results
    `loss` and `gradient`. Weight data stays in the model file.
  }];
  let cppNamespace = "::remat";
  let hasConstantMaterializer = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Argument / result attribute names.
    static constexpr llvm::StringLiteral kNameAttr = "remat.name";
    static constexpr llvm::StringLiteral kRoleAttr = "remat.role";
    /// Argument attribute: byte offset of an input in the arena.
    static constexpr llvm::StringLiteral kArenaOffsetAttr = "remat.arena_offset";
    /// Argument attribute: the value persistent state starts from, when
    /// not 0 (the loss scale of dynamic loss scaling).
    static constexpr llvm::StringLiteral kInitialValueAttr = "remat.initial_value";
    /// Function attribute: the model file weights are read from.
    static constexpr llvm::StringLiteral kModelPathAttr = "remat.model_path";
    /// Function attributes: the compute dtypes remat-mixed-precision chose
    /// (bf16, fp16; absent: fp32), and the loss scaling remat-autodiff built
    /// (dynamic or the fixed scale; absent: none).
    static constexpr llvm::StringLiteral kPrecisionAttr = "remat.precision";
    static constexpr llvm::StringLiteral kLossScaleAttr = "remat.loss_scale";
  }];
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Remat_Float : AnyTypeOf<[F16, BF16, F32, F64]>;
def Remat_Int : AnyTypeOf<[I1, I8, UI8, I32, I64]>;
def Remat_Element : AnyTypeOf<[F16, BF16, F32, F64, I1, I8, UI8, I32, I64]>;

// The runtime keeps shapes inline, at most 8 dims (kMaxRank in
// runtime/include/remat/runtime/InlineVector.h): the verifier refuses more,
// so a model that needs it fails at import, naming the op, not in a kernel.
def Remat_RankAtMost8 : CPred<"::llvm::cast<::mlir::ShapedType>($_self).getRank() <= 8">;
class Remat_TensorOf<list<Type> types>
    : RankedTensorOf<types, [Remat_RankAtMost8], "ranked tensor (rank <= 8)">;

def Remat_Tensor : Remat_TensorOf<[Remat_Element]>;
def Remat_FloatTensor : Remat_TensorOf<[Remat_Float]>;
def Remat_BoolTensor : Remat_TensorOf<[I1]>;
def Remat_IndexTensor : Remat_TensorOf<[I32, I64]>;
def Remat_ArithTensor : Remat_TensorOf<[F16, BF16, F32, F64, I32, I64]>;

#endif // REMAT_DIALECT
