#!/usr/bin/env python3
"""Fused attention throughput: remat's CUDA kernels (the attention-bench
executable) against torch.nn.functional.scaled_dot_product_attention on the
same GPU, bf16 and fp32, b=8 h=12 s=1024 d=64, in three forms: no mask, the
causal flag, and an additive [1, 1, s, s] causal mask (GPT-2's, when its
mask is a graph input); forward and backward TFLOP/s with the compiler's
FLOP count (forward 4*b*h*s^2*d, halved with the causal flag; backward
2.5x). Prints a table and writes the rows as JSON. A missing torch or GPU
is a named skip for the torch rows, not a crash."""
import argparse
import json
import subprocess
import sys

B, H, S, D = 8, 12, 1024, 64
WARMUP, ITERS = 3, 20


FORMS = ("none", "causal", "additive")


def flops(form):
    forward = 4.0 * B * H * S * S * D * (0.5 if form == "causal" else 1.0)
    return forward, 2.5 * forward


def remat_rows(binary):
    args = [binary, "--batch", str(B), "--heads", str(H), "--seq", str(S),
            "--dim", str(D), "--iters", str(ITERS)]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        print("FAIL: attention-bench exited %d: %s" % (done.returncode,
                                                       done.stderr.strip()))
        return None
    return [json.loads(line) for line in done.stdout.splitlines()
            if line.startswith("{")]


def torch_rows():
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("SKIPPED: torch rows (torch is not installed)")
        return []
    if not torch.cuda.is_available():
        print("SKIPPED: torch rows (no CUDA device)")
        return []

    def time_ms(f):
        for _ in range(WARMUP):
            f()
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(ITERS):
            f()
        stop.record()
        torch.cuda.synchronize()
        return start.elapsed_time(stop) / ITERS

    rows = []
    gen = torch.Generator(device="cuda").manual_seed(0)
    shape = (B, H, S, D)
    for dtype, name in ((torch.bfloat16, "bf16"), (torch.float32, "f32")):
        q, k, v, dout = (torch.rand(shape, device="cuda", dtype=dtype,
                                    generator=gen) * 2 - 1 for _ in range(4))
        for t in (q, k, v):
            t.requires_grad_(True)
        hidden = torch.ones(S, S, device="cuda", dtype=torch.bool).triu(1)
        mask = torch.zeros(1, 1, S, S, device="cuda", dtype=dtype)
        mask.masked_fill_(hidden, torch.finfo(dtype).min)
        for form in FORMS:
            kwargs = {"is_causal": form == "causal",
                      "attn_mask": mask if form == "additive" else None}
            with torch.no_grad():
                fwd = time_ms(lambda: F.scaled_dot_product_attention(
                    q, k, v, **kwargs))
            out = F.scaled_dot_product_attention(q, k, v, **kwargs)
            # The backward alone: the graph (and its saved tensors) is kept.
            bwd = time_ms(lambda: torch.autograd.grad(out, (q, k, v), dout,
                                                      retain_graph=True))
            for pass_, ms, count in (("forward", fwd, flops(form)[0]),
                                     ("backward", bwd, flops(form)[1])):
                rows.append({"impl": "torch-sdpa", "dtype": name,
                             "mask": form, "pass": pass_, "batch": B,
                             "heads": H, "seq": S, "dim": D,
                             "ms": round(ms, 4),
                             "tflops": round(count / (ms * 1e-3) / 1e12, 2)})
            del out
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--remat", required=True,
                        help="the attention-bench executable")
    parser.add_argument("--out", help="JSON file for the rows")
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()
    if args.dry_run:
        print("would time %s and torch sdpa at b=%d h=%d s=%d d=%d bf16, f32"
              % (args.remat, B, H, S, D))
        return 0
    remat = remat_rows(args.remat)
    rows = (remat or []) + torch_rows()
    print("%-11s %-5s %-9s %-9s %10s %9s" % ("impl", "dtype", "mask", "pass",
                                              "ms", "TFLOP/s"))
    for r in rows:
        print("%-11s %-5s %-9s %-9s %10.3f %9.2f" % (
            r["impl"], r["dtype"], r["mask"], r["pass"], r["ms"], r["tflops"]))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if remat is not None else 1


if __name__ == "__main__":
    sys.exit(main())
