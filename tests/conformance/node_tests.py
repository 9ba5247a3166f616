#!/usr/bin/env python3
"""Selects the ONNX backend node tests that exercise the ops remat supports,
and lists those excluded with the reason for each. DATA_DIR is a `node`
directory of ONNX's test data: Debian's libonnx-testdata (ONNX 1.12,
opsets up to 17) or the `onnx` package from PyPI (tools/install-test-data.sh;
opsets up to 27).

A DATA_DIR not named `node` (pytorch-converted, pytorch-operator) holds
whole models: all are selected but those in MODEL_EXCLUDED.

  node_tests.py DATA_DIR            -> one line per selected test: NAME
  node_tests.py DATA_DIR --excluded -> one line per exclusion: NAME<TAB>REASON

Selection is by op family (the test-name prefix the ONNX generator uses), so
that a supported op's tests are run whether or not the importer accepts them:
an importer that wrongly rejects a model fails its test instead of hiding it.
"""
import os
import re
import sys

# Op families whose node tests must pass (ONNX test-name prefixes).
SUPPORTED_FAMILIES = [
    "abs", "add", "and", "averagepool", "basic_conv_with_padding",
    "basic_conv_without_padding", "batchnorm", "cast", "clip", "concat",
    "constant_pad", "constantofshape", "conv_with", "cos", "cumsum", "div",
    "dropout", "training_dropout", "edge_pad", "elu", "equal", "erf", "exp",
    "expand", "flatten", "gather", "gemm", "globalaveragepool", "greater",
    "hardsigmoid", "identity", "layer_normalization", "leakyrelu", "less",
    "log", "logsoftmax", "matmul", "max", "maxpool", "min", "mul", "neg",
    "nllloss", "not", "or", "pow", "prelu", "range", "reciprocal",
    "reduce_max", "reduce_mean", "reduce_sum", "reflect_pad", "relu",
    "reshape", "sce", "selu", "shape", "sigmoid", "sin", "size", "slice",
    "softmax", "softplus", "softsign", "split", "sqrt", "squeeze", "sub",
    "tanh", "tile", "transpose", "tril", "triu", "unsqueeze", "where",
    "wrap_pad", "gathernd", "scatternd", "resize", "upsample",
    # imported as compositions (frontends/onnx/ComposedOpImporters.cpp)
    "rms_normalization", "rotary_embedding", "castlike", "sum", "mean",
    "instancenorm", "convtranspose", "greater_equal", "less_equal", "gelu",
    "hardswish",
    # ai.onnx.preview.training optimizers (Gradient's tests live in simple/,
    # see CMakeLists.txt).
    "adagrad", "adam", "momentum", "nesterov_momentum",
]

# Tests of a supported family that are excluded, each with its reason (most
# belong to another op that shares the prefix, or use a dtype outside the
# dialect).
EXCLUDED = {
    r"^maxunpool": "MaxUnpool is a different op (unsupported)",
    r"^identity_(opt|sequence)": "optional/sequence types are not tensors",
    r"^(add|sub|mul|div|equal|greater|less|greater_equal|less_equal)_(u?int8|u?int16|uint32|uint64)(_expanded)?$": "8/16-bit and unsigned integer arithmetic: not a training-graph dtype",
    r"^equal_string": "strings are not tensors of numbers",
    r"^cast(like)?_.*(FLOAT8|FLOAT4|INT4|UINT4|INT2|UINT2|e8m0)": "float8/float4/int4/int2 storage formats (opsets 19-25) are not dialect dtypes",
    r"^reduce_max_bool_inputs$": "bool reductions (ReduceMax-20): not a training-graph value",
    r"^split_to_sequence": "the graph's output is a sequence: sequences are resolved at import and graph outputs must be tensors (SplitToSequence itself runs in tests/models/modern/sequences and onnx-simple/test_sequence_model*)",
    r"^resize_.*antialias": "antialiased downscaling (Resize-18 antialias) is refused by name: not implemented",
    r"^resize_tf_crop_and_resize": "TensorFlow's tf_crop_and_resize coordinate mode is refused by name: no PyTorch export writes it",
    r"^resize_downsample_sizes_nearest_tf_half_pixel_for_nn$": "tf_half_pixel_for_nn (Resize-11 only, a TensorFlow mode ONNX removed in opset 13) is refused by name",
    r"^(max|min)_(u?int8|u?int16|uint32|uint64)$": "8/16-bit and unsigned integer arithmetic: not a training-graph dtype",
    r"^maxpool_2d_uint8$": "uint8 pooling: not a training-graph dtype",
    r"^cast(like)?_.*STRING": "strings are not tensors of numbers",
    r"^pow_types_.*uint": "unsigned exponents: not a training-graph dtype",
    r"^split_zero_size_splits$": "zero-sized tensors are not supported",
    r"^cast(like)?_(BFLOAT16_to_FLOAT|FLOAT_to_BFLOAT16)(_expanded)?$": "the test stores bfloat16 data as a UINT16 tensor, a dtype outside the dialect (bf16 casts are unit-tested)",
    r"^maxpool_with_argmax_2d_precomputed_strides$": "storage_order=1 (column-major argmax indices) is not supported; PyTorch never exports it",
    r"^range_.*_expanded$": "the expanded form uses Loop and Ceil (control flow is unsupported)",
    r"^adam_multiple$": "the model lacks the epsilon attribute its reference outputs were computed with (1e-2; onnx/onnx#7749, fixed upstream by #7763): the corrected model, tests/models/adam_multiple.onnx, runs on this data set instead",
    r"^clip_default_int8_": "int8 tensors: not a training-graph dtype (integer Clip on int32/int64 imports as max/min)",
    r"^training_dropout(_default)?(_mask)?$": "the reference mask comes from numpy's RNG; remat's mask is Philox keyed by (seed, op, step), so only ratio 0 can match (mask statistics and reproducibility are unit-tested)",
}


def family_of(name):
    short = name[len("test_"):]
    for family in sorted(SUPPORTED_FAMILIES, key=len, reverse=True):
        if short == family or short.startswith(family + "_") or (
                re.match(re.escape(family) + r"\d", short)):
            return family
    return None


def classify(name):
    """Returns (selected, reason)."""
    short = name[len("test_"):]
    if family_of(name) is None:
        return False, None
    for pattern, reason in EXCLUDED.items():
        if re.match(pattern, short):
            return False, reason
    return True, None


# The pytorch-converted and pytorch-operator models (whole small networks
# exported by PyTorch) are all selected, except these.
MODEL_EXCLUDED = {}


def classify_model(name):
    for pattern, reason in MODEL_EXCLUDED.items():
        if re.match(pattern, name):
            return False, reason
    return True, None


def main():
    data_dir = sys.argv[1]
    want_excluded = "--excluded" in sys.argv
    whole_models = os.path.basename(os.path.normpath(data_dir)) != "node"
    for name in sorted(os.listdir(data_dir)):
        if not os.path.isfile(os.path.join(data_dir, name, "model.onnx")):
            continue
        selected, reason = classify_model(name) if whole_models else classify(name)
        if want_excluded and reason:
            print(f"{name}\t{reason}")
        elif not want_excluded and selected:
            print(name)


if __name__ == "__main__":
    main()
