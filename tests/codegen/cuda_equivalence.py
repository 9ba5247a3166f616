#!/usr/bin/env python3
"""Generated CUDA training executables: they build, and on a GPU they train
like the interpreter.

  --mode build    `remat-opt MODEL --budget B --emit=exe --backend cuda`:
                  the generated .cu and the CUDA runtime must compile and
                  link with nvcc. Runs without a GPU, so CI keeps the CUDA
                  code generation honest on every machine with nvcc.
  --mode compare  runs the executable built by --mode build for N steps and
                  compares it with remat-run under the same plan (the CPU
                  executable equals remat-run bit for bit, see
                  codegen_equivalence.py). Without a GPU it prints
                  "SKIPPED: no CUDA device" (ctest reports the test as
                  skipped); any other CUDA error fails the test. The
                  tolerances are cuda_compare.py's (shared with the GPU
                  bundle, tools/gpu).
Standard library only (CI's python has no onnx).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cuda_compare  # noqa: E402

# The harness's message when the machine has no GPU or no driver (and only
# then: any other CUDA error names itself and fails the test).
NO_DEVICE = "CUDA device: no CUDA device available"


def run(cmd):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)


def must(result):
    if result.returncode != 0:
        print(result.stdout)
        print(result.stderr)
        sys.exit("FAIL: exit status %d" % result.returncode)
    return result.stdout


def build(args, training, exe):
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    out = must(run([args.remat_opt, args.model] + training +
                   ["--emit=exe", "--backend", "cuda", "-o", exe]))
    print(out.strip().splitlines()[-1])
    source = os.path.join(exe + ".build", "train_step.cu")
    if not os.path.isfile(exe) or not os.path.isfile(source):
        sys.exit("FAIL: no executable or no train_step.cu in %s.build" % exe)
    print("PASS: built %s from %s" % (exe, source))
    return 0


def compare(args, training, exe):
    if not os.path.isfile(exe):
        sys.exit("FAIL: %s was not built (its build test must run first)" % exe)
    cuda_params = os.path.join(args.work, "cuda-params")
    shutil.rmtree(cuda_params, ignore_errors=True)
    result = run([exe, "--steps", str(args.steps), "--inputs", args.inputs,
                  "--dump-params", cuda_params, "--json"])
    if result.returncode != 0 and NO_DEVICE in result.stderr:
        print(result.stderr.strip())
        print("SKIPPED: no CUDA device")
        return 0
    report = json.loads(must(result))
    print(result.stderr.strip())

    cpu_params = os.path.join(args.work, "cpu-params")
    shutil.rmtree(cpu_params, ignore_errors=True)
    log = must(run([args.remat_run, args.model, "--train", "--steps",
                    str(args.steps), "--inputs", args.inputs,
                    "--dump-params", cpu_params] + training))
    # With loss scaling the line goes on: "(skipped...) loss scale S".
    cpu_losses = [float(m.group(1))
                  for m in re.finditer(r"^step \d+ loss (\S+)", log, re.M)]

    failures, notes = cuda_compare.compare(
        report, cpu_losses, cuda_params, cpu_params, args.optimizer, args.lr,
        args.steps, args.precision)
    print("\n".join(notes))
    for failure in failures:
        print("FAIL: " + failure)
    ok = not failures
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["build", "compare"], required=True)
    p.add_argument("--remat-opt", required=True)
    p.add_argument("--remat-run", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--inputs", required=True)
    p.add_argument("--budget", required=True)
    p.add_argument("--strategy", default="auto")
    p.add_argument("--optimizer", default="sgd")
    p.add_argument("--lr", default="0.1")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--precision", default="fp32")
    p.add_argument("--work", required=True)
    args = p.parse_args()
    training = ["--budget", args.budget, "--strategy", args.strategy,
                "--target", "cpu", "--optimizer", args.optimizer, "--lr", args.lr,
                "--precision", args.precision]
    exe = os.path.join(args.work, "train")
    if args.mode == "build":
        return build(args, training, exe)
    return compare(args, training, exe)


if __name__ == "__main__":
    sys.exit(main())
