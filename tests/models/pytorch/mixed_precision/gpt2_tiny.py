"""gpt2_tiny (tests/fixtures/gpt2_tiny) as a PyTorch module, rebuilt from its ONNX graph.

The fixture is a PyTorch 1.13 export whose Python source is not in the repository. This module
writes the same computation with the modules and functions the exporter turns into exactly the
fixture's nodes, so that torch.autocast sees the same ops the original model did:

    nn.Linear on a 3-D input       Transpose(W) -> MatMul -> Add(bias, .)
    split(C, dim=2)                Split [C, C, C] on axis 2
    .masked_fill(mask, -inf)       Where(Cast(mask, BOOL), -inf, .)
    F.gelu (exact, erf)            Div(sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5
    F.linear(x, wte.weight)        the tied LM head: Transpose(wte) -> MatMul
    F.cross_entropy                SoftmaxCrossEntropyLoss (mean)

The sizes and the LayerNorm epsilon are read from the graph, and the attention scale in the graph
is checked to be 1/sqrt(head_dim) (`config_from_onnx`). `make_loss_curves.py` fills the module
with the file's initializers by name and proves that it is the export: the same loss on the
fixture's batch, the same gradients within the fixture's tolerance.
"""

import math

import numpy as np
import onnx
import onnx.numpy_helper as nph
import torch
import torch.nn as nn
import torch.nn.functional as F


def config_from_onnx(proto):
    """Sizes and constants of the export, read from its initializers and nodes."""
    inits = {i.name: i for i in proto.graph.initializer}
    vocab, d = inits["wte.weight"].dims
    seq = inits["wpe.weight"].dims[0]
    n_layers = len({name.split(".")[1] for name in inits if name.startswith("h.")})
    eps = {onnx.helper.get_attribute_value(a)
           for n in proto.graph.node if n.op_type == "LayerNormalization"
           for a in n.attribute if a.name == "epsilon"}
    if len(eps) != 1:
        raise SystemExit(f"gpt2_tiny: expected one LayerNorm epsilon, found {sorted(eps)}")
    # The q/k/v Reshape target [B, T, heads, head_dim] comes from a Constant node.
    constants = {n.output[0]: nph.to_array(n.attribute[0].t)
                 for n in proto.graph.node if n.op_type == "Constant"}
    head_shapes = [constants[n.input[1]] for n in proto.graph.node
                   if n.op_type == "Reshape" and n.input[1] in constants
                   and constants[n.input[1]].shape == (4,)]
    n_heads, hd = int(head_shapes[0][2]), int(head_shapes[0][3])
    if n_heads * hd != d:
        raise SystemExit(f"gpt2_tiny: heads {head_shapes[0]} do not split d={d}")
    scales = {float(constants[i]) for n in proto.graph.node
              if n.op_type == "Mul" and "/attn/" in n.output[0]
              for i in n.input if i in constants}
    if scales != {float(np.float32(1.0 / math.sqrt(hd)))}:
        raise SystemExit(f"gpt2_tiny: attention scales {sorted(scales)}, expected 1/sqrt({hd})")
    return dict(vocab=vocab, d=d, seq=seq, n_layers=n_layers, n_heads=n_heads,
                eps=float(eps.pop()))


class Attention(nn.Module):
    def __init__(self, d, n_heads):
        super().__init__()
        self.n_heads, self.hd = n_heads, d // n_heads
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)

    def forward(self, x, mask):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_heads, self.hd).transpose(1, 2)       # [B,H,T,hd]
        k = k.view(B, T, self.n_heads, self.hd).permute(0, 2, 3, 1)   # [B,H,hd,T]
        v = v.view(B, T, self.n_heads, self.hd).transpose(1, 2)
        att = torch.matmul(q, k) * (1.0 / math.sqrt(self.hd))
        att = att.masked_fill(mask, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d)
        self.c_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, d, n_heads, eps):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d, eps=eps)
        self.attn = Attention(d, n_heads)
        self.ln_2 = nn.LayerNorm(d, eps=eps)
        self.mlp = MLP(d)

    def forward(self, x, mask):
        x = x + self.attn(self.ln_1(x), mask)
        return x + self.mlp(self.ln_2(x))


class GPT2Tiny(nn.Module):
    """Pre-LN decoder with learned positions and the LM head tied to `wte`."""

    def __init__(self, vocab, d, seq, n_layers, n_heads, eps):
        super().__init__()
        self.vocab = vocab
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(seq, d)
        self.h = nn.ModuleList(Block(d, n_heads, eps) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d, eps=eps)
        # True above the diagonal: the positions a token may not attend to.
        self.register_buffer("causal_mask",
                             torch.ones(seq, seq, dtype=torch.bool).triu(1).view(1, 1, seq, seq))

    def forward(self, input_ids, targets):
        # The export adds the whole position table (the batch uses every position).
        x = self.wte(input_ids) + self.wpe.weight
        for block in self.h:
            x = block(x, self.causal_mask)
        logits = F.linear(self.ln_f(x), self.wte.weight)
        return F.cross_entropy(logits.reshape(-1, self.vocab), targets.reshape(-1))
