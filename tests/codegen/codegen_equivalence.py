#!/usr/bin/env python3
"""Generated training executable == remat-run, bit for bit (CPU backend).

Builds the executable with `remat-opt MODEL --budget B --emit=exe --backend
cpu`, trains N steps with it and with the interpreter (`remat-run --train`
under the same budget, strategy and flags), and requires:
  * identical losses (the executable prints them with 9 significant digits,
    remat-run with 6 decimals: both are compared as remat-run prints them,
    and the parameters below pin the rest down);
  * byte-identical parameters and updated buffers after the last step
    (both tools write them with the same TensorProto writer);
  * the executable's JSON report carries the documented keys, and its
    measured peak does not exceed the plan's;
  * no heap allocation inside a step (step_allocations == 0, counted by the
    executable's own allocation hooks), in a second run with OpenBLAS on
    one thread: threaded OpenBLAS GEMMs malloc a job table on every call
    (its level-3 thread driver), which remat cannot avoid; and one thread
    changes GEMM rounding, so this run is not the one compared above.
Standard library only (CI's python has no onnx).
"""
import argparse
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys


def run(cmd, merge_stderr=True):
    print("+ " + " ".join(cmd), flush=True)
    result = subprocess.run(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                            text=True)
    if result.returncode != 0:
        print(result.stdout)
        print(result.stderr or "")
        sys.exit("FAIL: exit status %d" % result.returncode)
    if not merge_stderr:
        print(result.stderr.strip())
    return result.stdout


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--remat-opt", required=True)
    p.add_argument("--remat-run", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--inputs", required=True)
    p.add_argument("--budget", required=True)
    p.add_argument("--strategy", default="auto")
    p.add_argument("--optimizer", default="adam")
    p.add_argument("--lr", default="1e-3")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--precision", default="fp32")
    p.add_argument("--loss-scale-flags", default="",
                   help="extra loss-scaling flags for both tools, e.g. "
                        "'--init-loss-scale 16777216 --growth-interval 2'")
    p.add_argument("--work", required=True)
    args = p.parse_args()

    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    exe = os.path.join(args.work, "train")
    training = ["--budget", args.budget, "--strategy", args.strategy,
                "--target", "cpu", "--optimizer", args.optimizer, "--lr", args.lr,
                "--precision", args.precision] + args.loss_scale_flags.split()

    out = run([args.remat_opt, args.model] + training +
              ["--emit=exe", "--backend", "cpu", "-o", exe])
    print(out.strip().splitlines()[-1])

    exe_params = os.path.join(args.work, "exe-params")
    report = json.loads(run([exe, "--steps", str(args.steps), "--inputs", args.inputs,
                             "--dump-params", exe_params, "--json"], merge_stderr=False))
    for key in ["losses", "step_seconds_median", "samples_per_second",
                "peak_bytes", "planned_peak_bytes", "precision", "skipped_steps"]:
        if key not in report:
            sys.exit("FAIL: the executable's --json has no '%s'" % key)

    run_params = os.path.join(args.work, "run-params")
    log = run([args.remat_run, args.model, "--train", "--steps", str(args.steps),
               "--inputs", args.inputs, "--dump-params", run_params] + training)
    # With loss scaling the line goes on: "(skipped: ...) loss scale S".
    run_losses = [m.group(1) for m in re.finditer(r"^step \d+ loss (\S+)", log, re.M)]
    run_skipped = len(re.findall(r"^step \d+ loss \S+ \(skipped", log, re.M))

    ok = True
    exe_losses = ["%.6f" % float(x) for x in report["losses"]]
    print("losses  executable %s\n        remat-run  %s" % (exe_losses, run_losses))
    if exe_losses != run_losses or len(run_losses) != args.steps:
        print("FAIL: losses differ")
        ok = False
    if report["precision"] != args.precision:
        print("FAIL: the executable reports precision %s, not %s" %
              (report["precision"], args.precision))
        ok = False
    if report["skipped_steps"] != run_skipped:
        print("FAIL: the executable skipped %d steps, remat-run %d" %
              (report["skipped_steps"], run_skipped))
        ok = False
    names = sorted(os.listdir(run_params))
    if sorted(os.listdir(exe_params)) != names or not names:
        print("FAIL: different parameter sets: %s vs %s" %
              (sorted(os.listdir(exe_params)), names))
        ok = False
    else:
        differ = [n for n in names if not filecmp.cmp(os.path.join(exe_params, n),
                                                      os.path.join(run_params, n),
                                                      shallow=False)]
        print("%d parameter files, %d differ %s" % (len(names), len(differ), differ[:5]))
        ok &= not differ
    if report["peak_bytes"] > report["planned_peak_bytes"]:
        print("FAIL: measured peak %d > planned %d" %
              (report["peak_bytes"], report["planned_peak_bytes"]))
        ok = False
    print("peak %d bytes measured, %d planned; median step %.4f s" %
          (report["peak_bytes"], report["planned_peak_bytes"],
           report["step_seconds_median"]))

    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    single = json.loads(run([exe, "--steps", str(args.steps), "--inputs",
                             args.inputs, "--json"], merge_stderr=False))
    del os.environ["OPENBLAS_NUM_THREADS"]
    print("heap allocations inside %d steps (OpenBLAS on one thread): %d" %
          (args.steps, single.get("step_allocations", -1)))
    if single.get("step_allocations") != 0:
        print("FAIL: the training steps allocated on the heap")
        ok = False
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
