#!/usr/bin/python3
"""Generate a shape-only, Llama-7B-shaped training-loss ONNX graph (no weights).

The graph mirrors what ``torch.onnx.export`` (opset 17, ``export_params=False``)
produces for a Hugging Face ``LlamaForCausalLM`` followed by a mean
``SoftmaxCrossEntropyLoss``:

* every parameter is a graph *input* with its full static shape, named by its
  Hugging Face state-dict key and with ``doc_string`` ``role=parameter``;
* the RoPE cos/sin tables and the additive causal mask are graph inputs with
  ``doc_string`` ``role=buffer``;
* each ``Linear`` is ``Transpose(W) -> MatMul`` (Llama has no biases);
* RMSNorm is ``Pow -> ReduceMean -> Add(eps) -> Sqrt -> Div -> Mul(weight)``;
* rotary embedding is ``Slice/Neg/Concat`` (rotate_half) plus ``Mul``/``Add``
  with the cos/sin buffers;
* attention is written out: ``MatMul -> Mul(scale) -> Add(mask) -> Softmax ->
  MatMul``;
* SwiGLU is ``down(Sigmoid(gate) * gate * up)`` (SiLU as Sigmoid + Mul);
* node names are scoped the way PyTorch scopes them, e.g.
  ``/model/layers.0/self_attn/q_proj/MatMul``, so a planner can find layers.

Nothing here needs weights: the model can be planned, never run.

Usage:
    /usr/bin/python3 tools/bench/make_llama_shape.py            # full 7B, 32 layers
    /usr/bin/python3 tools/bench/make_llama_shape.py --layers 2 -o /tmp/llama2l.onnx

Needs the ``onnx`` Python package (Debian: python3-onnx) and numpy.
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_OUT = os.path.join(REPO, "tests", "models", "scale", "llama7b_shape.onnx")
INT64_MAX = np.iinfo(np.int64).max


class Builder:
    """Collects nodes with PyTorch-style scoped names (``/scope/Op_N``)."""

    def __init__(self):
        self.nodes = []
        self.inputs = []
        self.counts = {}
        self.params = 0

    def _name(self, scope, op):
        key = (scope, op)
        n = self.counts.get(key, 0)
        self.counts[key] = n + 1
        return f"{scope}/{op}" if n == 0 else f"{scope}/{op}_{n}"

    def node(self, scope, op, inputs, n_out=1, **attrs):
        name = self._name(scope, op)
        outs = [f"{name}_output_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, scope, value):
        """A scalar or 1-D constant as a ``Constant`` node, as PyTorch emits."""
        arr = np.asarray(value)
        return self.node(scope, "Constant", [], value=numpy_helper.from_array(arr))

    def add_input(self, name, elem, shape, role):
        vi = helper.make_tensor_value_info(name, elem, list(shape))
        vi.doc_string = f"role={role}"
        self.inputs.append(vi)
        if role == "parameter":
            self.params += int(np.prod(shape))
        return name

    def param(self, name, shape):
        return self.add_input(name, TensorProto.FLOAT, shape, "parameter")

    # ---- building blocks -------------------------------------------------
    def linear(self, scope, x, weight_name, out_features, in_features):
        w = self.param(weight_name, [out_features, in_features])
        wt = self.node(scope, "Transpose", [w], perm=[1, 0])
        return self.node(scope, "MatMul", [x, wt])

    def rms_norm(self, scope, x, weight_name, d, eps):
        w = self.param(weight_name, [d])
        two = self.const(scope, np.array(2.0, dtype=np.float32))
        sq = self.node(scope, "Pow", [x, two])
        var = self.node(scope, "ReduceMean", [sq], axes=[-1], keepdims=1)
        e = self.const(scope, np.array(eps, dtype=np.float32))
        ve = self.node(scope, "Add", [var, e])
        rms = self.node(scope, "Sqrt", [ve])
        xn = self.node(scope, "Div", [x, rms])
        return self.node(scope, "Mul", [w, xn])

    def rotate_half(self, scope, x, head_dim):
        half = head_dim // 2

        def sl(start, end):
            s = self.const(scope, np.array([start], dtype=np.int64))
            e = self.const(scope, np.array([end], dtype=np.int64))
            a = self.const(scope, np.array([3], dtype=np.int64))
            st = self.const(scope, np.array([1], dtype=np.int64))
            return self.node(scope, "Slice", [x, s, e, a, st])

        x1 = sl(0, half)
        x2 = sl(half, INT64_MAX)
        nx2 = self.node(scope, "Neg", [x2])
        return self.node(scope, "Concat", [nx2, x1], axis=-1)

    def rope(self, scope, x, cos, sin, head_dim):
        a = self.node(scope, "Mul", [x, cos])
        r = self.rotate_half(scope, x, head_dim)
        b = self.node(scope, "Mul", [r, sin])
        return self.node(scope, "Add", [a, b])


def build(layers=32, d_model=4096, heads=32, ffn=11008, vocab=32000, seq=2048,
          batch=1, eps=1e-6):
    head_dim = d_model // heads
    assert head_dim * heads == d_model
    b = Builder()

    ids = b.add_input("input_ids", TensorProto.INT64, [batch, seq], "data")
    tgt = b.add_input("targets", TensorProto.INT64, [batch, seq], "targets")
    cos = b.add_input("model.rotary_emb.cos_cached", TensorProto.FLOAT, [seq, head_dim], "buffer")
    sin = b.add_input("model.rotary_emb.sin_cached", TensorProto.FLOAT, [seq, head_dim], "buffer")
    mask = b.add_input("causal_mask", TensorProto.FLOAT, [1, 1, seq, seq], "buffer")

    emb = b.param("model.embed_tokens.weight", [vocab, d_model])
    h = b.node("/model/embed_tokens", "Gather", [emb, ids])

    for i in range(layers):
        L = f"/model/layers.{i}"
        P = f"model.layers.{i}"
        # --- attention block -------------------------------------------
        x = b.rms_norm(f"{L}/input_layernorm", h, f"{P}.input_layernorm.weight", d_model, eps)
        A = f"{L}/self_attn"
        q = b.linear(f"{A}/q_proj", x, f"{P}.self_attn.q_proj.weight", d_model, d_model)
        k = b.linear(f"{A}/k_proj", x, f"{P}.self_attn.k_proj.weight", d_model, d_model)
        v = b.linear(f"{A}/v_proj", x, f"{P}.self_attn.v_proj.weight", d_model, d_model)
        heads_shape = np.array([batch, seq, heads, head_dim], dtype=np.int64)

        def split_heads(t):
            t = b.node(A, "Reshape", [t, b.const(A, heads_shape)])
            return b.node(A, "Transpose", [t], perm=[0, 2, 1, 3])  # [B,H,T,Dh]

        q, k, v = split_heads(q), split_heads(k), split_heads(v)
        q = b.rope(A, q, cos, sin, head_dim)
        k = b.rope(A, k, cos, sin, head_dim)
        kt = b.node(A, "Transpose", [k], perm=[0, 1, 3, 2])
        s = b.node(A, "MatMul", [q, kt])  # [B,H,T,T]
        scale = b.const(A, np.array(1.0 / np.sqrt(head_dim), dtype=np.float32))
        s = b.node(A, "Mul", [s, scale])
        s = b.node(A, "Add", [s, mask])
        p = b.node(A, "Softmax", [s], axis=-1)
        o = b.node(A, "MatMul", [p, v])  # [B,H,T,Dh]
        o = b.node(A, "Transpose", [o], perm=[0, 2, 1, 3])
        o = b.node(A, "Reshape", [o, b.const(A, np.array([batch, seq, d_model], dtype=np.int64))])
        o = b.linear(f"{A}/o_proj", o, f"{P}.self_attn.o_proj.weight", d_model, d_model)
        h = b.node(L, "Add", [h, o])
        # --- SwiGLU MLP ---------------------------------------------------
        x = b.rms_norm(f"{L}/post_attention_layernorm", h,
                       f"{P}.post_attention_layernorm.weight", d_model, eps)
        M = f"{L}/mlp"
        g = b.linear(f"{M}/gate_proj", x, f"{P}.mlp.gate_proj.weight", ffn, d_model)
        sg = b.node(f"{M}/act_fn", "Sigmoid", [g])
        a = b.node(f"{M}/act_fn", "Mul", [g, sg])
        u = b.linear(f"{M}/up_proj", x, f"{P}.mlp.up_proj.weight", ffn, d_model)
        m = b.node(M, "Mul", [a, u])
        d = b.linear(f"{M}/down_proj", m, f"{P}.mlp.down_proj.weight", d_model, ffn)
        h = b.node(L, "Add", [h, d])

    h = b.rms_norm("/model/norm", h, "model.norm.weight", d_model, eps)
    logits = b.linear("/lm_head", h, "lm_head.weight", vocab, d_model)  # untied
    flat = b.node("", "Reshape", [logits, b.const("", np.array([batch * seq, vocab], dtype=np.int64))])
    flat_t = b.node("", "Reshape", [tgt, b.const("", np.array([batch * seq], dtype=np.int64))])
    loss_node = helper.make_node("SoftmaxCrossEntropyLoss", [flat, flat_t], ["loss"],
                                 name="/SoftmaxCrossEntropyLoss", reduction="mean",
                                 ignore_index=-100)
    b.nodes.append(loss_node)

    # Inputs in the export order: data, targets, buffers, then parameters.
    order = {"data": 0, "targets": 1, "buffer": 2, "parameter": 3}
    inputs = sorted(b.inputs, key=lambda vi: order[vi.doc_string.split("=")[1]])
    out = helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])
    graph = helper.make_graph(b.nodes, "llama_shape_loss", inputs, [out])
    graph.doc_string = (f"Llama-shaped training loss (shape-only, no weights): layers={layers} "
                        f"d_model={d_model} heads={heads} ffn={ffn} vocab={vocab} seq={seq} "
                        f"batch={batch} parameters={b.params}")
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="remat tools/bench/make_llama_shape.py")
    model.ir_version = 8
    return model, b.params


def check(model):
    onnx.checker.check_model(model, full_check=False)
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    shapes = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.output) + list(inferred.graph.input):
        t = vi.type.tensor_type
        if t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim):
            shapes[vi.name] = [d.dim_value for d in t.shape.dim]
    missing = [o for n in inferred.graph.node for o in n.output if o not in shapes]
    if missing:
        raise SystemExit(f"{len(missing)} node outputs lack a static shape, e.g. {missing[:5]}")
    return shapes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", default=None,
                    help=f"output path (default {DEFAULT_OUT} for 32 layers, "
                         "else tests/models/scale/llama7b_shape_<N>l.onnx)")
    ap.add_argument("--layers", type=int, default=32, help="decoder layers (default 32)")
    ap.add_argument("--seq", type=int, default=2048, help="sequence length (default 2048)")
    ap.add_argument("--batch", type=int, default=1, help="batch size (default 1)")
    args = ap.parse_args()

    model, params = build(layers=args.layers, seq=args.seq, batch=args.batch)
    shapes = check(model)
    out = args.output
    if out is None:
        out = DEFAULT_OUT if args.layers == 32 else DEFAULT_OUT.replace(
            ".onnx", f"_{args.layers}l.onnx")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    onnx.save(model, out)
    largest = max(shapes.items(), key=lambda kv: int(np.prod(kv[1])))
    print(f"wrote {out}: {len(model.graph.node)} nodes, {len(model.graph.input)} inputs, "
          f"{params:,} parameters, {os.path.getsize(out):,} bytes; "
          f"largest value {largest[0]} {largest[1]}", file=sys.stderr)


if __name__ == "__main__":
    main()
