#!/usr/bin/env python3
"""Builds the small IR-10 / opset-18+ models of tests/lit/import/modern-onnx.test.

Run with the pinned onnx of tools/install-test-data.sh:
  .cache/onnx-testdata/bin/python tests/models/modern/make_models.py
The .onnx files (a few hundred bytes each) are committed next to this script.
"""

import os

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(model, name, check=True):
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))


def tin(name, shape, dtype=T.FLOAT):
    return h.make_tensor_value_info(name, dtype, shape)


def tout(name, rank=1, dtype=T.FLOAT):
    """A graph output of known rank and unknown dims (the importer decides)."""
    return h.make_tensor_value_info(name, dtype, [f"{name}_{i}" for i in range(rank)])


def model(nodes, inputs, outputs, opset=18, ir=10, inits=(), functions=(),
          extra_opsets=()):
    graph = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(graph, ir_version=ir, functions=list(functions),
                        opset_imports=[h.make_opsetid("", opset)] +
                        [h.make_opsetid(d, v) for d, v in extra_opsets])


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


# Opset 18 reductions and Split take axes/num_outputs as PyTorch 2.x writes.
save(model([h.make_node("ReduceMean", ["x", "axes"], ["m"], name="mean", keepdims=0),
            h.make_node("ReduceSum", ["x", "axes"], ["s"], name="sum", keepdims=1),
            h.make_node("ReduceMax", ["x"], ["mx"], name="max_all", keepdims=0),
            h.make_node("Split", ["x"], ["a", "b"], name="split", axis=2, num_outputs=2),
            h.make_node("CastLike", ["a", "x"], ["c"], name="castlike")],
           [tin("x", [2, 3, 4])], [tout("m", 2), tout("s", 3), tout("mx", 0), tout("c", 3), tout("b", 3)],
           inits=[i64("axes", [1])]), "opset18_reductions.onnx")

# Split-18 with num_outputs not dividing the axis: the last chunk is smaller.
save(model([h.make_node("Split", ["x"], ["a", "b", "c"], name="split3", axis=0, num_outputs=3)],
           [tin("x", [7, 2])], [tout("a", 2), tout("b", 2), tout("c", 2)]), "split18_uneven.onnx")

# Model-local functions as the dynamo exporter writes them: a function that
# calls another, an attribute reference with a default (IR 10
# attribute_proto) and one bound by the caller, and two calls of the same
# function whose internal names must not clash.
scale = h.make_function(
    "pkg.test", "Scale", ["x"], ["y"],
    [h.make_node("Constant", [], ["k"], value_float=2.0),
     h.make_node("Mul", ["x", "k"], ["y"])],
    [h.make_opsetid("", 18)])
softmax = h.make_node("Softmax", ["t"], ["y"])
softmax.attribute.append(h.make_attribute_ref("axis", onnx.AttributeProto.INT))
act = h.make_function(
    "pkg.test", "ScaledSoftmax", ["x"], ["y"],
    [h.make_node("Scale", ["x"], ["t"], domain="pkg.test"), softmax],
    [h.make_opsetid("", 18), h.make_opsetid("pkg.test", 1)],
    attributes=[], attribute_protos=[h.make_attribute("axis", -1)])
save(model([h.make_node("ScaledSoftmax", ["x"], ["t"], domain="pkg.test", name="first"),
            h.make_node("ScaledSoftmax", ["t"], ["y"], domain="pkg.test", name="second",
                        axis=0)],
           [tin("x", [2, 3])], [tout("y", 2)], functions=[scale, act],
           extra_opsets=[("pkg.test", 1)]), "functions.onnx")

# Opset 23: Reshape, Transpose, Flatten, Unsqueeze and Shape at versions the
# linked library does not know (they only gained storage types), so the
# importer's own validation and shape rules carry the model.
save(model([h.make_node("Transpose", ["x"], ["t"], name="transpose", perm=[1, 0, 2]),
            h.make_node("Shape", ["t"], ["s"], name="shape", start=0, end=2),
            h.make_node("Concat", ["s", "minus1"], ["target"], name="concat", axis=0),
            h.make_node("Reshape", ["t", "target"], ["r"], name="reshape"),
            h.make_node("Unsqueeze", ["r", "zero"], ["u"], name="unsqueeze"),
            h.make_node("Flatten", ["u"], ["f"], name="flatten", axis=2),
            h.make_node("Relu", ["f"], ["y"], name="relu")],
           [tin("x", [2, 3, 4])], [tout("y", 2)], opset=23, ir=10,
           inits=[i64("minus1", [-1]), i64("zero", [0])]), "opset23_shapes.onnx")

# A function that calls itself.
rec = h.make_function("pkg.test", "Loop", ["x"], ["y"],
                      [h.make_node("Loop", ["x"], ["y"], domain="pkg.test")],
                      [h.make_opsetid("", 18), h.make_opsetid("pkg.test", 1)])
save(model([h.make_node("Loop", ["x"], ["y"], domain="pkg.test", name="call")],
           [tin("x", [2])], [tout("y")], functions=[rec],
           extra_opsets=[("pkg.test", 1)]), "recursive_function.onnx", check=False)

# A function whose body imports another ai.onnx opset than the model.
old = h.make_function("pkg.test", "Old", ["x"], ["y"], [h.make_node("Relu", ["x"], ["y"])],
                      [h.make_opsetid("", 13)])
save(model([h.make_node("Old", ["x"], ["y"], domain="pkg.test", name="call")],
           [tin("x", [2])], [tout("y")], functions=[old],
           extra_opsets=[("pkg.test", 1)]), "function_opset_mismatch.onnx", check=False)

# Beyond what the importer knows, and invalid by opset-18 rules.
save(model([h.make_node("Relu", ["x"], ["y"])], [tin("x", [2])], [tout("y")], opset=30),
     "opset30.onnx", check=False)
save(model([h.make_node("Relu", ["x"], ["y"])], [tin("x", [2])], [tout("y")], ir=99),
     "ir99.onnx", check=False)
save(model([h.make_node("ReduceMean", ["x"], ["y"], name="mean", axes=[0])],
           [tin("x", [2, 3])], [tout("y", 2)]), "reduce18_axes_attribute.onnx", check=False)
save(model([h.make_node("Split", ["x"], ["a", "b"], name="split", axis=0)],
           [tin("x", [4])], [tout("a"), tout("b")], opset=18), "split18_no_sizes.onnx",
     check=False)
save(model([h.make_node("FusedMatMul", ["x", "x"], ["y"], domain="com.microsoft", name="fused")],
           [tin("x", [2, 2])], [tout("y", 2)], extra_opsets=[("com.microsoft", 1)]),
     "contrib_op.onnx", check=False)

# Reference outputs from ONNX's own evaluator (onnx.reference) on the model
# inlined by ONNX's own inliner, for the models that run: remat-run, with its
# own inlining, must match them.
from onnx.inliner import inline_local_functions  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

rng = np.random.default_rng(0)
for name, shape in [("functions", (2, 3)), ("opset18_reductions", (2, 3, 4)),
                    ("split18_uneven", (7, 2)), ("opset23_shapes", (2, 3, 4))]:
    m = onnx.load(os.path.join(HERE, name + ".onnx"))
    x = rng.standard_normal(shape).astype(np.float32)
    outputs = ReferenceEvaluator(inline_local_functions(m)).run(None, {"x": x})
    ds = os.path.join(HERE, name, "test_data_set_0")
    os.makedirs(ds, exist_ok=True)
    with open(os.path.join(ds, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    for i, (value, out) in enumerate(zip(outputs, m.graph.output)):
        with open(os.path.join(ds, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(value), out.name).SerializeToString())

# Training through the opset-23 compositions: RMSNormalization -> MatMul ->
# RotaryEmbedding (3-D input, num_heads 2, position ids) -> weighted sum.
# Reference gradients by central finite differences in float64 on
# onnx.reference (independent of remat); remat-run --train checks its
# float32 gradients and one SGD step against them.
B, S, H, NH = 2, 4, 8, 2
HALF = H // NH // 2
positions = np.array([[0, 1, 2, 3], [3, 2, 1, 0]], dtype=np.int64)
angles = np.arange(6)[:, None] * (1.0 / 10000 ** (np.arange(HALF) / HALF))[None, :]
params = {"norm.scale": rng.uniform(0.5, 1.5, H), "proj.weight": rng.standard_normal((H, H)) / 3}
buffers = {"rope.cos": np.cos(angles), "rope.sin": np.sin(angles),
           "loss.weight": rng.standard_normal((B, S, H))}


def rope_model(dtype):
    np_dtype = np.float32 if dtype == T.FLOAT else np.float64
    inits = []
    for name, value in list(params.items()) + list(buffers.items()):
        t = numpy_helper.from_array(value.astype(np_dtype), name)
        t.doc_string = "role=parameter" if name in params else "role=buffer"
        inits.append(t)
    pos = numpy_helper.from_array(positions, "rope.positions")
    pos.doc_string = "role=buffer"
    inits.append(pos)
    nodes = [
        h.make_node("RMSNormalization", ["x", "norm.scale"], ["n"], name="norm", epsilon=1e-5),
        h.make_node("MatMul", ["n", "proj.weight"], ["p"], name="proj"),
        h.make_node("RotaryEmbedding", ["p", "rope.cos", "rope.sin", "rope.positions"], ["r"],
                    name="rope", num_heads=NH),
        h.make_node("Mul", ["r", "loss.weight"], ["w"], name="weigh"),
        h.make_node("ReduceSum", ["w"], ["loss"], name="loss", keepdims=0),
    ]
    return model(nodes, [tin("x", [B, S, H], dtype)], [tout("loss", 0, dtype)], opset=23,
                 inits=inits)


def write_fd_case(name, build, params, x):
    """Saves build(FLOAT) as NAME.onnx and, in NAME/, the input, the loss, and
    the float64 central-difference gradients and SGD step (lr 0.1) of every
    parameter, computed on onnx.reference with build(DOUBLE)."""
    save(build(T.FLOAT), name + ".onnx")
    ref64 = build(T.DOUBLE)

    def loss_of(values):
        m = onnx.ModelProto()
        m.CopyFrom(ref64)
        for init in m.graph.initializer:
            if init.name in values:
                init.CopyFrom(numpy_helper.from_array(values[init.name], init.name))
        return float(ReferenceEvaluator(m).run(None, {"x": x})[0])

    base = {k: v.astype(np.float64) for k, v in params.items()}
    ds = os.path.join(HERE, name)
    for sub in ("test_data_set_0", "grad", "sgd"):
        os.makedirs(os.path.join(ds, sub), exist_ok=True)
    with open(os.path.join(ds, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x.astype(np.float32), "x").SerializeToString())
    loss0 = loss_of(base)
    with open(os.path.join(ds, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(np.array(loss0, dtype=np.float32),
                                        "loss").SerializeToString())
    step = 1e-6
    for pname, value in base.items():
        grad = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            up, down = dict(base), dict(base)
            up[pname] = value.copy()
            up[pname][idx] += step
            down[pname] = value.copy()
            down[pname][idx] -= step
            grad[idx] = (loss_of(up) - loss_of(down)) / (2 * step)
        for sub, tensor in (("grad", grad), ("sgd", value - 0.1 * grad)):
            with open(os.path.join(ds, sub, pname + ".pb"), "wb") as f:
                f.write(numpy_helper.from_array(tensor.astype(np.float32),
                                                pname).SerializeToString())
    with open(os.path.join(ds, "loss.txt"), "w") as f:
        f.write(f"{loss0:.9g}\n")


write_fd_case("rms_rope_train", rope_model, params, rng.standard_normal((B, S, H)))


# ConvTranspose (stride 2, pads, output_padding, bias; onnx.reference 1.22
# mishandles groups, which the node tests cover) feeding a
# weighted sum: its gradients for the weight, the bias and, through a
# preceding 1x1 convolution, for its input.
ct_params = {"pre.weight": rng.standard_normal((4, 3, 1, 1)) / 2,
             "up.weight": rng.standard_normal((4, 6, 3, 3)) / 3,
             "up.bias": rng.standard_normal(6)}
ct_weight = rng.standard_normal((2, 6, 9, 11))


def convtranspose_model(dtype):
    np_dtype = np.float32 if dtype == T.FLOAT else np.float64
    inits = []
    for pname, value in ct_params.items():
        t = numpy_helper.from_array(value.astype(np_dtype), pname)
        t.doc_string = "role=parameter"
        inits.append(t)
    lw = numpy_helper.from_array(ct_weight.astype(np_dtype), "loss.weight")
    lw.doc_string = "role=buffer"
    inits.append(lw)
    nodes = [
        h.make_node("Conv", ["x", "pre.weight"], ["p"], name="pre"),
        h.make_node("ConvTranspose", ["p", "up.weight", "up.bias"], ["u"], name="up",
                    strides=[2, 2], pads=[1, 0, 0, 1], output_padding=[1, 1]),
        h.make_node("Mul", ["u", "loss.weight"], ["w"], name="weigh"),
        h.make_node("ReduceSum", ["w"], ["loss"], name="loss", keepdims=0),
    ]
    return model(nodes, [tin("x", [2, 3, 4, 5], dtype)], [tout("loss", 0, dtype)],
                 opset=22, inits=inits)


write_fd_case("convtranspose_train", convtranspose_model, ct_params,
              rng.standard_normal((2, 3, 4, 5)))


# Attention-23 (imported as remat.attention), with its own generator so the
# files above stay as they are.
# attention23: 4-D inputs with grouped kv heads, a boolean mask (every row
# keeps a key: onnx.reference gives NaN for a row with none) and a float
# mask, against onnx.reference. Refused features each get a model.
arng = np.random.default_rng(23)
AB, AHQ, AHKV, ASQ, ASK, AD, ADV = 2, 4, 2, 3, 5, 4, 6
keep = arng.uniform(size=(ASQ, ASK)) < 0.6
keep[:, 0] = True
save(model([h.make_node("Attention", ["q", "k", "v", "keep"], ["y"], name="attn_bool"),
            h.make_node("Attention", ["q", "k", "v", "bias"], ["z"], name="attn_bias",
                        scale=0.3)],
           [tin("q", [AB, AHQ, ASQ, AD]), tin("k", [AB, AHKV, ASK, AD]),
            tin("v", [AB, AHKV, ASK, ADV]), tin("keep", [ASQ, ASK], T.BOOL),
            tin("bias", [AB, 1, ASQ, ASK])],
           [tout("y", 4), tout("z", 4)], opset=23), "attention23.onnx")
a_inputs = {"q": arng.standard_normal((AB, AHQ, ASQ, AD)).astype(np.float32),
            "k": arng.standard_normal((AB, AHKV, ASK, AD)).astype(np.float32),
            "v": arng.standard_normal((AB, AHKV, ASK, ADV)).astype(np.float32),
            "keep": keep,
            "bias": arng.standard_normal((AB, 1, ASQ, ASK)).astype(np.float32)}
a_model = onnx.load(os.path.join(HERE, "attention23.onnx"))
a_outputs = ReferenceEvaluator(a_model).run(None, a_inputs)
a_ds = os.path.join(HERE, "attention23", "test_data_set_0")
os.makedirs(a_ds, exist_ok=True)
for i, (name, value) in enumerate(a_inputs.items()):
    with open(os.path.join(a_ds, f"input_{i}.pb"), "wb") as f:
        f.write(numpy_helper.from_array(value, name).SerializeToString())
for i, (value, out) in enumerate(zip(a_outputs, a_model.graph.output)):
    with open(os.path.join(a_ds, f"output_{i}.pb"), "wb") as f:
        f.write(numpy_helper.from_array(np.asarray(value), out.name).SerializeToString())

for name, attrs, inputs in [
        ("attention23_softcap", {"softcap": 30.0}, ["q", "k", "v"]),
        ("attention23_past_kv", {}, ["q", "k", "v", "", "k", "v"])]:
    save(model([h.make_node("Attention", inputs, ["y"], name="attn", **attrs)],
               [tin("q", [1, 2, 3, 4]), tin("k", [1, 2, 3, 4]), tin("v", [1, 2, 3, 4])],
               [tout("y", 4)], opset=23), name + ".onnx", check=False)

# attention23_train: 3-D Attention (q_num_heads 2, kv_num_heads 1, causal)
# between projections, trained: gradients and one SGD step against float64
# central differences on onnx.reference.
at_params = {"wq": arng.standard_normal((8, 8)) / 3, "wk": arng.standard_normal((8, 4)) / 3,
             "wv": arng.standard_normal((8, 4)) / 3}
at_weight = arng.standard_normal((2, 4, 8))


def attention_model(dtype):
    np_dtype = np.float32 if dtype == T.FLOAT else np.float64
    inits = []
    for pname, value in at_params.items():
        t = numpy_helper.from_array(value.astype(np_dtype), pname)
        t.doc_string = "role=parameter"
        inits.append(t)
    lw = numpy_helper.from_array(at_weight.astype(np_dtype), "loss.weight")
    lw.doc_string = "role=buffer"
    inits.append(lw)
    nodes = [
        h.make_node("MatMul", ["x", "wq"], ["q"], name="q_proj"),
        h.make_node("MatMul", ["x", "wk"], ["k"], name="k_proj"),
        h.make_node("MatMul", ["x", "wv"], ["v"], name="v_proj"),
        h.make_node("Attention", ["q", "k", "v"], ["a"], name="attn", is_causal=1,
                    q_num_heads=2, kv_num_heads=1),
        h.make_node("Mul", ["a", "loss.weight"], ["w"], name="weigh"),
        h.make_node("ReduceSum", ["w"], ["loss"], name="loss", keepdims=0),
    ]
    return model(nodes, [tin("x", [2, 4, 8], dtype)], [tout("loss", 0, dtype)],
                 opset=23, inits=inits)


write_fd_case("attention23_train", attention_model, at_params,
              arng.standard_normal((2, 4, 8)))


# indexing_train: GatherND (repeated and negative tuples), two Resizes as
# PyTorch exports them (bilinear: linear + pytorch_half_pixel, by scales;
# nearest: asymmetric + floor, by sizes, down along one dim and up along
# the other) and two ScatterNDs (none on the input, add with a repeated
# tuple), trained: gradients and one SGD step against float64 central
# differences on onnx.reference.
irng = np.random.default_rng(12)
ix_params = {"emb.weight": irng.standard_normal((5, 3)),
             "scatter.w": irng.standard_normal((2, 8)),
             "scatter.u": irng.standard_normal((3, 8))}
ix_weight = irng.standard_normal((2, 1, 4, 8))


def indexing_model(dtype):
    np_dtype = np.float32 if dtype == T.FLOAT else np.float64
    inits = []
    for pname, value in ix_params.items():
        t = numpy_helper.from_array(value.astype(np_dtype), pname)
        t.doc_string = "role=parameter"
        inits.append(t)
    lw = numpy_helper.from_array(ix_weight.astype(np_dtype), "loss.weight")
    lw.doc_string = "role=buffer"
    inits += [lw,
              i64("tokens", [[[1], [-1], [1], [0]], [[4], [2], [2], [-5]]]),
              i64("shape4", [2, 1, 4, 3]),
              i64("sizes", [2, 1, 4, 8]),
              i64("rows", [[1, 0, 3], [0, 0, -4]]),
              i64("cells", [[0, 0, 2], [1, 0, 1], [0, 0, 2]]),
              numpy_helper.from_array(np.array([1, 1, 2, 1.5], dtype=np.float32),
                                      "scales")]
    nodes = [
        h.make_node("GatherND", ["emb.weight", "tokens"], ["e"], name="embed"),
        h.make_node("Reshape", ["e", "shape4"], ["e4"], name="to4d"),
        h.make_node("Resize", ["e4", "", "scales"], ["r1"], name="bilinear",
                    mode="linear", coordinate_transformation_mode="pytorch_half_pixel"),
        h.make_node("Resize", ["r1", "", "", "sizes"], ["r2"], name="nearest",
                    mode="nearest", coordinate_transformation_mode="asymmetric",
                    nearest_mode="floor"),
        h.make_node("ScatterND", ["x", "rows", "scatter.w"], ["s1"], name="put"),
        h.make_node("Add", ["s1", "r2"], ["a"], name="add"),
        h.make_node("ScatterND", ["a", "cells", "scatter.u"], ["s2"], name="accumulate",
                    reduction="add"),
        h.make_node("Mul", ["s2", "loss.weight"], ["w"], name="weigh"),
        h.make_node("ReduceSum", ["w"], ["loss"], name="loss", keepdims=0),
    ]
    return model(nodes, [tin("x", [2, 1, 4, 8], dtype)], [tout("loss", 0, dtype)],
                 opset=18, inits=inits)


write_fd_case("indexing_train", indexing_model, ix_params,
              irng.standard_normal((2, 1, 4, 8)))


# resize_cubic_train: two cubic Resizes, an upscale by sizes at a = -0.5
# excluding outside taps (half_pixel) and a downscale by scales at ONNX's
# default a = -0.75 (align_corners), trained: gradients and one SGD step
# against float64 central differences on onnx.reference.
crng = np.random.default_rng(13)
cubic_params = {"image": crng.standard_normal((1, 2, 3, 4))}
cubic_weight = crng.standard_normal((1, 2, 3, 4))


def cubic_model(dtype):
    np_dtype = np.float32 if dtype == T.FLOAT else np.float64
    image = numpy_helper.from_array(cubic_params["image"].astype(np_dtype), "image")
    image.doc_string = "role=parameter"
    lw = numpy_helper.from_array(cubic_weight.astype(np_dtype), "loss.weight")
    lw.doc_string = "role=buffer"
    inits = [image, lw, i64("sizes", [1, 2, 7, 9]),
             numpy_helper.from_array(np.array([1, 1, 0.5, 0.5], dtype=np.float32),
                                     "scales")]
    nodes = [
        h.make_node("Add", ["image", "x"], ["a"], name="add"),
        h.make_node("Resize", ["a", "", "", "sizes"], ["up"], name="upscale",
                    mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1),
        h.make_node("Resize", ["up", "", "scales"], ["down"], name="downscale",
                    mode="cubic", coordinate_transformation_mode="align_corners"),
        h.make_node("Mul", ["down", "loss.weight"], ["w"], name="weigh"),
        h.make_node("ReduceSum", ["w"], ["loss"], name="loss", keepdims=0),
    ]
    return model(nodes, [tin("x", [1, 2, 3, 4], dtype)], [tout("loss", 0, dtype)],
                 opset=19, inits=inits)


write_fd_case("resize_cubic_train", cubic_model, cubic_params,
              crng.standard_normal((1, 2, 3, 4)))


# sequences: the sequence ops as the importer resolves them, against
# onnx.reference: SplitToSequence (a scalar split and keepdims=0),
# SequenceAt with negative positions, SequenceInsert, SequenceErase,
# SequenceLength, SequenceConstruct, SequenceEmpty and ConcatFromSequence
# (concatenating and stacking).
def i64_scalar(name, value):
    return numpy_helper.from_array(np.array(value, dtype=np.int64), name)


save(model([h.make_node("SplitToSequence", ["x", "two"], ["seq"], name="split", axis=1),
            h.make_node("SequenceAt", ["seq", "zero"], ["first"], name="first"),
            h.make_node("SequenceAt", ["seq", "minus1"], ["last"], name="last"),
            h.make_node("Relu", ["first"], ["relu"], name="relu"),
            h.make_node("SequenceInsert", ["seq", "relu", "one"], ["seq2"], name="insert"),
            h.make_node("SequenceErase", ["seq2", "minus1"], ["seq3"], name="erase"),
            h.make_node("ConcatFromSequence", ["seq3"], ["cat"], name="cat", axis=1),
            h.make_node("SequenceLength", ["seq2"], ["len"], name="length"),
            h.make_node("SequenceConstruct", ["first", "last"], ["pair"], name="pair"),
            h.make_node("ConcatFromSequence", ["pair"], ["stack"], name="stack", axis=-1,
                        new_axis=1),
            h.make_node("SequenceEmpty", [], ["empty"], name="empty"),
            h.make_node("SequenceInsert", ["empty", "last"], ["single"], name="append"),
            h.make_node("SequenceAt", ["single", "zero"], ["again"], name="again"),
            h.make_node("SplitToSequence", ["x"], ["cols"], name="columns", axis=2,
                        keepdims=0),
            h.make_node("SequenceAt", ["cols", "three"], ["col3"], name="col3")],
           [tin("x", [2, 6, 4])],
           [tout("cat", 3), tout("stack", 4), tout("len", 0, T.INT64), tout("again", 3),
            tout("col3", 2)],
           opset=18, inits=[i64_scalar("two", 2), i64_scalar("zero", 0),
                            i64_scalar("minus1", -1), i64_scalar("one", 1),
                            i64_scalar("three", 3)]),
     "sequences.onnx")
m = onnx.load(os.path.join(HERE, "sequences.onnx"))
x = np.random.default_rng(13).standard_normal((2, 6, 4)).astype(np.float32)
outputs = ReferenceEvaluator(m).run(None, {"x": x})
ds = os.path.join(HERE, "sequences", "test_data_set_0")
os.makedirs(ds, exist_ok=True)
with open(os.path.join(ds, "input_0.pb"), "wb") as f:
    f.write(numpy_helper.from_array(x, "x").SerializeToString())
for i, (value, out) in enumerate(zip(outputs, m.graph.output)):
    with open(os.path.join(ds, f"output_{i}.pb"), "wb") as f:
        f.write(numpy_helper.from_array(np.asarray(value), out.name).SerializeToString())

# Sequences the importer must refuse, each in one line naming the node: a
# position known only at run time, and a sequence as a graph output.
save(model([h.make_node("SplitToSequence", ["x"], ["seq"], name="split", axis=0),
            h.make_node("SequenceAt", ["seq", "p"], ["y"], name="pick")],
           [tin("x", [3, 2]), tin("p", [], T.INT64)], [tout("y", 1)]),
     "sequence_runtime_position.onnx")
seq_out = h.make_tensor_sequence_value_info("seq", T.FLOAT, None)
save(model([h.make_node("SplitToSequence", ["x"], ["seq"], name="split", axis=0)],
           [tin("x", [3, 2])], [seq_out]), "sequence_output.onnx")

# Resize forms: cubic (imported), and those refused by name with the reason
# (TensorFlow's crop-and-resize, antialiased downscaling).
for name, attrs in [("resize_cubic", {"mode": "cubic"}),
                    ("resize_crop", {"mode": "linear",
                                     "coordinate_transformation_mode": "tf_crop_and_resize"}),
                    ("resize_antialias", {"mode": "linear", "antialias": 1})]:
    save(model([h.make_node("Resize", ["x", "", "scales"], ["y"], name="resize", **attrs)],
               [tin("x", [1, 1, 4, 4])], [tout("y", 4)],
               inits=[numpy_helper.from_array(np.array([1, 1, 0.5, 0.5], dtype=np.float32),
                                              "scales")]),
         name + ".onnx")

# A Range whose limit is only known at run time: its length depends on
# data, which static shapes cannot express.
save(model([h.make_node("ReduceMax", ["n"], ["limit"], name="limit", keepdims=0),
            h.make_node("Range", ["zero", "limit", "one"], ["r"], name="positions")],
           [tin("n", [3], T.INT64)], [tout("r", 1, T.INT64)],
           inits=[i64_scalar("zero", 0), i64_scalar("one", 1)]),
     "range_runtime_limit.onnx")

# ReduceSumSquare, imported as ReduceSum(X * X): axes as an input (opset 18,
# a negative axis, keepdims 0), all axes, noop_with_empty_axes (X * X alone),
# the axes attribute (opset 13), and axes known only at run time (refused).
save(model([h.make_node("ReduceSumSquare", ["x", "axes"], ["s"], name="last", keepdims=0),
            h.make_node("ReduceSumSquare", ["x"], ["all"], name="all"),
            h.make_node("ReduceSumSquare", ["x"], ["sq"], name="noop", noop_with_empty_axes=1)],
           [tin("x", [2, 3, 4])], [tout("s", 2), tout("all", 3), tout("sq", 3)],
           inits=[i64("axes", [-1])]), "reduce_sum_square18.onnx")
save(model([h.make_node("ReduceSumSquare", ["x"], ["s"], name="rows", axes=[0])],
           [tin("x", [2, 3])], [tout("s", 2)], opset=13), "reduce_sum_square13.onnx")
save(model([h.make_node("ReduceSumSquare", ["x", "axes"], ["s"], name="dynamic")],
           [tin("x", [2, 3]), tin("axes", [1], T.INT64)], [tout("s", 2)]),
     "reduce_sum_square_runtime_axes.onnx")
