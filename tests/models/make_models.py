#!/usr/bin/python3
"""Builds the small ONNX models that the importer's lit tests use.

Run with Debian's python3-onnx: /usr/bin/python3 tests/models/make_models.py
The generated .onnx files (a few KB) are committed next to this script.
"""

import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = [helper.make_opsetid("", 17)]


def save(model, name, check=True):
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))


def const(name, array):
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(np.asarray(array), name))


def outv(name, rank, dtype=TensorProto.FLOAT):
    """A graph output of known rank and unknown dims (the importer decides)."""
    return helper.make_tensor_value_info(name, dtype, [None] * rank)


def weight(name, shape, role=None, seed=0):
    rng = np.random.default_rng(seed)
    t = numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
    if role:
        t.doc_string = "role=" + role
    return t


def shape_chain():
    """nn.MultiheadAttention-style head split: Shape -> Gather -> Div ->
    Unsqueeze -> Concat -> Reshape, then a Transpose; with a symbolic batch."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8, 32])
    y = outv("y", 4)
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"], name="shape"),
        const("c0", np.array(0, dtype=np.int64)),
        const("c1", np.array(1, dtype=np.int64)),
        const("c2", np.array(2, dtype=np.int64)),
        const("heads", np.array([4], dtype=np.int64)),
        const("four", np.array(4, dtype=np.int64)),
        helper.make_node("Gather", ["shape", "c0"], ["b"], name="gather_b", axis=0),
        helper.make_node("Gather", ["shape", "c1"], ["t"], name="gather_t", axis=0),
        helper.make_node("Gather", ["shape", "c2"], ["e"], name="gather_e", axis=0),
        helper.make_node("Div", ["e", "four"], ["hd"], name="div_hd"),
        helper.make_node("Unsqueeze", ["b", "axes0"], ["b1"], name="unsq_b"),
        helper.make_node("Unsqueeze", ["t", "axes0"], ["t1"], name="unsq_t"),
        helper.make_node("Unsqueeze", ["hd", "axes0"], ["hd1"], name="unsq_hd"),
        const("axes0", np.array([0], dtype=np.int64)),
        helper.make_node("Concat", ["b1", "t1", "heads", "hd1"], ["newshape"],
                         name="concat_shape", axis=0),
        helper.make_node("Reshape", ["x", "newshape"], ["r"], name="split_heads"),
        helper.make_node("Transpose", ["r"], ["y"], name="to_heads", perm=[0, 2, 1, 3]),
    ]
    # Constants must precede their users.
    nodes = [n for n in nodes if n.op_type == "Constant"] + \
            [n for n in nodes if n.op_type != "Constant"]
    graph = helper.make_graph(nodes, "shape_chain", [x], [y])
    save(helper.make_model(graph, opset_imports=OPSET), "shape_chain.onnx")


def unsupported():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = outv("y", 2)
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("Round", ["a"], ["b"], name="round"),
        helper.make_node("Relu", ["b"], ["c"], name="relu2"),
        helper.make_node("Celu", ["c"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "unsupported", [x], [y])
    save(helper.make_model(graph, opset_imports=OPSET), "unsupported.onnx")


def symbolic():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "T"])
    y = outv("y", 2)
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                              "symbolic", [x], [y])
    save(helper.make_model(graph, opset_imports=OPSET), "symbolic.onnx")


def gemm():
    """A Linear layer as exported: Gemm with transB, a role=buffer initializer
    added to the output, and an int64 shape initializer used only by Reshape."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])
    y = outv("y", 3)
    w = weight("fc.weight", [8, 16])
    b = weight("fc.bias", [8], seed=1)
    offset = weight("offset", [8], role="buffer", seed=2)
    shape = numpy_helper.from_array(np.array([2, 2, 8], dtype=np.int64), "out_shape")
    nodes = [
        helper.make_node("Gemm", ["x", "fc.weight", "fc.bias"], ["h"], name="fc",
                         transB=1, alpha=0.5),
        helper.make_node("Add", ["h", "offset"], ["h2"], name="add_offset"),
        helper.make_node("Reshape", ["h2", "out_shape"], ["y"], name="reshape"),
    ]
    graph = helper.make_graph(nodes, "gemm", [x], [y], initializer=[w, b, offset, shape])
    save(helper.make_model(graph, opset_imports=OPSET), "gemm.onnx")


def reshapes():
    """Flatten, Squeeze, Unsqueeze (opset 13 axes inputs) and Slice."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 1, 3, 4])
    outs = [outv(n, r) for n, r in [("flat", 2), ("sq", 3), ("unsq", 5), ("sl", 4)]]
    nodes = [
        const("ax1", np.array([1], dtype=np.int64)),
        const("ax_unsq", np.array([0, -1], dtype=np.int64)),
        const("starts", np.array([0, -1], dtype=np.int64)),
        const("ends", np.array([2**62, -100], dtype=np.int64)),
        const("axes", np.array([3, 2], dtype=np.int64)),
        const("steps", np.array([2, -1], dtype=np.int64)),
        helper.make_node("Flatten", ["x"], ["flat"], name="flatten", axis=2),
        helper.make_node("Squeeze", ["x", "ax1"], ["sq"], name="squeeze"),
        helper.make_node("Unsqueeze", ["sq", "ax_unsq"], ["unsq"], name="unsqueeze"),
        helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["sl"],
                         name="slice"),
    ]
    graph = helper.make_graph(nodes, "reshapes", [x], outs)
    save(helper.make_model(graph, opset_imports=OPSET), "reshapes.onnx")


def pads():
    """Pad in each mode and opset form, and a Pad whose pads are a graph
    input (an error: they must be compile-time values)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    outs = [outv(n, 3) for n in ["const", "refl", "edge", "crop", "same"]]
    nodes = [
        const("p_const", np.array([0, 1, 2, 0, 0, 3], dtype=np.int64)),
        const("value", np.array(1.5, dtype=np.float32)),
        const("p_refl", np.array([0, 2, 0, 1, 1, 0], dtype=np.int64)),
        # axes-free opset 17 form; negative pads crop.
        const("p_crop", np.array([0, -1, 1, -1, 0, -2], dtype=np.int64)),
        const("p_zero", np.zeros(6, dtype=np.int64)),
        helper.make_node("Pad", ["x", "p_const", "value"], ["const"], name="pad_const"),
        helper.make_node("Pad", ["x", "p_refl"], ["refl"], name="pad_refl",
                         mode="reflect"),
        helper.make_node("Pad", ["x", "p_refl"], ["edge"], name="pad_edge", mode="edge"),
        helper.make_node("Pad", ["x", "p_crop"], ["crop"], name="pad_crop"),
        helper.make_node("Pad", ["x", "p_zero"], ["same"], name="pad_none"),
    ]
    graph = helper.make_graph(nodes, "pads", [x], outs)
    save(helper.make_model(graph, opset_imports=OPSET), "pad.onnx")

    # Opset 2-10: pads and value are attributes.
    node = helper.make_node("Pad", ["x"], ["y"], name="pad_attr", mode="constant",
                            pads=[1, 0, 0, 0, 2, 0], value=-1.0)
    graph = helper.make_graph([node], "pad_attr", [x], [outv("y", 3)])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10)]),
         "pad_opset10.onnx")

    # Opset 19: wrap.
    nodes = [const("p", np.array([0, 0, 5, 0, 0, 1], dtype=np.int64)),
             helper.make_node("Pad", ["x", "p"], ["y"], name="pad_wrap", mode="wrap")]
    graph = helper.make_graph(nodes, "pad_wrap", [x], [outv("y", 3)])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]),
         "pad_wrap.onnx")

    # wrap before opset 19 is refused.
    graph = helper.make_graph(nodes, "pad_wrap17", [x], [outv("y", 3)])
    save(helper.make_model(graph, opset_imports=OPSET), "pad_wrap17.onnx")

    # Pads computed at run time are refused.
    p = helper.make_tensor_value_info("p", TensorProto.INT64, [6])
    node = helper.make_node("Pad", ["x", "p"], ["y"], name="pad_dynamic")
    graph = helper.make_graph([node], "pad_dynamic", [x, p], [outv("y", 3)])
    save(helper.make_model(graph, opset_imports=OPSET), "pad_dynamic.onnx")


def tiles():
    """Tile with constant repeats (one of them 1), and with repeats that are
    a graph input (an error)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    nodes = [const("reps", np.array([2, 1, 3], dtype=np.int64)),
             helper.make_node("Tile", ["x", "reps"], ["y"], name="tile")]
    graph = helper.make_graph(nodes, "tile", [x], [outv("y", 3)])
    save(helper.make_model(graph, opset_imports=OPSET), "tile.onnx")

    r = helper.make_tensor_value_info("r", TensorProto.INT64, [3])
    node = helper.make_node("Tile", ["x", "r"], ["y"], name="tile_dynamic")
    graph = helper.make_graph([node], "tile_dynamic", [x, r], [outv("y", 3)])
    save(helper.make_model(graph, opset_imports=OPSET), "tile_dynamic.onnx")


def trilus():
    """Trilu lower with a constant k, upper without k, and with k a graph
    input (an error)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    nodes = [const("k", np.array(-1, dtype=np.int64)),
             helper.make_node("Trilu", ["x", "k"], ["lower"], name="tril", upper=0),
             helper.make_node("Trilu", ["x"], ["upper"], name="triu")]
    graph = helper.make_graph(nodes, "trilu", [x], [outv("lower", 3), outv("upper", 3)])
    save(helper.make_model(graph, opset_imports=OPSET), "trilu.onnx")

    k = helper.make_tensor_value_info("k", TensorProto.INT64, [])
    node = helper.make_node("Trilu", ["x", "k"], ["y"], name="trilu_dynamic")
    graph = helper.make_graph([node], "trilu_dynamic", [x, k], [outv("y", 3)])
    save(helper.make_model(graph, opset_imports=OPSET), "trilu_dynamic.onnx")


def cumsums():
    """CumSum with a constant negative axis, and with the axis a graph input
    (an error)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    nodes = [const("axis", np.array(-2, dtype=np.int32)),
             helper.make_node("CumSum", ["x", "axis"], ["y"], name="cumsum",
                              exclusive=1, reverse=1)]
    graph = helper.make_graph(nodes, "cumsum", [x], [outv("y", 3)])
    save(helper.make_model(graph, opset_imports=OPSET), "cumsum.onnx")

    a = helper.make_tensor_value_info("a", TensorProto.INT64, [])
    node = helper.make_node("CumSum", ["x", "a"], ["y"], name="cumsum_dynamic")
    graph = helper.make_graph([node], "cumsum_dynamic", [x, a], [outv("y", 3)])
    save(helper.make_model(graph, opset_imports=OPSET), "cumsum_dynamic.onnx")


def gather_elements():
    """GatherElements along a negative axis with indices smaller than the
    data along the other dim."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])
    i = helper.make_tensor_value_info("i", TensorProto.INT64, [2, 6])
    node = helper.make_node("GatherElements", ["x", "i"], ["y"], name="ge", axis=-1)
    graph = helper.make_graph([node], "gather_elements", [x, i], [outv("y", 2)])
    save(helper.make_model(graph, opset_imports=OPSET), "gather_elements.onnx")


def shape_only():
    """Weights as graph inputs with role doc strings (export_params=False)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    x.doc_string = "role=data"
    w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 3])
    w.doc_string = "role=parameter"
    m = helper.make_tensor_value_info("mask", TensorProto.BOOL, [2, 3])
    m.doc_string = "role=buffer"
    y = outv("y", 2)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
        const("neg", np.array(-1e9, dtype=np.float32)),
        helper.make_node("Where", ["mask", "h", "neg"], ["y"], name="mask"),
    ]
    graph = helper.make_graph(nodes, "shape_only", [x, w, m], [y])
    save(helper.make_model(graph, opset_imports=OPSET), "shape_only.onnx")


def missing_shape_param():
    """A Reshape whose shape is computed from data: not known at compile time."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    s = helper.make_tensor_value_info("s", TensorProto.INT64, [2])
    y = outv("y", 2)
    nodes = [
        helper.make_node("Neg", ["s"], ["s2"], name="negate"),
        helper.make_node("Reshape", ["x", "s2"], ["y"], name="n"),
    ]
    graph = helper.make_graph(nodes, "unknown_shape", [x, s], [y])
    save(helper.make_model(graph, opset_imports=OPSET), "unknown_shape.onnx")


def external_data():
    """Initializers stored in an external file, once fine, once escaping."""
    for name, location in [("external_ok.onnx", "external_ok.bin"),
                           # tests/CMakeLists.txt: exists, but outside the
                           # model's directory.
                           ("external_escape.onnx", "../CMakeLists.txt")]:
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
        y = outv("y", 2)
        w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "w")
        shape = numpy_helper.from_array(np.array([3, 2], dtype=np.int64), "shape")
        for t, offset in [(w, 0), (shape, 64)]:
            raw = t.raw_data
            t.ClearField("raw_data")
            t.data_location = TensorProto.EXTERNAL
            for k, v in [("location", location), ("offset", str(offset)),
                         ("length", str(len(raw)))]:
                e = t.external_data.add()
                e.key, e.value = k, v
            if location == "external_ok.bin":
                mode = "r+b" if offset else "wb"
                with open(os.path.join(HERE, location), mode) as f:
                    f.seek(offset)
                    f.write(raw)
        nodes = [
            helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
            helper.make_node("Reshape", ["h", "shape"], ["y"], name="reshape"),
        ]
        graph = helper.make_graph(nodes, "external", [x], [y], initializer=[w, shape])
        save(helper.make_model(graph, opset_imports=OPSET), name, check=False)


def truncated():
    with open(os.path.join(HERE, "gemm.onnx"), "rb") as f:
        data = f.read()
    with open(os.path.join(HERE, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])
    with open(os.path.join(HERE, "not_onnx.onnx"), "wb") as f:
        f.write(b"this is not a protobuf\xff\xff\xff")


def dropout_softmax():
    """Training-mode Dropout (two of them get distinct streams), an opset-11
    Softmax coerced to 2-D, and ReduceMean."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    outs = [outv(n, r) for n, r in [("d1", 3), ("d2", 3), ("mean", 2)]]
    nodes = [
        const("ratio", np.array(0.1, dtype=np.float32)),
        const("train", np.array(True)),
        helper.make_node("Dropout", ["x", "ratio", "train"], ["d1"], name="drop1", seed=7),
        helper.make_node("Dropout", ["d1", "ratio", "train"], ["d2", "m2"], name="drop2"),
        helper.make_node("ReduceMean", ["d2"], ["mean"], name="mean", axes=[-1], keepdims=0),
    ]
    graph = helper.make_graph(nodes, "dropout", [x], outs)
    save(helper.make_model(graph, opset_imports=OPSET), "dropout.onnx")

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    y = outv("y", 3)
    graph = helper.make_graph(
        [helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=1)],
        "softmax11", [x], [y])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]),
         "softmax_opset11.onnx")


def conv_pool():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 9, 9])
    y = outv("y", 4)
    w = weight("conv.weight", [4, 3, 3, 3])
    scale = weight("bn.weight", [4], seed=1)
    bias = weight("bn.bias", [4], seed=2)
    mean = weight("bn.running_mean", [4], role="buffer", seed=3)
    var = numpy_helper.from_array(np.ones(4, dtype=np.float32), "bn.running_var")
    var.doc_string = "role=buffer"
    nodes = [
        helper.make_node("Conv", ["x", "conv.weight"], ["c"], name="conv",
                         auto_pad="SAME_UPPER", strides=[2, 2]),
        helper.make_node("BatchNormalization",
                         ["c", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"],
                         ["bn", "new_mean", "new_var"], name="bn", training_mode=1),
        helper.make_node("MaxPool", ["bn"], ["p"], name="pool", kernel_shape=[2, 2],
                         ceil_mode=1, strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["y"], name="gap"),
    ]
    graph = helper.make_graph(nodes, "conv", [x],
                              [y, outv("new_mean", 1)],
                              initializer=[w, scale, bias, mean, var])
    save(helper.make_model(graph, opset_imports=OPSET), "conv_bn.onnx")


def activations():
    """LeakyRelu, Elu, Selu, Softplus, Softsign, HardSigmoid, Sin, Cos, PRelu
    and Clip (opset 13: bounds as inputs) in one chain, with some parameters
    given and some left at their defaults; Clip in its other forms; and the
    models the importer must refuse."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    slope = weight("prelu.slope", [3], seed=7)
    nodes = [
        helper.make_node("LeakyRelu", ["x"], ["a1"], name="leaky", alpha=0.2),
        helper.make_node("LeakyRelu", ["a1"], ["a2"], name="leaky_default"),
        helper.make_node("Elu", ["a2"], ["a3"], name="elu", alpha=0.5),
        helper.make_node("Selu", ["a3"], ["a4"], name="selu"),
        helper.make_node("Softplus", ["a4"], ["a5"], name="softplus"),
        helper.make_node("Softsign", ["a5"], ["a6"], name="softsign"),
        helper.make_node("HardSigmoid", ["a6"], ["a7"], name="hard_sigmoid",
                         alpha=0.25, beta=0.4),
        helper.make_node("Sin", ["a7"], ["a8"], name="sin"),
        helper.make_node("Cos", ["a8"], ["a9"], name="cos"),
        helper.make_node("PRelu", ["a9", "prelu.slope"], ["a10"], name="prelu"),
        const("lo", np.array(0.125, dtype=np.float32)),
        const("hi", np.array(0.875, dtype=np.float32)),
        helper.make_node("Clip", ["a10", "lo", "hi"], ["a11"], name="clip"),
        helper.make_node("Clip", ["a11", "", "hi"], ["y"], name="clip_max_only"),
    ]
    graph = helper.make_graph(nodes, "activations", [x], [outv("y", 2)],
                              initializer=[slope])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
         "activations.onnx")

    # Constant inputs of the parameterless ones fold at import.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    nodes = [
        const("angles", np.array([0, np.pi / 2], dtype=np.float32)),
        helper.make_node("Sin", ["angles"], ["s"], name="sin"),
        helper.make_node("Softsign", ["s"], ["c"], name="softsign"),
        helper.make_node("Add", ["x", "c"], ["y"], name="add"),
    ]
    graph = helper.make_graph(nodes, "fold", [x], [outv("y", 1)])
    save(helper.make_model(graph, opset_imports=OPSET), "activations_fold.onnx")

    # Opset 10: the bounds are attributes; without them they are float's
    # lowest and max (the schema's defaults), which clip infinities.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    nodes = [
        helper.make_node("Clip", ["x"], ["a"], name="clip", min=-1.0, max=2.0),
        helper.make_node("Clip", ["x"], ["b"], name="clip_default"),
    ]
    graph = helper.make_graph(nodes, "clip10", [x], [outv("a", 2), outv("b", 2)])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10)]),
         "clip_opset10.onnx")
    inf = np.float32(np.inf)
    xv = np.array([[-3, -1, 0.5, 2], [2.5, -inf, inf, -0.25]], dtype=np.float32)
    fmax = np.finfo(np.float32).max
    save_data_set(os.path.join(HERE, "clip_opset10", "test_data_set_0"), [("x", xv)],
                  [("a", np.minimum(np.maximum(xv, -1), 2)),
                   ("b", np.minimum(np.maximum(xv, -fmax), fmax))])

    # Integer Clip (opset 12+) is a max and a min.
    x = helper.make_tensor_value_info("x", TensorProto.INT64, [4])
    nodes = [
        const("lo", np.array(-2, dtype=np.int64)),
        const("hi", np.array(3, dtype=np.int64)),
        helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="clip"),
    ]
    graph = helper.make_graph(nodes, "clip_int", [x], [outv("y", 1, TensorProto.INT64)])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
         "clip_int.onnx")
    xv = np.array([-(2**40), -2, 0, 2**40], dtype=np.int64)
    save_data_set(os.path.join(HERE, "clip_int", "test_data_set_0"), [("x", xv)],
                  [("y", np.clip(xv, -2, 3))])

    # A bound that is a graph input has no compile-time value.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    lo = helper.make_tensor_value_info("lo", TensorProto.FLOAT, [])
    graph = helper.make_graph([helper.make_node("Clip", ["x", "lo"], ["y"], name="clip")],
                              "clip_dynamic", [x, lo], [outv("y", 1)])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
         "clip_dynamic.onnx")


def activations_train():
    """A small MLP through every new activation, with a scalar loss: the
    generated executable must train it exactly as remat-run does
    (tests/codegen), and remat-run's forward loss must match numpy's."""
    rng = np.random.default_rng(9)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 6])
    target = helper.make_tensor_value_info("target", TensorProto.FLOAT, [8, 4])
    inits = [weight("fc1.weight", [6, 10], seed=10), weight("fc1.bias", [10], seed=11),
             weight("prelu.slope", [10], seed=12), weight("fc2.weight", [10, 10], seed=13),
             weight("fc3.weight", [10, 4], seed=14)]
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h1"], name="fc1"),
        helper.make_node("PRelu", ["h1", "prelu.slope"], ["a1"], name="prelu"),
        helper.make_node("Selu", ["a1"], ["a2"], name="selu"),
        helper.make_node("MatMul", ["a2", "fc2.weight"], ["h2"], name="fc2"),
        helper.make_node("HardSigmoid", ["h2"], ["a3"], name="hard_sigmoid", alpha=0.3),
        helper.make_node("Softplus", ["a3"], ["a4"], name="softplus"),
        helper.make_node("Softsign", ["a4"], ["a5"], name="softsign"),
        helper.make_node("Sin", ["h2"], ["s"], name="sin"),
        helper.make_node("Cos", ["h2"], ["c"], name="cos"),
        helper.make_node("Add", ["a5", "s"], ["a6"], name="add_sin"),
        helper.make_node("Add", ["a6", "c"], ["a7"], name="add_cos"),
        const("lo", np.array(-0.5, dtype=np.float32)),
        const("hi", np.array(1.5, dtype=np.float32)),
        helper.make_node("Clip", ["a7", "lo", "hi"], ["a8"], name="clip"),
        helper.make_node("LeakyRelu", ["a8"], ["a9"], name="leaky", alpha=0.1),
        helper.make_node("Elu", ["a9"], ["a10"], name="elu", alpha=0.8),
        helper.make_node("MatMul", ["a10", "fc3.weight"], ["out"], name="fc3"),
        helper.make_node("Sub", ["out", "target"], ["d"], name="diff"),
        helper.make_node("Mul", ["d", "d"], ["sq"], name="square"),
        helper.make_node("ReduceMean", ["sq"], ["loss"], name="loss", keepdims=0),
    ]
    graph = helper.make_graph(nodes, "activations_train", [x, target], [outv("loss", 0)],
                              initializer=inits)
    directory = os.path.join(HERE, "activations_train", "loss")
    os.makedirs(directory, exist_ok=True)
    onnx.checker.check_model(helper.make_model(graph, opset_imports=OPSET))
    onnx.save(helper.make_model(graph, opset_imports=OPSET),
              os.path.join(directory, "model.onnx"))

    xv = rng.standard_normal([8, 6]).astype(np.float32)
    tv = rng.standard_normal([8, 4]).astype(np.float32)
    w = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in inits}
    h1 = xv.astype(np.float64) @ w["fc1.weight"] + w["fc1.bias"]
    a1 = np.where(h1 < 0, w["prelu.slope"] * h1, h1)
    sa, sg = 1.67326319217681884765625, 1.05070102214813232421875
    a2 = np.where(a1 > 0, sg * a1, sg * (sa * np.exp(a1) - sa))
    h2 = a2 @ w["fc2.weight"]
    a3 = np.clip(np.float64(np.float32(0.3)) * h2 + 0.5, 0, 1)
    a5 = np.log1p(np.exp(a3))
    a5 = a5 / (1 + np.abs(a5))
    a8 = np.clip(a5 + np.sin(h2) + np.cos(h2), -0.5, 1.5)
    a9 = np.where(a8 >= 0, a8, np.float64(np.float32(0.1)) * a8)
    a10 = np.where(a9 >= 0, a9, np.float64(np.float32(0.8)) * (np.exp(a9) - 1))
    loss = np.mean((a10 @ w["fc3.weight"] - tv) ** 2)
    save_data_set(os.path.join(directory, "test_data_set_0"),
                  [("x", xv), ("target", tv)],
                  [("loss", np.array(loss, dtype=np.float32))])


def gelu():
    """Gelu (opset 20) in both forms, with a float64 reference data set; and
    the Gelu models the importer refuses. ONNX 1.12 predates Gelu, so its
    checker cannot check these (remat registers the schema itself)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])
    nodes = [
        helper.make_node("Gelu", ["x"], ["y"], name="gelu"),
        helper.make_node("Gelu", ["x"], ["t"], name="gelu_tanh", approximate="tanh"),
    ]
    graph = helper.make_graph(nodes, "gelu", [x], [outv("y", 2), outv("t", 2)])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]),
         "gelu_opset20.onnx", check=False)
    xv = np.random.default_rng(8).uniform(-4, 4, [3, 4]).astype(np.float32)
    x64 = xv.astype(np.float64)
    erf = np.vectorize(math.erf)(x64 / math.sqrt(2))
    k = math.sqrt(2 / math.pi)
    save_data_set(os.path.join(HERE, "gelu_opset20", "test_data_set_0"), [("x", xv)],
                  [("y", (0.5 * x64 * (1 + erf)).astype(np.float32)),
                   ("t", (0.5 * x64 * (1 + np.tanh(k * (x64 + 0.044715 * x64**3))))
                    .astype(np.float32))])

    graph = helper.make_graph(nodes[:1], "gelu17", [x], [outv("y", 2)])
    save(helper.make_model(graph, opset_imports=OPSET), "gelu_opset17.onnx", check=False)
    bad = helper.make_node("Gelu", ["x"], ["y"], name="gelu", approximate="fast")
    graph = helper.make_graph([bad], "gelu_bad", [x], [outv("y", 2)])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]),
         "gelu_bad_approximate.onnx", check=False)


TRAINING = "ai.onnx.preview.training"
TRAINING_OPSET = [helper.make_opsetid("", 17), helper.make_opsetid(TRAINING, 1)]


def save_data_set(directory, inputs, outputs):
    """Writes input_<i>.pb / output_<i>.pb (the ONNX backend-test layout)."""
    os.makedirs(directory, exist_ok=True)
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for i, (name, array) in enumerate(tensors):
            with open(os.path.join(directory, f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(array, name).SerializeToString())


def onnx_pad(x, pads, mode, value=0.0):
    """ONNX Pad with numpy: negative pads crop first, then numpy.pad."""
    rank = x.ndim
    crop = tuple(slice(max(0, -pads[d]), x.shape[d] - max(0, -pads[rank + d]))
                 for d in range(rank))
    widths = [(max(0, pads[d]), max(0, pads[rank + d])) for d in range(rank)]
    if mode == "constant":
        return np.pad(x[crop], widths, mode="constant", constant_values=value)
    return np.pad(x[crop], widths, mode=mode)


def datamove():
    """A training model through Pad (every mode, cropping), Tile, CumSum,
    Trilu and GatherElements, with the loss of its first data set computed
    by numpy (the generated-code and interpreter tests train it)."""
    rng = np.random.default_rng(7)
    w = rng.standard_normal((6, 5)).astype(np.float32) * 0.5
    x = rng.standard_normal((4, 6)).astype(np.float32)
    idx = rng.integers(-12, 12, (6, 7)).astype(np.int64)
    labels = np.array([1, 5, 0, 6, 3, 2], dtype=np.int64)
    pads = {"edge": [0, 1, 0, 2], "reflect": [1, 3, -1, 2],
            "constant": [-1, 0, 0, -4], "wrap": [0, 2, 0, 1]}
    nodes = [
        const("p_edge", np.array(pads["edge"], dtype=np.int64)),
        const("p_refl", np.array(pads["reflect"], dtype=np.int64)),
        const("p_const", np.array(pads["constant"], dtype=np.int64)),
        const("value", np.array(0.5, dtype=np.float32)),
        const("p_wrap", np.array(pads["wrap"], dtype=np.int64)),
        const("reps", np.array([2, 1], dtype=np.int64)),
        const("axis", np.array(1, dtype=np.int64)),
        const("k", np.array(1, dtype=np.int64)),
        helper.make_node("MatMul", ["x", "w"], ["h"], name="matmul"),
        helper.make_node("Pad", ["h", "p_edge"], ["a"], name="pad_edge", mode="edge"),
        helper.make_node("Pad", ["a", "p_refl"], ["b"], name="pad_reflect",
                         mode="reflect"),
        helper.make_node("Pad", ["b", "p_const", "value"], ["c"], name="pad_crop"),
        helper.make_node("Pad", ["c", "p_wrap"], ["d"], name="pad_wrap", mode="wrap"),
        helper.make_node("Tile", ["d", "reps"], ["t"], name="tile"),
        helper.make_node("CumSum", ["t", "axis"], ["cs"], name="cumsum", reverse=1),
        helper.make_node("Trilu", ["cs", "k"], ["tr"], name="tril", upper=0),
        helper.make_node("GatherElements", ["tr", "idx"], ["logits"],
                         name="gather_elements", axis=1),
        helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "labels"], ["loss"],
                         name="loss"),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6]),
              helper.make_tensor_value_info("idx", TensorProto.INT64, [6, 7]),
              helper.make_tensor_value_info("labels", TensorProto.INT64, [6])]
    graph = helper.make_graph(
        nodes, "datamove", inputs,
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        initializer=[numpy_helper.from_array(w, "w")])
    directory = os.path.join(HERE, "datamove", "loss")
    os.makedirs(directory, exist_ok=True)
    # Opset 19 for Pad's wrap mode.
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 8
    save(model, os.path.join("datamove", "loss", "model.onnx"))

    # The reference forward.
    h = x @ w
    a = onnx_pad(h, pads["edge"], "edge")
    b = onnx_pad(a, pads["reflect"], "reflect")
    c = onnx_pad(b, pads["constant"], "constant", 0.5)
    d = onnx_pad(c, pads["wrap"], "wrap")
    t = np.tile(d, (2, 1))
    cs = np.flip(np.cumsum(np.flip(t, 1), 1), 1)
    tr = np.tril(cs, 1)
    logits = np.take_along_axis(tr, np.where(idx < 0, idx + tr.shape[1], idx), 1)
    z = logits - logits.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    loss = np.array(-logp[np.arange(6), labels].mean(), dtype=np.float32)
    save_data_set(os.path.join(directory, "test_data_set_0"),
                  [("x", x), ("idx", idx), ("labels", labels)], [("loss", loss)])


def training_gradient():
    """An ai.onnx.preview.training Gradient node: d sum(tanh(x @ W + b)) with
    respect to W, b and an input u that does not reach the loss (x is a zs
    tensor), plus a reference data set. A second model asks for a
    second-order gradient through Softmax, whose backward op has no gradient
    rule."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    u = helper.make_tensor_value_info("u", TensorProto.FLOAT, [4])
    w = weight("W", [3, 4], seed=4)
    b = weight("b", [4], seed=5)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["xw"], name="matmul"),
        helper.make_node("Add", ["xw", "b"], ["h"], name="bias"),
        helper.make_node("Tanh", ["h"], ["t"], name="tanh"),
        helper.make_node("ReduceSum", ["t"], ["loss"], name="loss", keepdims=0),
        helper.make_node("Gradient", ["W", "b", "u", "x"], ["dW", "db", "du"],
                         name="grad", domain=TRAINING,
                         xs=["W", "b", "u"], zs=["x"], y="loss"),
    ]
    outs = [outv("loss", 0), outv("dW", 2), outv("db", 1), outv("du", 1)]
    graph = helper.make_graph(nodes, "gradient", [x, u], outs, initializer=[w, b])
    save(helper.make_model(graph, opset_imports=TRAINING_OPSET), "training_gradient.onnx")

    rng = np.random.default_rng(6)
    xv = rng.standard_normal([2, 3]).astype(np.float32)
    uv = rng.standard_normal([4]).astype(np.float32)
    wv, bv = numpy_helper.to_array(w), numpy_helper.to_array(b)
    t = np.tanh(xv @ wv + bv)
    dh = 1 - t * t
    save_data_set(os.path.join(HERE, "training_gradient", "test_data_set_0"),
                  [("x", xv), ("u", uv)],
                  [("loss", np.array(t.sum(), dtype=np.float32)),
                   ("dW", (xv.T @ dh).astype(np.float32)),
                   ("db", dh.sum(0).astype(np.float32)),
                   ("du", np.zeros(4, dtype=np.float32))])

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    nodes = [
        helper.make_node("Softmax", ["x"], ["s"], name="softmax", axis=-1),
        helper.make_node("ReduceMax", ["s"], ["m"], name="max", keepdims=0),
        helper.make_node("Gradient", ["x"], ["dx"], name="grad1", domain=TRAINING,
                         xs=["x"], y="m"),
        helper.make_node("ReduceSum", ["dx"], ["g"], name="sum", keepdims=0),
        helper.make_node("Gradient", ["x"], ["ddx"], name="grad2", domain=TRAINING,
                         xs=["x"], y="g"),
    ]
    graph = helper.make_graph(nodes, "second_order", [x], [outv("ddx", 2)])
    save(helper.make_model(graph, opset_imports=TRAINING_OPSET), "training_gradient_no_rule.onnx")


def training_optimizers():
    """Adam, Adagrad and both Momentum modes in one graph at step T = 3 (the
    ONNX backend tests only cover T = 0), with every coefficient non-zero,
    plus a reference data set computed from the ONNX pseudo code."""
    nc, ncp, alpha, beta, eps, decay = 0.01, 0.02, 0.9, 0.99, 1e-3, 0.1
    shapes = {"adam": [2, 3], "adagrad": [3], "mom": [4], "nes": [2, 2]}
    state = {"adam": ["V", "H"], "adagrad": ["H"], "mom": ["V"], "nes": ["V"]}
    inputs = [helper.make_tensor_value_info("R", TensorProto.FLOAT, []),
              helper.make_tensor_value_info("T", TensorProto.INT64, [])]
    rng = np.random.default_rng(7)
    r, t = np.array(0.05, dtype=np.float32), np.array(3, dtype=np.int64)
    values = [("R", r), ("T", t)]
    arrays = {}
    for key, shape in shapes.items():
        for v in ["X", "G"] + state[key]:
            name = f"{v}_{key}"
            a = rng.standard_normal(shape).astype(np.float32)
            if v == "H":
                a = np.abs(a)
            arrays[name] = a
            values.append((name, a))
            inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))

    def names(key, vs):
        return [f"{v}_{key}" for v in vs]

    nodes = [
        helper.make_node("Adam", ["R", "T"] + names("adam", "XGVH"),
                         names("adam", ["Xn", "Vn", "Hn"]), name="adam", domain=TRAINING,
                         norm_coefficient=nc, norm_coefficient_post=ncp, alpha=alpha,
                         beta=beta, epsilon=eps),
        helper.make_node("Adagrad", ["R", "T"] + names("adagrad", "XGH"),
                         names("adagrad", ["Xn", "Hn"]), name="adagrad", domain=TRAINING,
                         norm_coefficient=nc, decay_factor=decay, epsilon=eps),
        helper.make_node("Momentum", ["R", "T"] + names("mom", "XGV"),
                         names("mom", ["Xn", "Vn"]), name="momentum", domain=TRAINING,
                         norm_coefficient=nc, alpha=alpha, beta=0.5, mode="standard"),
        helper.make_node("Momentum", ["R", "T"] + names("nes", "XGV"),
                         names("nes", ["Xn", "Vn"]), name="nesterov", domain=TRAINING,
                         norm_coefficient=nc, alpha=alpha, beta=0.5, mode="nesterov"),
    ]
    out_names = [o for n in nodes for o in n.output]
    outs = [outv(o, len(shapes[o.split("_")[1]])) for o in out_names]
    graph = helper.make_graph(nodes, "optimizers", inputs, outs)
    save(helper.make_model(graph, opset_imports=TRAINING_OPSET), "training_optimizers.onnx")

    # The ONNX pseudo code, in float64.
    a = {k: v.astype(np.float64) for k, v in arrays.items()}
    r64, t64 = float(r), int(t)
    f32 = lambda v: np.float32(v)  # noqa: E731 (the attributes are stored as float)
    nc, ncp, alpha, beta, eps, decay = map(lambda v: float(f32(v)),
                                           (nc, ncp, alpha, beta, eps, decay))
    half = float(f32(0.5))
    res = {}
    g = nc * a["X_adam"] + a["G_adam"]
    v = alpha * a["V_adam"] + (1 - alpha) * g
    h = beta * a["H_adam"] + (1 - beta) * g * g
    ra = r64 * np.sqrt(1 - beta ** t64) / (1 - alpha ** t64) if t64 > 0 else r64
    res["Xn_adam"] = (1 - ncp) * (a["X_adam"] - ra * v / (np.sqrt(h) + eps))
    res["Vn_adam"], res["Hn_adam"] = v, h
    g = nc * a["X_adagrad"] + a["G_adagrad"]
    h = a["H_adagrad"] + g * g
    res["Xn_adagrad"] = a["X_adagrad"] - (r64 / (1 + t64 * decay)) * g / (np.sqrt(h) + eps)
    res["Hn_adagrad"] = h
    for key in ("mom", "nes"):
        g = nc * a["X_" + key] + a["G_" + key]
        v = alpha * a["V_" + key] + (half if t64 > 0 else 1.0) * g
        step = g + alpha * v if key == "nes" else v
        res["Xn_" + key], res["Vn_" + key] = a["X_" + key] - r64 * step, v
    save_data_set(os.path.join(HERE, "training_optimizers", "test_data_set_0"), values,
                  [(o, res[o].astype(np.float32)) for o in out_names])

    # An opset the importer does not know (the checker rejects it too).
    graph = helper.make_graph(nodes[:1], "opset2", inputs[:2] + inputs[2:6], outs[:3])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                 helper.make_opsetid(TRAINING, 2)]),
         "training_opset2.onnx", check=False)


def adam_multiple():
    """The ONNX backend test test_adam_multiple as fixed upstream (onnx/onnx
    PR #7763): the installed model lacks the epsilon = 1e-2 that its
    reference outputs were computed with. Runs on the installed data set."""
    names = ["X1", "X2", "G1", "G2", "V1", "V2", "H1", "H2"]
    shapes = {"1": [1], "2": [2]}
    inputs = [helper.make_tensor_value_info("R", TensorProto.FLOAT, []),
              helper.make_tensor_value_info("T", TensorProto.INT64, [])]
    inputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, shapes[n[1]])
               for n in names]
    outputs = ["X1_new", "X2_new", "V1_new", "V2_new", "H1_new", "H2_new"]
    node = helper.make_node("Adam", ["R", "T"] + names, outputs, domain=TRAINING,
                            norm_coefficient=0.001, alpha=0.95, beta=0.85,
                            epsilon=1e-2)
    graph = helper.make_graph(
        [node], "test_adam_multiple", inputs,
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, shapes[o[1]])
         for o in outputs])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid(TRAINING, 1)]),
         "adam_multiple.onnx")


if __name__ == "__main__":
    shape_chain()
    unsupported()
    symbolic()
    gemm()
    reshapes()
    pads()
    tiles()
    trilus()
    cumsums()
    gather_elements()
    datamove()
    shape_only()
    missing_shape_param()
    external_data()
    truncated()
    dropout_softmax()
    conv_pool()
    training_gradient()
    training_optimizers()
    adam_multiple()
    activations()
    activations_train()
    gelu()
