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
                  skipped); any other CUDA error fails the test.
                  Tolerances, fp32 on both sides, different GEMM and
                  reduction orders:
                    losses      |cuda - cpu| <= 1e-4 * max(1, |cpu|)
                    parameters  |cuda - cpu| <= atol + 1e-3 * |cpu|,
                                atol = 1e-5 for SGD; for Adam, whose
                                normalised step turns tiny gradient
                                differences into up to lr per step, lr*steps
                    peak        measured <= planned + 64 MiB (the device's
                                free-memory figures also count cuBLAS's
                                workspace and allocation granularity)
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
import tensor_proto  # noqa: E402

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
    cpu_losses = [float(m.group(1))
                  for m in re.finditer(r"^step \d+ loss (\S+)$", log, re.M)]

    ok = True
    print("losses  cuda %s\n        cpu  %s" % (report["losses"], cpu_losses))
    if len(report["losses"]) != len(cpu_losses) or any(
            abs(a - b) > 1e-4 * max(1.0, abs(b))
            for a, b in zip(report["losses"], cpu_losses)):
        print("FAIL: losses differ beyond 1e-4 relative")
        ok = False

    atol = 1e-5 if args.optimizer == "sgd" else float(args.lr) * args.steps
    names = sorted(os.listdir(cpu_params))
    if sorted(os.listdir(cuda_params)) != names or not names:
        print("FAIL: different parameter sets")
        ok = False
    worst = (float("-inf"), "")
    for name in names:
        _, _, a = tensor_proto.read(os.path.join(cuda_params, name))
        _, _, b = tensor_proto.read(os.path.join(cpu_params, name))
        if len(a) != len(b):
            print("FAIL: %s has %d elements on CUDA, %d on CPU" % (name, len(a), len(b)))
            ok = False
            continue
        for x, y in zip(a, b):
            excess = abs(x - y) - (atol + 1e-3 * abs(y))
            if excess > worst[0]:
                worst = (excess, name)
    if worst[0] > 0:
        ok = False
    print("%d parameter files; largest |cuda - cpu| - tolerance: %.3g (%s)" %
          (len(names), worst[0], worst[1]))

    slack = 64 << 20
    print("peak %d bytes measured, %d planned; median step %.4f s" %
          (report["peak_bytes"], report["planned_peak_bytes"],
           report["step_seconds_median"]))
    if report["peak_bytes"] > report["planned_peak_bytes"] + slack:
        print("FAIL: measured peak exceeds the plan by more than 64 MiB")
        ok = False
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
    p.add_argument("--work", required=True)
    args = p.parse_args()
    training = ["--budget", args.budget, "--strategy", args.strategy,
                "--target", "cpu", "--optimizer", args.optimizer, "--lr", args.lr]
    exe = os.path.join(args.work, "train")
    if args.mode == "build":
        return build(args, training, exe)
    return compare(args, training, exe)


if __name__ == "__main__":
    sys.exit(main())
