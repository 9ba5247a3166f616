#!/usr/bin/env python3
"""Selects the ONNX backend node tests (libonnx-testdata) that exercise the
ops remat supports, and lists those excluded with the reason for each.

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
    "basic_conv_without_padding", "batchnorm", "cast", "concat",
    "constant_pad", "constantofshape", "conv_with", "cumsum", "div", "dropout", "training_dropout",
    "edge_pad", "equal", "erf", "exp", "expand", "flatten", "gather", "gemm",
    "globalaveragepool", "greater", "identity", "layer_normalization", "less",
    "log", "logsoftmax", "matmul", "max", "maxpool", "min", "mul", "neg",
    "nllloss", "not", "or", "pow", "range", "reciprocal", "reduce_max",
    "reduce_mean", "reduce_sum", "reflect_pad", "relu", "reshape", "sce", "shape", "sigmoid",
    "size", "slice", "softmax", "split", "sqrt", "squeeze", "sub", "tanh",
    "tile", "tril", "triu",
    "transpose", "unsqueeze", "where", "wrap_pad",
    # ai.onnx.preview.training optimizers (Gradient's tests live in simple/,
    # see CMakeLists.txt).
    "adagrad", "adam", "momentum", "nesterov_momentum",
]

# Tests of a supported family that are excluded, each with its reason (most
# belong to another op that shares the prefix, or use a dtype outside the
# dialect).
EXCLUDED = {
    r"^gathernd": "GatherND is a different op (unsupported)",
    r"^greater_equal": "GreaterOrEqual is a different op (unsupported)",
    r"^less_equal": "LessOrEqual is a different op (unsupported)",
    r"^reduce_sum_square": "ReduceSumSquare is a different op (unsupported)",
    r"^maxunpool": "MaxUnpool is a different op (unsupported)",
    r"^identity_(opt|sequence)": "optional/sequence types are not tensors",
    r"^sub_uint8|^add_uint8|^mul_uint8|^div_uint8": "uint8 arithmetic: not a training-graph dtype",
    r"^(max|min)_(u?int8|u?int16|uint32|uint64)$": "8/16-bit and unsigned integer arithmetic: not a training-graph dtype",
    r"^(max|min)_float16$": "float16 arithmetic runs only after mixed-precision casts (the CPU kernels compute in f32/f64)",
    r"^maxpool_2d_uint8$": "uint8 pooling: not a training-graph dtype",
    r"^cast_.*STRING|^castlike": "strings are not tensors of numbers; CastLike is unsupported",
    r"^pow_types_.*uint": "unsigned exponents: not a training-graph dtype",
    r"^pow_types_int(32|64)_": "integer bases: remat.pow is defined on float bases",
    r"^pow_types_int$": "integer bases: remat.pow is defined on float bases",
    r"^split_zero_size_splits$": "zero-sized tensors are not supported",
    r"^cast_(BFLOAT16_to_FLOAT|FLOAT_to_BFLOAT16)$": "the test stores bfloat16 data as a UINT16 tensor, a dtype outside the dialect (bf16 casts are unit-tested)",
    r"^maxpool_with_argmax_2d_precomputed_strides$": "storage_order=1 (column-major argmax indices) is not supported; PyTorch never exports it",
    r"^pow_types_float$": "integer bases: remat.pow is defined on float bases",
    r"^range_.*_expanded$": "the expanded form uses Loop and Ceil (control flow is unsupported)",
    r"^adam_multiple$": "the model lacks the epsilon attribute its reference outputs were computed with (1e-2; onnx/onnx#7749, fixed upstream by #7763): the corrected model, tests/models/adam_multiple.onnx, runs on this data set instead",
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


def main():
    data_dir = sys.argv[1]
    want_excluded = "--excluded" in sys.argv
    for name in sorted(os.listdir(data_dir)):
        if not os.path.isfile(os.path.join(data_dir, name, "model.onnx")):
            continue
        selected, reason = classify(name)
        if want_excluded and reason:
            print(f"{name}\t{reason}")
        elif not want_excluded and selected:
            print(name)


if __name__ == "__main__":
    main()
