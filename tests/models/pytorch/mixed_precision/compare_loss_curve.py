#!/usr/bin/env python3
"""Compares a loss curve of `remat-run --train` with a PyTorch reference curve.

Standard library only (CI has no torch). The reference is one of the <model>.json files beside
this script (written by make_loss_curves.py); it names the model directory and the training
settings, and this script runs

    remat-run <model>/loss/model.onnx --train --steps N --optimizer adam --lr LR --beta1 B1
              --beta2 B2 --eps EPS --weight-decay 0 --inputs <model>/loss/test_data_set_0
              [extra flags after --, e.g. --precision bf16]

parses the `step <i> loss <value>` lines it prints, and prints a table of step, reference loss,
remat's loss and their relative difference |remat - ref| / |ref|. It exits 1 when some step is
further than --rel-tol from the reference (or when --must-differ-from finds remat's curve too
close to another mode's curve), 2 on bad input or when remat-run fails.

    compare_loss_curve.py --remat-run build/bin/remat-run \\
        --reference tests/models/pytorch/mixed_precision/gpt2_tiny.json --mode bf16 \\
        --rel-tol 0.01 --must-differ-from fp32 --min-rel-diff 1e-5 -- --precision bf16

With --versus MODE it compares two of the reference's own curves instead (no remat-run), e.g.
PyTorch's bf16 curve against its fp32 curve.
"""

import argparse
import hashlib
import json
import math
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]
# With loss scaling remat-run's line goes on: "(skipped: ...) loss scale S".
STEP_LINE = re.compile(r"^step (\d+) loss (\S+)(?: .*)?$")


class Failure(Exception):
    """Bad input or a failed remat-run: exit status 2."""


def load_reference(path, mode):
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise Failure(f"cannot read the reference {path}: {e}")
    curves = doc.get("curves", {})
    if mode not in curves:
        raise Failure(f"{path} has no '{mode}' curve (it has: {', '.join(curves) or 'none'})")
    return doc


def check_model_files(doc, model_dir):
    """The reference was made from exactly these files (sha256 recorded by make_loss_curves)."""
    for rel, digest in doc["files"].items():
        path = model_dir / rel
        if not path.is_file():
            raise Failure(f"{path} does not exist (the reference names it)")
        if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            raise Failure(f"{path} is not the file the reference was made from (sha256 "
                          f"differs): another model's directory, or the model changed after "
                          f"the curves were made (make_loss_curves.py regenerates them)")


def remat_run_command(remat_run, doc, model_dir, extra):
    s = doc["settings"]
    beta1, beta2 = s["betas"]
    return [str(remat_run), str(model_dir / "loss" / "model.onnx"), "--train",
            "--steps", str(s["steps"]), "--optimizer", "adam", "--lr", repr(s["lr"]),
            "--beta1", repr(beta1), "--beta2", repr(beta2), "--eps", repr(s["eps"]),
            "--weight-decay", repr(s["weight_decay"]),
            "--inputs", str(model_dir / "loss" / "test_data_set_0")] + extra


def run_remat(command, steps):
    print("$ " + " ".join(command), flush=True)
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    losses = {}
    for line in proc.stdout.splitlines():
        m = STEP_LINE.match(line.strip())
        if m:
            losses[int(m.group(1))] = float(m.group(2))   # float() reads nan and inf too
    if proc.returncode != 0:
        raise Failure(f"remat-run exited with status {proc.returncode}:\n{proc.stdout}")
    if sorted(losses) != list(range(1, steps + 1)):
        raise Failure(f"expected `step <i> loss <value>` for steps 1..{steps} in remat-run's "
                      f"output, got steps {sorted(losses)}:\n{proc.stdout}")
    return [losses[i] for i in range(1, steps + 1)]


def relative_differences(reference, got):
    """|got - ref| / |ref| per step; NaN (never within a tolerance) where either is not finite."""
    diffs = []
    for ref, value in zip(reference, got):
        if math.isfinite(ref) and math.isfinite(value) and ref != 0:
            diffs.append(abs(value - ref) / abs(ref))
        else:
            diffs.append(math.nan)
    return diffs


def print_table(reference_name, reference, got_name, got, diffs, rel_tol):
    print(f"{'step':>4}  {reference_name:>16}  {got_name:>16}  {'rel. diff':>9}")
    for i, (ref, value, diff) in enumerate(zip(reference, got, diffs), start=1):
        mark = "" if diff <= rel_tol else "  > tolerance"
        print(f"{i:>4}  {ref:>16.9g}  {value:>16.9g}  {diff:>9.2e}{mark}")


def main(argv):
    if "--" in argv:
        split = argv.index("--")
        argv, extra = argv[:split], argv[split + 1:]
    else:
        extra = []
    parser = argparse.ArgumentParser(
        description="Compare remat-run's per-step losses with a PyTorch reference curve.",
        epilog="Flags after -- go to remat-run unchanged.")
    parser.add_argument("--reference", required=True, help="<model>.json from make_loss_curves")
    parser.add_argument("--mode", required=True, help="the reference curve: fp32, bf16, fp16, ...")
    parser.add_argument("--rel-tol", type=float, required=True,
                        help="largest allowed |remat - ref| / |ref| at any step")
    parser.add_argument("--remat-run", type=Path, help="the remat-run executable")
    parser.add_argument("--model-dir", type=Path,
                        help="the model's directory (default: the reference's model_dir in the "
                             "repository)")
    parser.add_argument("--versus", metavar="MODE",
                        help="compare the reference's MODE curve with its --mode curve instead "
                             "of running remat-run")
    parser.add_argument("--must-differ-from", metavar="MODE",
                        help="also fail unless remat's curve differs from the reference's MODE "
                             "curve by at least --min-rel-diff at some step (e.g. a bf16 run "
                             "must not be an fp32 run)")
    parser.add_argument("--min-rel-diff", type=float, default=0.0)
    args = parser.parse_args(argv)
    if (args.remat_run is None) == (args.versus is None):
        parser.error("give exactly one of --remat-run and --versus")
    if args.must_differ_from and args.min_rel_diff <= 0:
        parser.error("--must-differ-from needs a positive --min-rel-diff")

    try:
        doc = load_reference(args.reference, args.mode)
        reference = doc["curves"][args.mode]["losses"]
        if args.versus:
            load_reference(args.reference, args.versus)
            got, got_name = doc["curves"][args.versus]["losses"], f"pytorch {args.versus}"
        else:
            model_dir = args.model_dir or REPO / doc["model_dir"]
            check_model_files(doc, model_dir)
            command = remat_run_command(args.remat_run, doc, model_dir, extra)
            got, got_name = run_remat(command, doc["settings"]["steps"]), "remat-run"
        if args.must_differ_from:
            load_reference(args.reference, args.must_differ_from)
    except Failure as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    diffs = relative_differences(reference, got)
    print(f"{doc['model']}: {got_name} against PyTorch's {args.mode} curve (torch "
          f"{doc['curves'][args.mode]['torch_version']}), tolerance {args.rel_tol:g}")
    print_table(f"pytorch {args.mode}", reference, got_name, got, diffs, args.rel_tol)
    misses = [i for i, d in enumerate(diffs, start=1) if not d <= args.rel_tol]
    worst = max(range(len(diffs)), key=lambda i: math.inf if math.isnan(diffs[i]) else diffs[i])
    print(f"worst step {worst + 1}: relative difference {diffs[worst]:.3g}")
    ok = not misses
    if misses:
        print(f"FAIL: {len(misses)} of {len(diffs)} steps beyond {args.rel_tol:g}: "
              f"{', '.join(map(str, misses))}")
    if args.must_differ_from:
        other = doc["curves"][args.must_differ_from]["losses"]
        apart = max((d for d in relative_differences(other, got) if not math.isnan(d)),
                    default=0.0)
        if apart >= args.min_rel_diff:
            print(f"{got_name} differs from PyTorch's {args.must_differ_from} curve by up to "
                  f"{apart:.3g} (>= {args.min_rel_diff:g})")
        else:
            ok = False
            print(f"FAIL: {got_name} is within {apart:.3g} of PyTorch's "
                  f"{args.must_differ_from} curve at every step (< {args.min_rel_diff:g}): "
                  f"it does not look like a {args.mode} run")
    if ok:
        print("PASS")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
