#!/usr/bin/env python3
"""Export tiny random-weight configurations of real architectures (Hugging Face transformers,
torchvision) to ONNX with a cross-entropy loss appended, with PyTorch's reference training step.

Run by hand (not by CI), from the repository root, in a virtual environment that has the pinned
packages listed in README.md beside this file (CPU only, about a minute per model):

    python tests/models/hf/export_models.py                 # all models
    python tests/models/hf/export_models.py gpt2 resnet50   # some of them

It rewrites tests/models/hf/<model>/ in the layout of tests/models/pytorch/ (see README.md there):

    <model>/loss/model.onnx                   torch.onnx.export(dynamo=True), exporter defaults
    <model>/loss_dynamo_noopt/model.onnx      torch.onnx.export(dynamo=True, optimize=False)
    <model>/loss_torchscript/model.onnx       torch.onnx.export(dynamo=False,
                                              training=TrainingMode.TRAINING), other defaults
    <model>/<variant>/test_data_set_0/        input_<i>.pb (data..., targets), output_0.pb (loss)
    <model>/reference/grad|sgd|adam/<param>.pb
    <model>/reference/buffers/<buffer>.pb     BatchNorm running statistics after the step
    <model>/manifest.json, manifest.tsv

Every model is wrapped as loss = F.cross_entropy(logits, targets) (mean, in the graph). The
wrapper's `net.` prefix is stripped from the initializer names, so the names are the wrapped
model's state_dict keys (a tied weight gets the name of its first state_dict key, i.e. the
name in named_parameters()). Initializers that are no state_dict entry (constants made by the
exporter or its optimizer) are marked `role=buffer` and listed in the manifest.

Dropout probabilities are 0, attention is "eager", and every 1-D parameter (biases, norm
weights) gets N(0, 0.02) noise on top of the library's init: the dynamo exporter's optimizer
merges initializers of equal value (all the zero biases, all the unit norm weights) into one,
which would make parameters disappear for a reason real checkpoints do not have.
"""

import collections
import copy
import json
import os
import platform
import shutil
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper as nph
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
SGD_LR = 0.1
ADAM = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
BATCH, SEQ = 2, 16
VOCAB = 64
IMAGE = 48

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
warnings.filterwarnings("ignore")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


# ----------------------------------------------------------------------------------------------
# The loss wrapper. `forward_fn(wrapper, *data)` returns the logits; the wrapper flattens them to
# [N, classes] and takes the mean cross-entropy against the targets (the last input).
# ----------------------------------------------------------------------------------------------

class LossModel(nn.Module):
    def __init__(self, net, forward_fn, n_classes):
        super().__init__()
        self.net = net
        self.forward_fn = forward_fn
        self.n_classes = n_classes
        # TorchScript fallback for the HF text models: pass an all-ones attention_mask (what a
        # tokenizer returns for unpadded text); the loss is unchanged.
        self.with_attention_mask = False

    def forward(self, *args):
        *data, targets = args
        logits = self.forward_fn(self, *data)
        return F.cross_entropy(logits.reshape(-1, self.n_classes), targets.reshape(-1))


def ones_mask(w, ids):
    return torch.ones_like(ids) if w.with_attention_mask else None


def perturb_1d(net, seed):
    """N(0, 0.02) noise on every 1-D parameter (biases, norm weights)."""
    g = torch.Generator().manual_seed(seed)
    names = []
    with torch.no_grad():
        for n, p in net.named_parameters():
            if p.dim() <= 1:
                p.add_(torch.randn(p.shape, generator=g) * 0.02)
                names.append(n)
    return names


def token_data(vocab, seed=1):
    g = torch.Generator().manual_seed(seed)
    seq = torch.randint(0, vocab, (BATCH, SEQ + 1), generator=g)
    return seq[:, :-1].contiguous(), seq[:, 1:].contiguous()


def hf_config_dict(cfg):
    d = cfg.to_diff_dict() if hasattr(cfg, "to_diff_dict") else cfg.to_dict()
    return {k: v for k, v in sorted(d.items())
            if isinstance(v, (int, float, str, bool, type(None), list))}


# ----------------------------------------------------------------------------------------------
# Models.
# ----------------------------------------------------------------------------------------------

def make_gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel
    vocab = VOCAB
    cfg = GPT2Config(vocab_size=vocab, n_positions=SEQ, n_embd=32, n_layer=2, n_head=2,
                     n_inner=64, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                     use_cache=False, bos_token_id=0, eos_token_id=0,
                     attn_implementation="eager")
    torch.manual_seed(0)
    net = GPT2LMHeadModel(cfg)
    ids, targets = token_data(vocab)
    return dict(
        net=net, cfg=cfg, data=[("input_ids", ids)], targets=targets, n_classes=vocab,
        forward_fn=lambda w, ids: w.net(input_ids=ids, attention_mask=ones_mask(w, ids)).logits,
        text=True,
        description=("transformers GPT2LMHeadModel: vocab 64, n_positions 16, n_embd 32, 2 "
                     "layers, 2 heads, n_inner 64, gelu_new, LM head tied to wte; batch 2, seq "
                     "16; targets = next tokens; loss over all B*T positions"),
        changes=["resid_pdrop = embd_pdrop = attn_pdrop = 0.0 (defaults 0.1)",
                 "attn_implementation = eager", "use_cache = False",
                 "bos_token_id = eos_token_id = 0 (default 50256 is outside the tiny vocab)"])


def make_llama():
    from transformers import LlamaConfig, LlamaForCausalLM
    vocab = VOCAB
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=32, intermediate_size=64,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=SEQ, attention_dropout=0.0, rms_norm_eps=1e-5,
                      tie_word_embeddings=False, use_cache=False, bos_token_id=0,
                      eos_token_id=0, pad_token_id=None, attn_implementation="eager")
    torch.manual_seed(0)
    net = LlamaForCausalLM(cfg)
    ids, targets = token_data(vocab)
    return dict(
        net=net, cfg=cfg, data=[("input_ids", ids)], targets=targets, n_classes=vocab,
        forward_fn=lambda w, ids: w.net(input_ids=ids, attention_mask=ones_mask(w, ids)).logits,
        text=True,
        description=("transformers LlamaForCausalLM: vocab 64, hidden 32, 2 layers, 4 query "
                     "heads / 2 key-value heads (GQA, head dim 8), SwiGLU intermediate 64, "
                     "RMSNorm, rotary embeddings (theta 10000, inv_freq a non-persistent buffer), "
                     "untied LM head; batch 2, seq 16; targets = next tokens; loss over all "
                     "B*T positions"),
        changes=["attention_dropout = 0.0 (the default)", "attn_implementation = eager",
                 "use_cache = False", "bos/eos token ids 0 (inside the tiny vocab)"])


def make_bert():
    from transformers import BertConfig, BertForSequenceClassification
    vocab, n_classes = VOCAB, 4
    cfg = BertConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=SEQ,
                     type_vocab_size=2, hidden_dropout_prob=0.0,
                     attention_probs_dropout_prob=0.0, num_labels=n_classes, pad_token_id=0,
                     attn_implementation="eager")
    torch.manual_seed(0)
    net = BertForSequenceClassification(cfg)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, vocab, (BATCH, SEQ), generator=g)
    targets = torch.randint(0, n_classes, (BATCH,), generator=g)
    return dict(
        net=net, cfg=cfg, data=[("input_ids", ids)], targets=targets, n_classes=n_classes,
        forward_fn=lambda w, ids: w.net(input_ids=ids, attention_mask=ones_mask(w, ids)).logits,
        text=True,
        description=("transformers BertForSequenceClassification: vocab 64, hidden 32, 2 "
                     "layers, 2 heads, intermediate 64, max_position 16, 2 token types "
                     "(token_type_ids and position_ids default to buffers), post-LN, erf GELU, "
                     "pooler Linear+Tanh on [CLS], 4 classes; batch 2, seq 16"),
        changes=["hidden_dropout_prob = attention_probs_dropout_prob = 0.0 (defaults 0.1; the "
                 "classifier dropout follows hidden_dropout_prob)",
                 "attn_implementation = eager"])


def make_vit():
    from transformers import ViTConfig, ViTForImageClassification
    n_classes = 10
    cfg = ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=32,
                    num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                    num_labels=n_classes, attn_implementation="eager")
    torch.manual_seed(0)
    net = ViTForImageClassification(cfg)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(BATCH, 3, 32, 32, generator=g)
    targets = torch.randint(0, n_classes, (BATCH,), generator=g)
    return dict(
        net=net, cfg=cfg, data=[("pixel_values", x)], targets=targets, n_classes=n_classes,
        forward_fn=lambda w, x: w.net(pixel_values=x).logits, text=False,
        description=("transformers ViTForImageClassification: 32x32x3 images, 8x8 patches "
                     "(Conv 3->32, stride 8: 16 patches + [CLS]), hidden 32, 2 layers, 2 "
                     "heads, intermediate 64, pre-LN, learned position embeddings, classifier "
                     "on [CLS], 10 classes; batch 2"),
        changes=["hidden_dropout_prob = attention_probs_dropout_prob = 0.0 (the defaults)",
                 "attn_implementation = eager"])


def make_t5():
    from transformers import T5Config, T5ForConditionalGeneration
    vocab = VOCAB
    cfg = T5Config(vocab_size=vocab, d_model=32, d_kv=8, d_ff=64, num_layers=2,
                   num_decoder_layers=2, num_heads=4, relative_attention_num_buckets=8,
                   relative_attention_max_distance=16, dropout_rate=0.0,
                   feed_forward_proj="relu", use_cache=False, pad_token_id=0, eos_token_id=1,
                   decoder_start_token_id=0, attn_implementation="eager")
    torch.manual_seed(0)
    net = T5ForConditionalGeneration(cfg)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(2, vocab, (BATCH, SEQ), generator=g)
    targets = torch.randint(2, vocab, (BATCH, SEQ), generator=g)
    dec = net._shift_right(targets)           # decoder_start_token_id, targets[:, :-1]
    return dict(
        net=net, cfg=cfg, data=[("input_ids", ids), ("decoder_input_ids", dec)],
        targets=targets, n_classes=vocab,
        forward_fn=lambda w, ids, dec: w.net(
            input_ids=ids, decoder_input_ids=dec, attention_mask=ones_mask(w, ids),
            decoder_attention_mask=ones_mask(w, dec)).logits,
        text=True,
        description=("transformers T5ForConditionalGeneration (T5 v1.0 layout): vocab 64, "
                     "d_model 32, d_kv 8, 4 heads, d_ff 64 (ReLU), 2 encoder + 2 decoder "
                     "layers, RMS-style T5LayerNorm, relative position buckets 8 / max distance "
                     "16 (bias in the first layer of each stack), shared embedding tied to the "
                     "LM head (decoder output scaled by d_model**-0.5); batch 2, encoder seq 16, "
                     "decoder seq 16; decoder_input_ids = targets shifted right (start token 0), "
                     "computed outside the graph; loss over all decoder positions"),
        changes=["dropout_rate = 0.0 (default 0.1)", "attn_implementation = eager",
                 "use_cache = False"])


def make_resnet50():
    from torchvision.models.resnet import Bottleneck, ResNet

    class NarrowResNet50(ResNet):
        """torchvision's ResNet-50 (Bottleneck, [3, 4, 6, 3], its forward, _make_layer and
        init) with the base width 64 replaced by `base`: stem `base` channels, bottleneck
        widths base * (1, 2, 4, 8), block outputs 4x those."""

        def __init__(self, base, num_classes):
            nn.Module.__init__(self)
            self._norm_layer = nn.BatchNorm2d
            self.inplanes, self.dilation, self.groups, self.base_width = base, 1, 1, 64
            self.conv1 = nn.Conv2d(3, base, kernel_size=7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(base)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.layer1 = self._make_layer(Bottleneck, base, 3)
            self.layer2 = self._make_layer(Bottleneck, base * 2, 4, stride=2)
            self.layer3 = self._make_layer(Bottleneck, base * 4, 6, stride=2)
            self.layer4 = self._make_layer(Bottleneck, base * 8, 3, stride=2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(base * 8 * Bottleneck.expansion, num_classes)
            for m in self.modules():          # as torchvision's ResNet.__init__
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
            for m in self.modules():          # torchvision's zero_init_residual=True
                if isinstance(m, Bottleneck):
                    nn.init.constant_(m.bn3.weight, 0)

    n_classes = 10
    torch.manual_seed(0)
    net = NarrowResNet50(3, n_classes)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(BATCH, 3, IMAGE, IMAGE, generator=g)
    targets = torch.randint(0, n_classes, (BATCH,), generator=g)
    return dict(
        net=net, cfg=None, data=[("x", x)], targets=targets, n_classes=n_classes,
        forward_fn=lambda w, x: w.net(x), text=False,
        description=("torchvision ResNet-50 topology (torchvision.models.resnet.ResNet with "
                     "Bottleneck blocks [3, 4, 6, 3], 53 Conv + 53 BatchNorm, downsample "
                     "shortcuts, 7x7/2 stem, MaxPool 3/2, AdaptiveAvgPool, fc) at 3/64 of its "
                     "width: stem 3 channels, bottleneck widths 3/6/12/24, block outputs "
                     "12/24/48/96; zero_init_residual (each block's last BatchNorm weight "
                     "starts at 0, then the 1-D noise below); 10 classes; BatchNorm in training "
                     "mode (batch statistics, momentum 0.1, eps 1e-5); batch 2, 3x48x48 "
                     "(layer4 runs at 2x2)"),
        changes=["every channel width x 3/64 (base width 3 instead of 64): resnet50() has "
                 "23.5M parameters, 94 MB per float32 copy, far over this material's size "
                 "budget; the graph's op sequence is resnet50's",
                 "num_classes = 10",
                 "zero_init_residual = True (a resnet50() option): with the default init this "
                 "narrow, deep BatchNorm network at batch 2 is so ill-conditioned that float32 "
                 "and float64 gradients differ by 3e-2 of max|g| at 32x32",
                 "48x48 images, not 32x32: at 32x32 layer4 runs at 1x1, so its BatchNorms "
                 "normalize over 2 values (float32 vs float64 gradients then differ by 1e-3 "
                 "even with zero_init_residual)"])


def make_mobilenet_v3_small():
    from torchvision.models import mobilenet_v3_small
    n_classes = 10
    torch.manual_seed(0)
    net = mobilenet_v3_small(weights=None, num_classes=n_classes, dropout=0.0, width_mult=0.25,
                             reduced_tail=True)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(BATCH, 3, IMAGE, IMAGE, generator=g)
    targets = torch.randint(0, n_classes, (BATCH,), generator=g)
    return dict(
        net=net, cfg=None, data=[("x", x)], targets=targets, n_classes=n_classes,
        forward_fn=lambda w, x: w.net(x), text=False,
        description=("torchvision mobilenet_v3_small(width_mult=0.25, reduced_tail=True, "
                     "dropout=0.0, num_classes=10): inverted residuals with depthwise Conv, "
                     "squeeze-excitation (AdaptiveAvgPool, 1x1 Conv, ReLU, Hardsigmoid, Mul), "
                     "Hardswish, BatchNorm (momentum 0.01, eps 1e-3) in training mode, "
                     "classifier Linear-Hardswish-Dropout(0)-Linear; batch 2, 3x48x48 (the "
                     "last stage runs at 2x2)"),
        changes=["width_mult = 0.25 and reduced_tail = True (the default has 1.5M parameters "
                 "with 10 classes, over the size budget)", "dropout = 0.0 (default 0.2)",
                 "num_classes = 10",
                 "48x48 images: at 32x32 the last stage's BatchNorms normalize over 2 values "
                 "and float32 vs float64 gradients differ by 7e-4 of max|g|"])


MODELS = {
    "gpt2": make_gpt2,
    "llama": make_llama,
    "bert": make_bert,
    "vit": make_vit,
    "t5": make_t5,
    "resnet50": make_resnet50,
    "mobilenet_v3_small": make_mobilenet_v3_small,
}

VARIANTS = {
    "loss": dict(exporter="dynamo", optimize=True,
                 call="torch.onnx.export(model, args, dynamo=True, input_names, output_names) "
                      "-- every other argument at its default: opset_version None (the "
                      "exporter's default), optimize=True (onnxscript optimizer: constant "
                      "folding, initializer deduplication, fusions), the model in train mode "
                      "(the `training` argument is TorchScript-only)"),
    "loss_dynamo_noopt": dict(exporter="dynamo", optimize=False,
                              call="torch.onnx.export(model, args, dynamo=True, optimize=False, "
                                   "input_names, output_names), the model in train mode"),
    "loss_torchscript": dict(exporter="torchscript", fold=True,
                             call="torch.onnx.export(model, args, f, dynamo=False, "
                                  "training=TrainingMode.TRAINING, input_names, output_names) -- "
                                  "opset_version and do_constant_folding (True) at their "
                                  "defaults"),
    "loss_torchscript_nofold": dict(exporter="torchscript", fold=False,
                                    call="torch.onnx.export(model, args, f, dynamo=False, "
                                         "training=TrainingMode.TRAINING, "
                                         "do_constant_folding=False, input_names, output_names) "
                                         "-- as tests/models/pytorch/ (opset at the default)"),
}


# ----------------------------------------------------------------------------------------------
# Reference training steps (PyTorch), on fresh copies of the initial state.
# ----------------------------------------------------------------------------------------------

def fresh(model, state, dtype=torch.float32, bn_eval=False):
    m = copy.deepcopy(model)
    m.load_state_dict(state)
    if dtype == torch.float64:
        m = m.double()
    m.train()
    if bn_eval:
        for mod in m.modules():
            if isinstance(mod, nn.modules.batchnorm._BatchNorm):
                mod.eval()
    return m


def cast(t, dtype):
    return t.to(dtype) if t.is_floating_point() else t


def strip(name):
    assert name.startswith("net."), name
    return name[4:]


def one_step(model, state, args, dtype=torch.float32):
    m = fresh(model, state, dtype)
    loss = m(*[cast(a, dtype) for a in args])
    loss.backward()
    grads = {strip(n): p.grad.detach().clone() for n, p in m.named_parameters()}
    buffers = {strip(n): b.detach().clone() for n, b in m.named_buffers()}
    return loss.detach(), grads, buffers


def step_with(model, state, args, opt_name):
    m = fresh(model, state)
    if opt_name == "sgd":
        opt = torch.optim.SGD(m.parameters(), lr=SGD_LR, momentum=0.0, foreach=False)
    else:
        opt = torch.optim.Adam(m.parameters(), foreach=False, **ADAM)
    opt.zero_grad()
    m(*args).backward()
    opt.step()
    params = {n: p.detach().clone() for n, p in m.named_parameters()}
    with torch.no_grad():
        loss_after = fresh(model, {**state, **params})(*args).item()
    return {strip(n): p for n, p in params.items()}, loss_after


# ----------------------------------------------------------------------------------------------
# Export and ONNX post-processing.
# ----------------------------------------------------------------------------------------------

def first_lines(exc, n=6):
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    lines = [l for l in text.splitlines() if l.strip()]
    return "\n".join(lines[:n])


class quiet:
    """Send file descriptors 1 and 2 to a scratch file for a while (the exporters print
    progress lines, and the TorchScript exporter dumps its whole graph when it fails)."""

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.f = tempfile.TemporaryFile("w+")
        self.saved = [os.dup(1), os.dup(2)]
        os.dup2(self.f.fileno(), 1)
        os.dup2(self.f.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, saved in zip((1, 2), self.saved):
            os.dup2(saved, fd)
            os.close(saved)
        self.f.close()
        return False


def export_variant(model, state, args, input_names, vspec, text_model):
    """Returns (proto or None, settings, notes, error)."""
    m = fresh(model, state)
    notes = []
    if vspec["exporter"] == "dynamo":
        settings = {"dynamo": True, "optimize": vspec["optimize"], "opset_version": None,
                    "external_data": "n/a (the ONNXProgram's model_proto is saved inline)"}
        try:
            with quiet():
                prog = torch.onnx.export(m, tuple(args), None, dynamo=True,
                                         optimize=vspec["optimize"], input_names=input_names,
                                         output_names=["loss"])
            return prog.model_proto, settings, notes, None
        except Exception as e:                                   # noqa: BLE001
            return None, settings, notes, first_lines(e)
    settings = {"dynamo": False, "training": "TrainingMode.TRAINING", "opset_version": None,
                "do_constant_folding": vspec["fold"], "keep_initializers_as_inputs": False}
    attempts = [False, True] if text_model else [False]
    error = None
    for with_mask in attempts:
        m = fresh(model, state)
        m.with_attention_mask = with_mask
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "model.onnx"
            try:
                with quiet():
                    torch.onnx.export(m, tuple(args), str(path), dynamo=False,
                                      training=torch.onnx.TrainingMode.TRAINING,
                                      do_constant_folding=vspec["fold"],
                                      input_names=input_names, output_names=["loss"])
                proto = onnx.load(str(path))
            except Exception as e:                               # noqa: BLE001
                err = first_lines(e)
                if not with_mask and len(attempts) > 1:
                    notes.append("without an attention_mask the TorchScript export fails: "
                                 + err + " -- exported again with attention_mask = "
                                 "torch.ones_like(input_ids) made inside the wrapper (a "
                                 "traced constant; the loss is the same)")
                error = err
                continue
        if with_mask:
            settings["attention_mask"] = "torch.ones_like(input_ids), inside the wrapper"
        return proto, settings, notes, None
    return None, settings, notes, error


def rename_everywhere(graph, mapping):
    for node in graph.node:
        for k, name in enumerate(node.input):
            if name in mapping:
                node.input[k] = mapping[name]
        for k, name in enumerate(node.output):
            if name in mapping:
                node.output[k] = mapping[name]
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                rename_everywhere(attr.g, mapping)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    rename_everywhere(g, mapping)
    for coll in (graph.input, graph.output, graph.value_info):
        for vi in coll:
            if vi.name in mapping:
                vi.name = mapping[vi.name]
    for init in graph.initializer:
        if init.name in mapping:
            init.name = mapping[init.name]


def strip_metadata(graph):
    """Drop per-node metadata (the dynamo exporter records stack traces with file paths)."""
    for node in graph.node:
        del node.metadata_props[:]
        node.doc_string = ""
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                strip_metadata(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    strip_metadata(g)
    for coll in (graph.input, graph.output, graph.value_info, graph.initializer):
        for x in coll:
            del x.metadata_props[:]
    del graph.metadata_props[:]


def finalize(proto, model, state, vname, settings):
    """Initializer names -> state_dict keys, roles, pre-step buffer values. Returns info."""
    net = model.net
    canon = {}                                     # any state_dict / buffer name -> canonical
    by_id = {}
    for n, p in net.named_parameters():
        by_id[id(p)] = n
    for n, b in net.named_buffers():
        by_id.setdefault(id(b), n)
    for n, t in net.state_dict(keep_vars=True).items():
        canon[n] = by_id.get(id(t), n)
    for n, b in net.named_buffers():               # non-persistent buffers too
        canon.setdefault(n, n)
    params = dict(net.named_parameters())
    buffers = dict(net.named_buffers())
    notes = []
    mapping, seen = {}, {}
    for init in proto.graph.initializer:
        n = init.name
        key = n[4:] if n.startswith("net.") else None
        if key is not None and key in canon:
            c = canon[key]
            if c in seen:
                notes.append(f"initializers {seen[c]!r} and {n!r} both hold {c!r}; the second "
                             "keeps its name")
                continue
            seen[c] = n
            if c != n:
                mapping[n] = c
        elif key is not None:
            mapping[n] = key         # an exporter constant named after the module (folded BN)
    names_in_use = {i.name for i in proto.graph.initializer} | \
        {o for nd in proto.graph.node for o in nd.output} | {i.name for i in proto.graph.input}
    clash = [c for c in mapping.values() if c in names_in_use and c not in mapping]
    if clash:
        raise SystemExit(f"{vname}: renamed initializers clash with existing names {clash}")
    rename_everywhere(proto.graph, mapping)
    aliases = {v: k[4:] for k, v in mapping.items() if k[4:] != v}
    for old, new in aliases.items():
        notes.append(f"tied weight exported as {'net.' + new!r}: named {old!r} (its "
                     "named_parameters() name)")

    info = {"parameters": [], "buffers": [], "exporter_constants": [],
            "parameters_missing": [], "buffer_values_reset": [], "folded_parameters": [],
            "parameters_changed": []}
    for init in proto.graph.initializer:
        n = init.name
        if n in params:
            init.doc_string = "role=parameter"
            info["parameters"].append(n)
            got = nph.to_array(init)
            ref = state["net." + n].numpy() if ("net." + n) in state else \
                params[n].detach().numpy()
            if not (got.dtype == ref.dtype and got.shape == ref.shape and
                    np.array_equal(got, ref)):
                info["parameters_changed"].append(n)
        elif n in buffers:
            init.doc_string = "role=buffer"
            info["buffers"].append(n)
            key = "net." + n
            ref = state[key].numpy() if key in state else buffers[n].detach().numpy()
            got = nph.to_array(init)
            if got.shape == ref.shape and not np.array_equal(got, ref):
                info["buffer_values_reset"].append(n)
                init.CopyFrom(nph.from_array(ref.astype(got.dtype), n))
                init.doc_string = "role=buffer"
        else:
            init.doc_string = "role=buffer exporter-constant"
            const = {"name": n, "shape": list(init.dims),
                     "dtype": onnx.helper.tensor_dtype_to_np_dtype(init.data_type).name}
            src = folded_from(nph.to_array(init), params)
            if src:
                const["values_from_parameter"] = src
                info["folded_parameters"].append(src)
                init.doc_string += " folded-from=" + src
            info["exporter_constants"].append(const)
    if info["parameters_changed"]:
        notes.append(f"{len(info['parameters_changed'])} initializers named after a parameter "
                     "hold other values than the parameter (the optimizer folded a following "
                     "inference-mode BatchNormalization into them): "
                     + ", ".join(info["parameters_changed"]))
    present = set(info["parameters"])
    info["parameters_missing"] = [n for n in params if n not in present]
    if info["buffer_values_reset"]:
        notes.append("the export traced one train-mode forward, which moved "
                     f"{len(info['buffer_values_reset'])} BatchNorm running statistics; "
                     "their initializers are reset to the pre-step values")
    strip_metadata(proto.graph)
    del proto.metadata_props[:]
    for f in proto.functions:
        for node in f.node:
            del node.metadata_props[:]
            node.doc_string = ""
    proto.doc_string = (
        f"generated by tests/models/hf/export_models.py ({vname}): torch {torch.__version__}, "
        + ", ".join(f"{k}={v}" for k, v in settings.items() if k != "external_data"))
    return info, notes


def folded_from(arr, params):
    """Name of the parameter whose values a float constant holds (a transposed, sliced or
    gathered copy that the exporter's constant folding made), or None."""
    if arr.dtype != np.float32 or arr.size < 8:
        return None
    vals = np.unique(arr)
    if vals.size < 4:
        return None
    for n, p in params.items():
        pv = p.detach().numpy().reshape(-1)
        if pv.size >= vals.size and np.isin(vals, pv).mean() > 0.9:
            return n
    return None


def graph_key(proto):
    g = onnx.GraphProto()
    g.CopyFrom(proto.graph)
    g.doc_string = ""
    g.name = ""
    return g.SerializeToString(deterministic=True)


def op_counts(proto):
    c = collections.Counter((n.domain or "ai.onnx") + ":" + n.op_type for n in proto.graph.node)
    for f in proto.functions:
        for n in f.node:
            c[(n.domain or "ai.onnx") + ":" + n.op_type + " (in function)"] += 1
    return dict(sorted(c.items()))


def reference_eval(proto, feeds):
    from onnx.reference import ReferenceEvaluator
    try:
        out = ReferenceEvaluator(proto).run(None, feeds)
        return float(np.asarray(out[0])), None
    except Exception as e:                                       # noqa: BLE001
        return None, first_lines(e, 3)


# ----------------------------------------------------------------------------------------------
# Writing.
# ----------------------------------------------------------------------------------------------

def write_pb(root, rel, tensor, name):
    arr = tensor.detach().cpu().numpy().copy(order="C")
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    pb = nph.from_array(arr, name)
    assert list(pb.dims) == list(tensor.shape), (rel, list(pb.dims), list(tensor.shape))
    p.write_bytes(pb.SerializeToString())
    return rel


def shape_str(t):
    return ",".join(str(s) for s in t.shape)


def dtype_str(t):
    return str(t.dtype).replace("torch.", "")


def versions():
    import onnxscript
    v = {"python": platform.python_version(), "torch": torch.__version__,
         "onnx": onnx.__version__, "onnxscript": onnxscript.__version__,
         "numpy": np.__version__}
    for mod in ("transformers", "torchvision"):
        try:
            v[mod] = __import__(mod).__version__
        except ImportError:
            v[mod] = None
    return v


def has_bn(net):
    return any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in net.modules())


def build(name):
    spec = MODELS[name]()
    net = spec["net"]
    perturbed = perturb_1d(net, seed=2)
    model = LossModel(net, spec["forward_fn"], spec["n_classes"])
    model.train()
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    data_names = [n for n, _ in spec["data"]]
    args = [t for _, t in spec["data"]] + [spec["targets"]]
    input_names = data_names + ["targets"]
    bn = has_bn(net)
    root = HERE / name
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)

    # ---- reference step in float32 and float64 ----
    loss, grads, buf_after = one_step(model, state, args)
    loss64, grads64, buf_after64 = one_step(model, state, args, torch.float64)
    sgd_params, loss_sgd = step_with(model, state, args, "sgd")
    adam_params, loss_adam = step_with(model, state, args, "adam")
    loss_bn_eval = None
    if bn:
        with torch.no_grad():
            loss_bn_eval = fresh(model, state, bn_eval=True)(*args).item()

    params_named = dict(net.named_parameters())
    tsv = ["# kind\tonnx_name\tfile\tdtype\tshape"]
    inputs_json = {}
    for i, (n, t) in enumerate(zip(input_names, args)):
        rel = f"loss/test_data_set_0/input_{i}.pb"
        inputs_json[n] = rel
        tsv.append(f"{'targets' if n == 'targets' else 'input'}\t{n}\t{rel}\t{dtype_str(t)}\t"
                   f"{shape_str(t)}")
    tsv.append("output\tloss\tloss/test_data_set_0/output_0.pb\tfloat32\t")

    params_json = []
    worst = (0.0, None)
    zero_grad = []
    global_g64 = max(g.abs().max().item() for g in grads64.values())
    for pname, p in params_named.items():
        g, g64 = grads[pname], grads64[pname]
        gmax = g.abs().max().item()
        err = (g.double() - g64).abs().max().item()
        rel = err / gmax if gmax > 0 else err
        if g64.abs().max().item() <= 1e-7 * global_g64:
            zero_grad.append(pname)       # zero in exact arithmetic (e.g. attention key bias)
        else:
            worst = max(worst, (rel, pname), key=lambda t: t[0])
        entry = {"name": pname, "torch_name": pname, "shape": list(g.shape), "dtype": "float32"}
        for kind, t in (("grad", g), ("sgd", sgd_params[pname]), ("adam", adam_params[pname])):
            rel_path = write_pb(root, f"reference/{kind}/{pname}.pb", t, pname)
            entry[kind] = rel_path
            tsv.append(f"{kind}\t{pname}\t{rel_path}\tfloat32\t{shape_str(t)}")
        entry.update({"grad_max_abs": gmax, "grad_fp32_vs_fp64_max_abs_err": err,
                      "grad_fp32_vs_fp64_rel_err": rel})
        params_json.append(entry)

    non_trainable = []
    buffers_after = []
    persistent = set(net.state_dict().keys())
    for bname, b in net.named_buffers():
        non_trainable.append({"name": bname, "shape": list(b.shape), "dtype": dtype_str(b),
                              "persistent": bname in persistent})
        if "running_" in bname:
            after, after64 = buf_after[bname], buf_after64[bname]
            rel_path = write_pb(root, f"reference/buffers/{bname}.pb", after, bname)
            tsv.append(f"buffer\t{bname}\t{rel_path}\t{dtype_str(after)}\t{shape_str(after)}")
            buffers_after.append({
                "name": bname, "shape": list(after.shape), "after_step": rel_path,
                "max_abs_change": (after - state["net." + bname]).abs().max().item(),
                "fp32_vs_fp64_max_abs_err": (after.double() - after64).abs().max().item()})

    # ---- exports ----
    variants = {}
    stored_graphs = {}
    not_stored = {}
    for vname, vspec in VARIANTS.items():
        if bn and vname == "loss_dynamo_noopt":
            not_stored[vname] = (
                "not stored for BatchNorm models (size budget): like `loss`, it is an "
                "inference-mode graph (the exporter turns train-mode BatchNorm into "
                "BatchNormalization(training_mode=0)); optimize=False only keeps those nodes "
                "(instead of folding them into the Conv weights) and adds Shape/Expand/"
                "CastLike around them")
            continue
        proto, settings, notes, error = export_variant(model, state, args, input_names, vspec,
                                                       spec["text"])
        entry = {"path": f"{vname}/model.onnx", "exporter_call": vspec["call"],
                 "settings": settings}
        if proto is not None:
            key = graph_key(proto)
            same = [v for v, k in stored_graphs.items() if k == key]
            if same:
                not_stored[vname] = (f"not stored: the export is identical to `{same[0]}` "
                                     "(same nodes and initializers; constant folding found "
                                     "nothing to fold)")
                continue
            stored_graphs[vname] = key
        if proto is None:
            entry.update({"exported": False, "error": error})
            if notes:
                entry["export_notes"] = notes
            variants[vname] = entry
            print(f"  {vname}: export FAILED: {error.splitlines()[0]}")
            continue
        info, fin_notes = finalize(proto, model, state, vname, settings)
        notes += fin_notes
        expected = loss.item()
        expected_note = "PyTorch's train-mode loss (loss_value)"
        if bn and vspec["exporter"] == "dynamo":
            bns = [n for n in proto.graph.node if n.op_type == "BatchNormalization"]
            modes = sorted({next((a.i for a in n.attribute if a.name == "training_mode"), 0)
                            for n in bns})
            notes.append(
                "BatchNorm in train mode: torch.export gives "
                "aten._native_batch_norm_legit_functional(training=True), but onnxscript's "
                "torch_lib translation forces training=False ('temporary fix' for "
                "onnxruntime), so every BatchNorm becomes an inference-mode "
                f"BatchNormalization (training_mode values in this file: {modes or 'none'}; "
                f"{len(bns)} BatchNormalization nodes) that normalizes with the running "
                "statistics, and the running-stat updates are dropped. The graph computes "
                "the eval-mode-BatchNorm loss, not the training loss: "
                "test_data_set_0/output_0.pb holds that loss (PyTorch with the BatchNorm "
                "modules in eval mode), and the reference gradients/steps (train-mode "
                "BatchNorm) do not apply to this file.")
            if not bns:
                notes.append("optimize=True then folded every (inference) BatchNormalization "
                             "into the preceding Conv's weights and bias: the Conv and "
                             "BatchNorm parameters are replaced by exporter constants.")
            expected = loss_bn_eval
            expected_note = "PyTorch with BatchNorm in eval mode (what this graph computes)"
        vdir = root / vname
        vdir.mkdir(parents=True, exist_ok=True)
        onnx.checker.check_model(proto, full_check=False)
        onnx.save(proto, str(vdir / "model.onnx"))
        for i, (n, t) in enumerate(zip(input_names, args)):
            write_pb(root, f"{vname}/test_data_set_0/input_{i}.pb", t, n)
        write_pb(root, f"{vname}/test_data_set_0/output_0.pb",
                 torch.tensor(expected, dtype=torch.float32), "loss")
        ev_loss, ev_err = reference_eval(proto, {n: t.numpy() for n, t in
                                                 zip(input_names, args)})
        graph_inputs = [i.name for i in proto.graph.input]
        if graph_inputs != input_names:
            notes.append(f"graph inputs are {graph_inputs}, not {input_names}")
        entry.update({
            "exported": True,
            "opset_import": {(o.domain or "ai.onnx"): o.version for o in proto.opset_import},
            "ir_version": proto.ir_version,
            "producer": f"{proto.producer_name} {proto.producer_version}".strip(),
            "file_bytes": (vdir / "model.onnx").stat().st_size,
            "node_count": len(proto.graph.node),
            "local_functions": len(proto.functions),
            "ops": op_counts(proto),
            "graph_inputs": graph_inputs,
            "graph_outputs": [o.name for o in proto.graph.output],
            "expected_loss": expected,
            "expected_loss_is": expected_note,
            "onnx_reference_evaluator": {
                "what": "onnx.reference.ReferenceEvaluator on this file, same inputs",
                "loss": ev_loss,
                "abs_err_vs_expected_loss": None if ev_loss is None else abs(ev_loss - expected),
                "error": ev_err},
            "initializers": {
                "parameters": len(info["parameters"]),
                "buffers": info["buffers"],
                "exporter_constants": info["exporter_constants"],
            },
            "parameters_missing": info["parameters_missing"],
            "parameters_with_folded_copies": sorted(set(info["folded_parameters"])),
            "parameters_with_other_values": info["parameters_changed"],
            "trainable_as_exported": (not info["parameters_missing"] and
                                      not info["folded_parameters"] and
                                      not info["parameters_changed"] and
                                      expected == loss.item()),
        })
        if notes:
            entry["export_notes"] = notes
        variants[vname] = entry
        print(f"  {vname}: opset {entry['opset_import']}, IR {proto.ir_version}, "
              f"{len(proto.graph.node)} nodes, {entry['file_bytes']} bytes, "
              f"missing params {len(info['parameters_missing'])}, "
              f"constants {len(info['exporter_constants'])}, ref-eval loss {ev_loss} "
              f"(expected {expected:.6f}) {ev_err or ''}")

    manifest = {
        "model": name,
        "description": spec["description"],
        "changes_from_library_defaults": spec["changes"] + [
            "every 1-D parameter (bias, norm weight) + N(0, 0.02) noise after the library's "
            "init (the dynamo exporter's optimizer merges equal-valued initializers)",
            "train mode; loss appended by a wrapper module: F.cross_entropy(logits, targets), "
            "mean; the wrapper's 'net.' prefix is stripped from initializer names"],
        "perturbed_parameters": perturbed,
        "config": hf_config_dict(spec["cfg"]) if spec["cfg"] is not None else None,
        "opset": variants["loss"].get("opset_import", {}).get("ai.onnx"),
        "loss_model": "loss/model.onnx",
        "variants": variants,
        "variants_not_stored": not_stored,
        "graph_inputs": {"loss": input_names},
        "loss_definition": ("mean cross-entropy (torch.nn.functional.cross_entropy, "
                            "reduction=mean, no label smoothing, ignore_index -100 (no target "
                            "is -100)) of the logits reshaped to [-1, classes] vs the targets"),
        "loss_value": loss.item(),
        "loss_fp64_value": loss64.item(),
        "loss_after_sgd_step": loss_sgd,
        "loss_after_adam_step": loss_adam,
        "loss_with_batchnorm_in_eval_mode": loss_bn_eval,
        "inputs": inputs_json,
        "outputs": {"loss": "loss/test_data_set_0/output_0.pb"},
        "optimizers": {
            "sgd": {"lr": SGD_LR, "momentum": 0.0, "weight_decay": 0.0,
                    "rule": "p1 = p0 - lr * grad   (torch.optim.SGD, foreach=False)"},
            "adam": {"lr": ADAM["lr"], "beta1": ADAM["betas"][0], "beta2": ADAM["betas"][1],
                     "eps": ADAM["eps"], "weight_decay": 0.0, "amsgrad": False,
                     "rule": "step 1 from m=v=0: m=(1-b1)g, v=(1-b2)g^2, p1 = p0 - (lr/(1-b1)) "
                             "* m / (sqrt(v)/sqrt(1-b2) + eps)   (torch.optim.Adam, "
                             "foreach=False)"},
        },
        "parameter_count": sum(p.numel() for p in net.parameters()),
        "parameters": params_json,
        "non_trainable_initializers": non_trainable,
    }
    if buffers_after:
        mom = next(m.momentum for m in net.modules()
                   if isinstance(m, nn.modules.batchnorm._BatchNorm))
        manifest["buffers_after_step"] = {
            "rule": ("PyTorch BatchNorm training update, once per step: running_mean = "
                     "(1-m)*running_mean + m*batch_mean, running_var = (1-m)*running_var + "
                     f"m*batch_var_unbiased, m = {mom} (ONNX momentum {1 - mom:g}); the "
                     "initializers hold the pre-step values (0 and 1)"),
            "buffers": buffers_after,
            "num_batches_tracked": "not in the exports; PyTorch increments it to 1"}
    manifest["float64_check"] = {
        "what": "same step replayed in float64 (model.double()); per tensor "
                "max|g32 - g64| / max|g32|",
        "max_grad_rel_err": worst[0], "max_grad_rel_err_param": worst[1],
        "left_out_zero_gradients": {
            "what": "tensors whose float64 gradient is below 1e-7 of the largest float64 "
                    "gradient: zero in exact arithmetic (an attention key bias: softmax does "
                    "not see a per-row constant; a bias right before a BatchNorm); their "
                    "float32 gradients are rounding noise, so the relative error is ~1",
            "params": zero_grad},
        "loss_fp32_vs_fp64_abs_err": abs(loss.item() - loss64.item())}
    manifest["onnxruntime_check"] = None
    manifest["versions"] = versions()
    manifest["torch_version"] = torch.__version__
    manifest["onnx_version"] = onnx.__version__
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    (root / "manifest.tsv").write_text("\n".join(tsv) + "\n")
    return manifest


def main(argv):
    names = argv[1:] or list(MODELS)
    for name in names:
        if name not in MODELS:
            raise SystemExit(f"unknown model {name!r}; known: {', '.join(MODELS)}")
    for name in names:
        print(f"{name}:", flush=True)
        m = build(name)
        print(f"  params {m['parameter_count']}, loss {m['loss_value']:.6f}, sgd "
              f"{m['loss_after_sgd_step']:.6f}, adam {m['loss_after_adam_step']:.6f}, fp64 max "
              f"rel {m['float64_check']['max_grad_rel_err']:.2e}", flush=True)


if __name__ == "__main__":
    main(sys.argv)
