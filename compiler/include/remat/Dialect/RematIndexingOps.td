//===- RematIndexingOps.td - N-dimensional indexing, resampling -*- tablegen -*-===//
//
// ONNX GatherND, ScatterND and Resize, and the backward ops of GatherND and
// Resize (ScatterND's gradients are compositions of forward ops). Their
// kernels are in runtime/cpu/ScatterGather.cpp, runtime/cpu/Resize.cpp and
// the CUDA files of the same names. Included from RematOps.td, after the
// backward ops' base class.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_INDEXING_OPS
#define REMAT_INDEXING_OPS

def Remat_GatherNDOp : Remat_Op<"gather_nd",
    [Remat_Differentiable, Pure, InferTypeOpAdaptor], Remat_CustomFlops> {
  let summary = "ONNX GatherND: slices of the input named by index tuples";
  let description = [{
    indices [b..., q..., k] holds index tuples of k coordinates into the
    input's dims batch_dims .. batch_dims + k - 1 (negative values count
    from the end); the first batch_dims dims of input and indices are the
    batch and must agree. The result is indices.shape[:-1] +
    input.shape[batch_dims + k:]: each tuple's slice. Its gradient is
    remat.gather_nd_backward, a deterministic scatter-add.
  }];
  let arguments = (ins Remat_Tensor:$input, Remat_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Remat_Tensor:$output);
}

def Remat_ScatterNDOp : Remat_Op<"scatter_nd",
    [Remat_Differentiable, Pure, AllTypesMatch<["input", "output"]>],
    Remat_CustomFlops> {
  let summary = "ONNX ScatterND: the input with slices replaced or combined";
  let description = [{
    The result is the input, then for each index tuple of indices [q..., k]
    in row-major order, the slice it names (input.shape[k:]) replaced by
    (`none`) or combined with (`add`, `mul`, `max`, `min`) the tuple's slice
    of updates [q..., input.shape[k:]...]. Repeated tuples apply in that
    order. Gradients exist for `none` and `add`.
  }];
  let arguments = (ins Remat_Tensor:$input, Remat_IndexTensor:$indices,
                   Remat_Tensor:$updates,
                   DefaultValuedAttr<Remat_StrOneOf<["none", "add", "mul", "max", "min"]>, "\"none\"">:$reduction);
  let results = (outs Remat_Tensor:$output);
  let hasVerifier = 1;
}

// ONNX Resize's coordinate_transformation_mode and nearest_mode, less those
// the importer refuses.
defvar Remat_ResizeCoordinateModes = ["half_pixel", "half_pixel_symmetric",
    "pytorch_half_pixel", "align_corners", "asymmetric"];
defvar Remat_ResizeNearestModes = ["round_prefer_floor", "round_prefer_ceil",
    "floor", "ceil"];

def Remat_ResizeOp : Remat_Op<"resize", [Remat_Differentiable, Pure], Remat_CustomFlops> {
  let summary = "ONNX Resize, modes nearest, linear and cubic; the type gives the size";
  let description = [{
    Each output index o of dim d reads the input at coordinate
    f(o, scales[d]) by `coordinate_transformation_mode` (ONNX's formulas),
    the nearest index by `nearest_mode`, the two indices around it with
    linear weights (`linear`, n-linear over every dim; float types), or the
    four around it with Keys' cubic weights (`cubic`, coefficient
    `cubic_coeff_a`; with `exclude_outside`, taps outside the input weigh 0
    and the rest are renormalised; float types). Indices outside the input
    clamp to its edge. A dim of unchanged size at scale 1
    is copied. The result type holds the output size (from ONNX's scales or
    sizes); `scales` holds the scale the coordinates use.
  }];
  let arguments = (ins Remat_Tensor:$input,
                   Remat_StrOneOf<["nearest", "linear", "cubic"]>:$mode,
                   DefaultValuedAttr<Remat_StrOneOf<Remat_ResizeCoordinateModes>, "\"half_pixel\"">:$coordinate_transformation_mode,
                   DefaultValuedAttr<Remat_StrOneOf<Remat_ResizeNearestModes>, "\"round_prefer_floor\"">:$nearest_mode,
                   DenseF64ArrayAttr:$scales,
                   DefaultValuedAttr<F64Attr, "-0.75">:$cubic_coeff_a,
                   DefaultValuedAttr<BoolAttr, "false">:$exclude_outside);
  let results = (outs Remat_Tensor:$output);
  let hasVerifier = 1;
}

def Remat_GatherNDBackwardOp : Remat_GradOp<"gather_nd_backward"> {
  let summary = "scatter-add of dy into zeros of the input's shape, tuple by tuple";
  let description = [{
    The gradient of remat.gather_nd: each index tuple's slice of dy is added
    to the slice of the result it names, in the order of the tuples, so
    repeated tuples accumulate with the same bits on every backend.
  }];
  let arguments = (ins Remat_FloatTensor:$output_grad, Remat_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Remat_FloatTensor:$input_grad);
  let hasVerifier = 1;
}

def Remat_ResizeBackwardOp : Remat_GradOp<"resize_backward"> {
  let summary = "each input element's sum of dy over the outputs that read it";
  let description = [{
    The gradient of remat.resize (the forward's attributes; the result type
    is the forward input's): every input element sums dy times the weight
    with which each output read it.
  }];
  let arguments = (ins Remat_FloatTensor:$output_grad,
                   Remat_StrOneOf<["nearest", "linear", "cubic"]>:$mode,
                   DefaultValuedAttr<Remat_StrOneOf<Remat_ResizeCoordinateModes>, "\"half_pixel\"">:$coordinate_transformation_mode,
                   DefaultValuedAttr<Remat_StrOneOf<Remat_ResizeNearestModes>, "\"round_prefer_floor\"">:$nearest_mode,
                   DenseF64ArrayAttr:$scales,
                   DefaultValuedAttr<F64Attr, "-0.75">:$cubic_coeff_a,
                   DefaultValuedAttr<BoolAttr, "false">:$exclude_outside);
  let results = (outs Remat_FloatTensor:$input_grad);
  let hasVerifier = 1;
}

#endif // REMAT_INDEXING_OPS
