#!/usr/bin/python3
"""PyTorch reference loss curves for mixed-precision training (issue 13, item 7).

For gpt2_tiny, llama_tiny and bert_tiny this builds the PyTorch model, loads exactly the weights
of its ONNX loss model, proves that the module is the export (fp32 loss and gradients against the
model's manifest and reference/grad), and then trains 20 Adam steps on the model's own batch
(loss/test_data_set_0, the same batch every step) in up to four modes:

    fp32           plain float32
    bf16           torch.autocast("cpu", dtype=torch.bfloat16) around forward and loss; the
                   master weights and Adam stay float32, as autocast leaves them
    fp16           torch.autocast("cpu", dtype=torch.float16) with torch.amp.GradScaler("cpu")
                   at its defaults (initial scale 2^16); needs a torch whose CPU autocast has
                   float16 (Debian's 1.13 has bf16 only)
    fp16_overflow  the same with an initial scale of 2^24: the first steps overflow and are
                   skipped, then the scale has backed off far enough and training goes on

The loss of each step is recorded before that step's update (step 1 is the initial loss). Each
model's curves go to <model>.json beside this script; a run replaces only the modes it ran, so
curves made with two torch versions live in one file, each with its version.

Run by hand from the repository root (CI never runs it; tests use the committed JSON):

    /usr/bin/python3 tests/models/pytorch/mixed_precision/make_loss_curves.py
    .cache/torch-venv/bin/python tests/models/pytorch/mixed_precision/make_loss_curves.py \\
        --modes fp16,fp16_overflow

The first uses Debian's python3-torch 1.13 (fp32, bf16; says that it skips the fp16 modes); the
second a pinned PyPI torch in a virtual environment (README.md beside this script).
"""

import argparse
import contextlib
import hashlib
import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper as nph
import torch
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
sys.path.insert(0, str(HERE.parent))
import export_models  # noqa: E402  (llama_tiny and bert_tiny are defined there)
import gpt2_tiny  # noqa: E402

STEPS = 20
ADAM = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
SEED = 0
# mode -> autocast dtype (None: no autocast) and GradScaler's initial scale (None: no scaler).
MODES = {
    "fp32": dict(dtype=None, init_scale=None),
    "bf16": dict(dtype=torch.bfloat16, init_scale=None),
    "fp16": dict(dtype=torch.float16, init_scale=2.0 ** 16),
    "fp16_overflow": dict(dtype=torch.float16, init_scale=2.0 ** 24),
}

# The export check. The loss of the same float32 computation differs only by summation order;
# the fixtures prescribe gradients within 1e-4 of max|g| per tensor. The loss after one Adam step
# (the manifests' loss_after_adam_step) checks the optimizer settings as well; it is looser,
# since Adam turns the rounding of gradients near zero into O(lr) parameter changes.
LOSS_REL_TOL = 1e-6
GRAD_TOL = 1e-4
ADAM_STEP_LOSS_REL_TOL = 1e-5

MODELS = {
    "gpt2_tiny": dict(dir="tests/fixtures/gpt2_tiny",
                      module="gpt2_tiny.py: GPT2Tiny, rebuilt from the ONNX graph",
                      make=lambda proto: gpt2_tiny.GPT2Tiny(**gpt2_tiny.config_from_onnx(proto))),
    "llama_tiny": dict(dir="tests/models/pytorch/llama_tiny",
                       module="tests/models/pytorch/export_models.py: LlamaTiny()",
                       make=lambda proto: export_models.LlamaTiny()),
    "bert_tiny": dict(dir="tests/models/pytorch/bert_tiny",
                      module="tests/models/pytorch/export_models.py: BertTiny()",
                      make=lambda proto: export_models.BertTiny()),
}


# ----------------------------------------------------------------------------------------------
# The model and its data, from the files tests use.
# ----------------------------------------------------------------------------------------------

def read_pb(path):
    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return torch.from_numpy(np.array(nph.to_array(tensor)))


def load_onnx_weights(model, proto):
    """Copies every initializer into the state_dict entry of the same name; the two sets of
    names, and each entry's dtype and shape, must be equal."""
    state = {i.name: torch.from_numpy(np.array(nph.to_array(i))) for i in proto.graph.initializer}
    expected = model.state_dict()
    if set(state) != set(expected):
        raise SystemExit(f"initializers {sorted(set(state) ^ set(expected))} are in only one of "
                         f"the ONNX file and the PyTorch module")
    for name, value in state.items():
        if value.shape != expected[name].shape or value.dtype != expected[name].dtype:
            raise SystemExit(f"initializer {name}: {value.dtype} {list(value.shape)} in the ONNX "
                             f"file, {expected[name].dtype} {list(expected[name].shape)} in the "
                             f"module")
    model.load_state_dict(state, strict=True)


class Subject:
    """One model: its directory, manifest, batch, and a factory of freshly loaded modules."""

    def __init__(self, name):
        spec = MODELS[name]
        self.name, self.module_source = name, spec["module"]
        self.rel_dir = spec["dir"]
        self.dir = REPO / spec["dir"]
        self.onnx_path = self.dir / "loss" / "model.onnx"
        self.data_dir = self.dir / "loss" / "test_data_set_0"
        self.manifest = json.loads((self.dir / "manifest.json").read_text())
        self.proto = onnx.load(str(self.onnx_path))
        self.make = spec["make"]
        self.inputs = read_pb(self.data_dir / "input_0.pb")
        self.targets = read_pb(self.data_dir / "input_1.pb")

    def fresh_model(self):
        model = self.make(self.proto)
        load_onnx_weights(model, self.proto)
        model.train()
        return model

    def file_hashes(self):
        """sha256 of the files the curves depend on (the comparison script checks them)."""
        files = [self.onnx_path, self.data_dir / "input_0.pb", self.data_dir / "input_1.pb"]
        return {str(f.relative_to(self.dir)): hashlib.sha256(f.read_bytes()).hexdigest()
                for f in files}


# ----------------------------------------------------------------------------------------------
# Proof that the PyTorch module is the exported model.
# ----------------------------------------------------------------------------------------------

def check_against_export(subject):
    model = subject.fresh_model()
    loss = model(subject.inputs, subject.targets)
    loss.backward()
    want = subject.manifest["loss_value"]
    loss_rel = abs(loss.item() - want) / abs(want)
    if loss_rel > LOSS_REL_TOL:
        raise SystemExit(f"{subject.name}: PyTorch fp32 loss {loss.item()!r} vs the manifest's "
                         f"loss_value {want!r}: relative error {loss_rel:.3g} > {LOSS_REL_TOL}")
    params = dict(model.named_parameters())
    if {p["torch_name"] for p in subject.manifest["parameters"]} != set(params):
        raise SystemExit(f"{subject.name}: the manifest's parameters are not the module's")
    worst = (0.0, None)
    for p in subject.manifest["parameters"]:
        ref = read_pb(subject.dir / p["grad"])
        got = params[p["torch_name"]].grad
        err = (got - ref).abs().max().item() / ref.abs().max().item()
        if not err <= GRAD_TOL:
            raise SystemExit(f"{subject.name}: gradient of {p['name']} differs from "
                             f"{p['grad']} by {err:.3g} of max|g| (> {GRAD_TOL})")
        worst = max(worst, (err, p["name"]), key=lambda e: e[0])
    return {"loss": loss.item(), "manifest_loss_value": want, "loss_rel_err": loss_rel,
            "grad_max_err_over_max_abs": worst[0], "grad_worst_tensor": worst[1]}


# ----------------------------------------------------------------------------------------------
# Training.
# ----------------------------------------------------------------------------------------------

def unsupported_reason(mode):
    """None when the running torch can train `mode` on the CPU, else why not."""
    low = MODES[mode]["dtype"]
    if low is None:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # 1.13 warns before it raises
            with torch.autocast("cpu", dtype=low):
                out = torch.ones(2, 2) @ torch.ones(2, 2)
    except RuntimeError as e:
        return f"torch {torch.__version__}: {str(e).splitlines()[0]}"
    if out.dtype != low:
        return f"torch {torch.__version__}: CPU autocast ignores {low}"
    if MODES[mode]["init_scale"] and not hasattr(getattr(torch, "amp", None), "GradScaler"):
        return f"torch {torch.__version__}: no torch.amp.GradScaler for the CPU"
    return None


def autocast(mode):
    low = MODES[mode]["dtype"]
    return contextlib.nullcontext() if low is None else torch.autocast("cpu", dtype=low)


def adam_steps_taken(opt):
    """The step count Adam keeps with the first parameter's state (0 before the first step)."""
    state = opt.state.get(opt.param_groups[0]["params"][0], {})
    return int(state["step"]) if "step" in state else 0


def train_curve(subject, mode):
    """Losses of STEPS Adam steps (each before its update), plus the GradScaler's trace."""
    torch.manual_seed(SEED)
    model = subject.fresh_model()
    opt = torch.optim.Adam(model.parameters(), foreach=False, **ADAM)
    init_scale = MODES[mode]["init_scale"]
    scaler = torch.amp.GradScaler("cpu", init_scale=init_scale) if init_scale else None
    losses, loss_dtypes, scales, skipped = [], set(), [], []
    for _ in range(STEPS):
        opt.zero_grad(set_to_none=True)
        with autocast(mode):
            loss = model(subject.inputs, subject.targets)
        losses.append(loss.item())
        loss_dtypes.add(str(loss.dtype).replace("torch.", ""))
        if scaler is None:
            loss.backward()
            opt.step()
            continue
        scales.append(scaler.get_scale())
        taken = adam_steps_taken(opt)
        scaler.scale(loss).backward()
        scaler.step(opt)      # skipped (Adam untouched) when a gradient is inf/NaN
        scaler.update()
        skipped.append(adam_steps_taken(opt) == taken)
    if not all(math.isfinite(v) for v in losses):
        raise SystemExit(f"{subject.name} {mode}: non-finite loss in {losses}")
    curve = {"torch_version": torch.__version__, "losses": losses,
             "loss_dtype": "/".join(sorted(loss_dtypes))}
    low = MODES[mode]["dtype"]
    if low is not None:
        curve["autocast"] = {"device_type": "cpu", "dtype": str(low).replace("torch.", ""),
                             "scope": "forward and loss", "cache_enabled": True,
                             "ops": autocast_policy(low)}
    if scaler is not None:
        settings = scaler.state_dict()
        curve["grad_scaler"] = {
            "device": "cpu", "init_scale": init_scale,
            "growth_factor": settings["growth_factor"],
            "backoff_factor": settings["backoff_factor"],
            "growth_interval": settings["growth_interval"],
            "scale_used": scales, "step_skipped": skipped}
    return curve


# ----------------------------------------------------------------------------------------------
# What autocast does to the ops these models use, observed on the running torch: the policy
# lists live in C++ (aten/src/ATen/autocast_mode.cpp) and Python cannot list them.
# ----------------------------------------------------------------------------------------------

def probe_ops():
    x = torch.randn(4, 8)
    w = torch.randn(8, 8)
    t = torch.tensor([0, 1, 2, 3])
    mask = torch.ones(4, 8, dtype=torch.bool).triu(1)
    ops = {
        "linear": lambda a: F.linear(a, w),
        "matmul": lambda a: a @ w,
        "embedding": lambda a: F.embedding(t, a),
        "layer_norm": lambda a: F.layer_norm(a, (8,)),
        "softmax": lambda a: F.softmax(a, -1),
        "log_softmax": lambda a: F.log_softmax(a, -1),
        "cross_entropy": lambda a: F.cross_entropy(a, t),
        "gelu": F.gelu,
        "erf": torch.erf,
        "tanh": torch.tanh,
        "sigmoid": torch.sigmoid,
        "pow": lambda a: a.pow(2),
        "mean": lambda a: a.mean(-1, keepdim=True),
        "sqrt": lambda a: a.abs().sqrt(),
        "div": lambda a: a / 3.0,
        "mul": lambda a: a * a,
        "add": lambda a: a + a,
        "masked_fill": lambda a: a.masked_fill(mask, float("-inf")),
        "cat": lambda a: torch.cat((a, -a), -1),
    }
    if hasattr(F, "scaled_dot_product_attention"):
        ops["scaled_dot_product_attention"] = \
            lambda a: F.scaled_dot_product_attention(a[None], a[None], a[None])
    return x, ops


def autocast_policy(low):
    """op -> what autocast does with it: "low" (fp32 inputs are cast down), "fp32" (low
    inputs are cast up), or "follows inputs" (computes in its inputs' dtype)."""
    x, ops = probe_ops()
    policy = {}
    with torch.autocast("cpu", dtype=low):
        for name, op in ops.items():
            from_fp32, from_low = op(x).dtype, op(x.to(low)).dtype
            if from_fp32 == low:
                policy[name] = "low"
            elif from_low == torch.float32:
                policy[name] = "fp32"
            else:
                policy[name] = "follows inputs"
    return policy


# ----------------------------------------------------------------------------------------------
# The JSON file: one per model, holding every mode's latest curve.
# ----------------------------------------------------------------------------------------------

SETTINGS = {
    "steps": STEPS, "optimizer": "torch.optim.Adam(foreach=False)",
    "lr": ADAM["lr"], "betas": list(ADAM["betas"]), "eps": ADAM["eps"],
    "weight_decay": ADAM["weight_decay"],
    "batch": "loss/test_data_set_0 (input_0.pb, input_1.pb), the same every step",
    "train_mode": True, "threads": 1, "seed": SEED,
    "losses": "losses[i] is the loss of step i+1 before its update; step 1 is the initial loss",
}


def write_curves(path, subject, check, new_curves):
    """Replaces the curves of the modes just run; keeps the others unless the model's files
    changed since they were made."""
    doc = json.loads(path.read_text()) if path.exists() else {}
    if doc.get("files", subject.file_hashes()) != subject.file_hashes():
        print(f"{subject.name}: the model's files changed since {path.name} was written: "
              f"its other curves are dropped")
        doc = {}
    curves = {**doc.get("curves", {}), **new_curves}
    checks = {**doc.get("export_check", {}), torch.__version__: check}
    doc = {
        "model": subject.name,
        "model_dir": subject.rel_dir,
        "files": subject.file_hashes(),
        "pytorch_module": subject.module_source,
        "settings": SETTINGS,
        "curves": {m: curves[m] for m in MODES if m in curves},
        "export_check": dict(sorted(checks.items())),
    }
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated subset of " + ", ".join(MODELS))
    parser.add_argument("--modes", default=",".join(MODES),
                        help="comma-separated subset of " + ", ".join(MODES))
    parser.add_argument("--out-dir", type=Path, default=HERE,
                        help="where <model>.json goes (default: beside this script)")
    args = parser.parse_args(argv)
    models, modes = args.models.split(","), args.modes.split(",")
    for name in models:
        if name not in MODELS:
            parser.error(f"unknown model {name!r}")
    for mode in modes:
        if mode not in MODES:
            parser.error(f"unknown mode {mode!r}")

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    runnable = []
    for mode in modes:
        reason = unsupported_reason(mode)
        if reason:
            print(f"skipping {mode}: {reason}")
        else:
            runnable.append(mode)

    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name in models:
        subject = Subject(name)
        check = check_against_export(subject)
        print(f"{name}: the PyTorch module is the export (torch {torch.__version__}): loss "
              f"{check['loss']!r} vs {check['manifest_loss_value']!r} (rel "
              f"{check['loss_rel_err']:.2g}), worst gradient "
              f"{check['grad_max_err_over_max_abs']:.2g} of max|g| ({check['grad_worst_tensor']})")
        curves = {}
        for mode in runnable:
            curves[mode] = train_curve(subject, mode)
            losses = curves[mode]["losses"]
            print(f"{name} {mode}: loss {losses[0]:.6f} -> {losses[-1]:.6f}")
        if "fp32" in curves:
            after, want = curves["fp32"]["losses"][1], subject.manifest["loss_after_adam_step"]
            check["loss_after_one_adam_step"] = after
            check["manifest_loss_after_adam_step"] = want
            if abs(after - want) > ADAM_STEP_LOSS_REL_TOL * abs(want):
                raise SystemExit(f"{name}: fp32 loss after one Adam step {after!r} vs the "
                                 f"manifest's loss_after_adam_step {want!r}")
        write_curves(args.out_dir / f"{name}.json", subject, check, curves)


if __name__ == "__main__":
    main(sys.argv[1:])
