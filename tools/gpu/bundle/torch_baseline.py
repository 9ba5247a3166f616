#!/usr/bin/env python3
"""PyTorch eager on the same GPU, for comparison with remat's programs: the
bundle's models (mlp, gpt2_tiny, cnn, llama_tiny, bert_tiny, GPT-2 small at
8x1024) with their optimizers, random weights, fp32 and bf16 autocast, each
with and without torch.utils.checkpoint per block. Reports the median step
time (forward, loss, backward, optimizer step) after warm-up and
torch.cuda.max_memory_allocated. Needs only torch (and numpy for the
cnn/llama/bert definitions, shared with tests/models/pytorch/export_models.py);
whatever is missing is a named skip, not a crash."""
import argparse
import json
import math
import os
import statistics
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
WARMUP, STEPS = 5, 30


def missing(reason, out):
    print("SKIPPED: " + reason)
    if out:
        with open(out, "w") as f:
            json.dump({"skipped": reason}, f)
    return 0


def models():
    """name -> (make() -> module returning the mean loss of (x, y), x, y; the
    optimizer; blocks attribute for checkpointing)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class GPT2Block(nn.Module):
        # The fixture's GPT-2: pre-LN, fused qkv, causal softmax attention,
        # erf-GELU MLP.
        def __init__(self, d, heads):
            super().__init__()
            self.heads = heads
            self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.c_attn, self.c_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.c_fc, self.mlp_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            B, T, D = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(D, dim=2)
            q, k, v = (t.view(B, T, self.heads, D // self.heads).transpose(1, 2)
                       for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) / math.sqrt(D // self.heads)
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
            att = att.masked_fill(~mask, float("-inf")).softmax(-1)
            y = (att @ v).transpose(1, 2).reshape(B, T, D)
            x = x + self.c_proj(y)
            return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x))))

    class GPT2(nn.Module):
        def __init__(self, vocab, d, heads, layers, seq):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(seq, d)
            self.blocks = nn.ModuleList(GPT2Block(d, heads) for _ in range(layers))
            self.ln_f = nn.LayerNorm(d)

        def forward(self, ids, targets):
            pos = torch.arange(ids.shape[1], device=ids.device)
            x = self.wte(ids) + self.wpe(pos)
            for block in self.blocks:
                x = block(x)
            logits = self.ln_f(x) @ self.wte.weight.t()  # tied LM head
            return F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten())

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(784, 512), nn.Linear(512, 512),
                                         nn.Linear(512, 512)])
            self.out = nn.Linear(512, 10)

        def forward(self, x, y):
            for layer in self.blocks:
                x = F.relu(layer(x))
            return F.cross_entropy(self.out(x).float(), y)

    def tokens(vocab, b, t):
        ids = torch.randint(0, vocab, (b, t + 1))
        return ids[:, :-1].contiguous(), ids[:, 1:].contiguous()

    table = {
        "mlp": (lambda: (MLP(), torch.randn(32, 784), torch.randint(0, 10, (32,))), "sgd"),
        "gpt2_tiny": (lambda: (GPT2(512, 128, 4, 4, 64),) + tokens(512, 2, 64), "adam"),
        "gpt2_small": (lambda: (GPT2(50257, 768, 12, 12, 1024),) + tokens(50257, 8, 1024), "adam"),
    }
    # cnn, llama_tiny, bert_tiny: the export script's own definitions. It
    # imports onnx at the top, which is only needed for exporting: stand-ins
    # let the model classes load without it.
    try:
        import numpy  # noqa: F401
        sys.path.insert(0, os.path.join(HERE, "python"))
        try:
            import onnx  # noqa: F401 - the real one, where installed
            import onnx.numpy_helper  # noqa: F401
        except ImportError:
            # Stand-ins with a module spec: torch looks onnx up with
            # importlib.util.find_spec, which rejects a module without one.
            import importlib.machinery
            for name in ("onnx", "onnx.numpy_helper"):
                stub = types.ModuleType(name)
                stub.__spec__ = importlib.machinery.ModuleSpec(name, None)
                sys.modules.setdefault(name, stub)
        import export_models as em
        torch.use_deterministic_algorithms(False)
        torch.set_num_threads(os.cpu_count() or 1)

        class WithLoss(nn.Module):
            def __init__(self, model):
                super().__init__()
                self.model = model

            def forward(self, x, y):
                return self.model(x, y)
        for name, opt in (("cnn", "sgd"), ("llama_tiny", "adam"), ("bert_tiny", "adam")):
            make = em.SPECS[name]["make"]
            table[name] = ((lambda make=make: (lambda m, x, y: (WithLoss(m), x, y))(*make())), opt)
    except Exception as e:  # noqa: BLE001 - any import failure is a skip
        for name in ("cnn", "llama_tiny", "bert_tiny"):
            table[name] = ("skipped: cannot load tests/models/pytorch/export_models.py "
                           "(%s: %s)" % (type(e).__name__, e), None)
    return table


def checkpointed(model):
    """Wraps every element of every nn.ModuleList (the blocks) in
    torch.utils.checkpoint; False when the model has no such list."""
    import torch.nn as nn
    from torch.utils.checkpoint import checkpoint

    class Ckpt(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *args, **kwargs):
            return checkpoint(self.inner, *args, use_reentrant=False, **kwargs)
    found = False
    for module in list(model.modules()):
        if isinstance(module, nn.ModuleList):
            for i in range(len(module)):
                module[i] = Ckpt(module[i])
                found = True
    return found


def measure(name, make, optimizer, variant, steps):
    import torch
    torch.manual_seed(0)
    model, x, y = make()
    model = model.cuda().train()
    x, y = x.cuda(), y.cuda()
    if "checkpoint" in variant and not checkpointed(model):
        return {"skipped": "no blocks (nn.ModuleList) to checkpoint"}
    opt = (torch.optim.SGD(model.parameters(), lr=0.1) if optimizer == "sgd"
           else torch.optim.Adam(model.parameters(), lr=1e-4))
    bf16 = "bf16" in variant
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(WARMUP + steps):
        start = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
            loss = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return {"step_seconds_median": statistics.median(times[WARMUP:]),
            "max_memory_allocated": torch.cuda.max_memory_allocated(),
            "loss": float(loss), "steps": steps, "warmup_steps": WARMUP}


VARIANTS = ("fp32", "fp32+checkpoint", "bf16-autocast", "bf16-autocast+checkpoint")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bundle", default=HERE)
    p.add_argument("--out")
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args()
    names = ("mlp", "gpt2_tiny", "cnn", "llama_tiny", "bert_tiny", "gpt2_small")
    if args.dry_run:
        for n in names:
            print("would measure PyTorch eager %s: %s" % (n, ", ".join(VARIANTS)))
        return 0
    try:
        import torch
    except ImportError as e:
        return missing("PyTorch is not installed (%s)" % e, args.out)
    if not torch.cuda.is_available():
        return missing("torch.cuda.is_available() is false", args.out)
    table = models()
    rows = []
    for name in names:
        make, optimizer = table[name]
        for variant in VARIANTS:
            row = {"model": name, "variant": variant}
            if isinstance(make, str):
                row["skipped"] = make
            else:
                try:
                    row.update(measure(name, make, optimizer, variant,
                                       10 if name == "gpt2_small" else STEPS))
                except Exception as e:  # noqa: BLE001 - report, go on
                    row["skipped"] = "%s: %s" % (type(e).__name__, str(e)[:200])
                torch.cuda.empty_cache()
            print(json.dumps(row), flush=True)
            rows.append(row)
    with open(args.out, "w") as f:
        json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(),
                   "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
