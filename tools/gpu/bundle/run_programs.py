#!/usr/bin/env python3
"""Runs the bundle's generated CUDA programs (programs.json): each against
remat-run's reference under the same plan (cuda_compare.py's tolerances),
then a timed run for the step time (median after warm-up) and the measured
peak against the plan and the budget. Writes OUT/programs.json, and each
check's report and parameters in OUT/work. Where the bundle travelled
without the reference parameters (too large to carry), the checks are
deferred: --compare-only does them later where OUT/work was brought back to.
With --report-only, merges it with the kernel tests', PyTorch's and the
benches' results into OUT/results.json and OUT/results.md. Standard library
only."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "python"))
import cuda_compare  # noqa: E402

WARMUP = 5       # steps dropped before the median (eager step, graph capture)
TIMED_STEPS = 50  # GPT-2 small: 15
# Per program run; REMAT_PROGRAM_TIMEOUT_S shortens it for a short GPU window.
TIMEOUT_S = int(os.environ.get("REMAT_PROGRAM_TIMEOUT_S", "240"))


def run(cmd, dry, env=None):
    """Runs cmd (with `env` added to the environment), or only prints it."""
    print("+ " + "".join("%s=%s " % kv for kv in (env or {}).items()) +
          " ".join(cmd), flush=True)
    if dry:
        return None
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=TIMEOUT_S,
                              env=dict(os.environ, **env) if env else None)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", "timed out after %d s" % TIMEOUT_S)


def program_args(bundle, p):
    args = ["--weights", os.path.join(bundle, p["model"]), "--json"]
    if p["inputs"]:
        args += ["--inputs", os.path.join(bundle, p["inputs"])]
    if p["random_weights"]:
        args += ["--random-weights"]
    return args


def fp32_reference(bundle, programs, p):
    """The parameters remat-run reached in fp32 on the same model, optimizer
    and learning rate, for a 16-bit program (cuda_compare's scale of 16-bit
    error); None when the bundle has none."""
    if p.get("precision", "fp32") == "fp32":
        return None
    for q in programs:
        if q["reference"] and q.get("precision", "fp32") == "fp32" and \
                (q["model"], q["optimizer"], q["lr"]) == (p["model"], p["optimizer"], p["lr"]):
            return os.path.join(bundle, "reference", q["name"], "params")
    return None


def check(bundle, exe, p, work, dry, fp32_params=None):
    """The equivalence check: a list of failures (empty = pass) and notes.
    The run's report and parameters stay in `work`; where the bundle came
    without the reference parameters (too large for the GPU machine), the
    check is deferred to compare_saved on a machine that has them."""
    params = os.path.join(work, p["name"] + "-params")
    result = run([exe, "--steps", str(p["reference_steps"]), "--dump-params",
                  params] + program_args(bundle, p), dry)
    if dry:
        return [], []
    if result.returncode != 0:
        return ["%s exited %d: %s" % (p["name"], result.returncode,
                                      result.stderr.strip()[-400:])], []
    with open(os.path.join(work, p["name"] + "-report.json"), "w") as f:
        f.write(result.stdout)
    if not os.path.isdir(os.path.join(bundle, "reference", p["name"], "params")):
        return [], [DEFERRED]
    return compare_saved(bundle, p, work, fp32_params)


# The note of a check whose comparison waits for the reference parameters.
DEFERRED = "deferred: no reference parameters here; compare with --compare-only"


def compare_saved(bundle, p, work, fp32_params):
    """Compares a program's saved report and parameters (check) with
    remat-run's under cuda_compare's tolerances: failures and notes."""
    ref = os.path.join(bundle, "reference", p["name"])
    with open(os.path.join(work, p["name"] + "-report.json")) as f:
        report = json.load(f)
    with open(os.path.join(ref, "remat-run.log")) as f:
        # With loss scaling the line goes on: "(skipped...) loss scale S".
        cpu_losses = [float(m.group(1)) for m in
                      re.finditer(r"^step \d+ loss (\S+)", f.read(), re.M)]
    return cuda_compare.compare(report, cpu_losses,
                                os.path.join(work, p["name"] + "-params"),
                                os.path.join(ref, "params"), p["optimizer"],
                                p["lr"], p["reference_steps"],
                                p.get("precision", "fp32"), fp32_params)


def compare_all(args):
    """--compare-only: the deferred checks of a run whose OUT/work came back
    from the GPU machine, against this bundle's reference parameters;
    updates OUT/programs.json."""
    with open(os.path.join(args.bundle, "programs.json")) as f:
        programs = {p["name"]: p for p in json.load(f)}
    results = load(os.path.join(args.out, "programs.json"), [])
    compared, failed = 0, []
    for entry in results:
        p = programs[entry["name"]]
        if entry.get("equivalence") != DEFERRED:
            continue
        compared += 1
        failures, notes = compare_saved(args.bundle, p, os.path.join(args.out, "work"),
                                        fp32_reference(args.bundle, list(programs.values()), p))
        print("\n".join(notes))
        entry["equivalence"] = "FAIL" if failures else "PASS"
        entry["failures"] = failures
        for failure in failures:
            print("FAIL: %s: %s" % (p["name"], failure), flush=True)
        failed += [p["name"]] if failures else []
    with open(os.path.join(args.out, "programs.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("%d deferred checks, %d failed%s" % (
        compared, len(failed),
        (": " + ", ".join(failed)) if failed else ""))
    return 1 if failed else 0


def measure(bundle, exe, p, dry):
    steps = 15 if p["name"].startswith("gpt2_small") else TIMED_STEPS
    result = run([exe, "--steps", str(steps)] + program_args(bundle, p), dry)
    if dry:
        return {}
    if result.returncode != 0:
        return {"error": "exit %d: %s" % (result.returncode, result.stderr.strip()[-400:])}
    r = json.loads(result.stdout)
    timed = r["step_seconds"][WARMUP:] or r["step_seconds"]
    return {"steps": steps, "warmup_steps": min(WARMUP, steps - 1),
            "step_seconds_median": statistics.median(timed),
            "samples_per_step": r["samples_per_step"],
            "peak_bytes": r["peak_bytes"],
            "planned_peak_bytes": r["planned_peak_bytes"],
            "budget_bytes": r["budget_bytes"],
            "peak_within_plan_slack": r["peak_bytes"] <= r["planned_peak_bytes"]
            + cuda_compare.PEAK_SLACK_BYTES,
            "peak_within_budget": r["peak_bytes"] <= r["budget_bytes"],
            "device": r["device"]}


# Programs whose step is profiled per kernel (REMAT_CUDA_PROFILE: every
# step eager, per-kernel times on stderr), for where the time goes.
PROFILED = ("gpt2_small-baseline", "gpt2_small-bf16-baseline")
PROFILE_STEPS = 4  # the first is warm-up


def profile_all(args):
    with open(os.path.join(args.bundle, "programs.json")) as f:
        programs = [p for p in json.load(f) if p["name"] in PROFILED]
    failed = 0
    for p in programs:
        exe = os.path.join(args.bin, p["name"])
        done = run([exe, "--steps", str(PROFILE_STEPS)] + program_args(args.bundle, p),
                   args.dry_run, env={"REMAT_CUDA_PROFILE": "1"})
        if done is None:
            continue
        text, rc = done.stderr, done.returncode
        table = text[text.find("remat CUDA profile"):] if "remat CUDA profile" in text \
            else "no profile (exit %d): %s" % (rc, text.strip()[-400:])
        with open(os.path.join(args.out, "profile-%s.txt" % p["name"]), "w") as f:
            f.write(table)
        print(table, flush=True)
        failed += rc != 0
    return 1 if failed else 0


def run_all(args):
    with open(os.path.join(args.bundle, "programs.json")) as f:
        programs = json.load(f)
    work = os.path.join(args.out, "work")
    os.makedirs(work, exist_ok=True)
    results, failed = [], []
    for p in programs:
        exe = os.path.join(args.bin, p["name"])
        entry = {"name": p["name"], "budget": p["budget"], "strategy": p["strategy"],
                 "optimizer": p["optimizer"], "target": p["target"],
                 "precision": p.get("precision", "fp32")}
        with open(os.path.join(args.bundle, "programs", p["name"], "plan.json")) as f:
            plan = json.load(f)
        entry["estimated_step_seconds"] = plan.get("estimated_step_seconds")
        if not args.dry_run and not os.path.isfile(exe):
            entry["equivalence"] = "FAIL"
            entry["failures"] = ["%s was not built" % exe]
        elif p["reference"]:
            failures, notes = check(args.bundle, exe, p, work, args.dry_run,
                                    fp32_reference(args.bundle, programs, p))
            print("\n".join(notes))
            entry["equivalence"] = DEFERRED if DEFERRED in notes else \
                "FAIL" if failures else "PASS"
            entry["failures"] = failures
        else:
            print("%s: equivalence check skipped (no reference: remat-run is "
                  "too slow on a CPU at this size); measured only" % p["name"])
            entry["equivalence"] = "skipped: no reference (too large for remat-run)"
        for failure in entry.get("failures", []):
            print("FAIL: %s: %s" % (p["name"], failure), flush=True)
            failed.append(p["name"])
        if os.path.isfile(exe) or args.dry_run:
            entry["measured"] = measure(args.bundle, exe, p, args.dry_run)
        results.append(entry)
        if not args.dry_run:  # after each program: a stopped run keeps what it measured
            with open(os.path.join(args.out, "programs.json"), "w") as f:
                json.dump(results, f, indent=1)
    print("%d programs, %d failed the equivalence check%s" % (
        len(programs), len(set(failed)),
        (": " + ", ".join(sorted(set(failed)))) if failed else ""))
    return 1 if failed else 0


def load(path, default):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def load_lines(path):
    """The JSON objects of a bench's output, one per line."""
    if not os.path.isfile(path):
        return []
    return [json.loads(line) for line in open(path) if line.startswith("{")]


def mb(value):
    return "—" if value is None else "%.1f" % (value / 2**20)


def ms(value):
    return "—" if value is None else "%.3f" % (value * 1e3)


def section(lines, title, rows, source, header, rule, format_row):
    """Appends a results.md section: a table of a bench's rows, or a line
    saying its output file is missing."""
    lines += ["", "## " + title, ""]
    if not rows:
        lines.append("no " + source)
    else:
        lines += [header, rule] + [format_row(row) for row in rows]


def report(args):
    if args.dry_run:
        print("would write %s/results.json and results.md" % args.out)
        return 0
    out = args.out
    status = {}
    if os.path.isfile(os.path.join(out, "status")):
        for line in open(os.path.join(out, "status")):
            name, rc, seconds = line.split()
            status[name] = {"exit": int(rc), "seconds": int(seconds)}
    kernel = load(os.path.join(out, "kernel-tests.json"), {})
    programs = load(os.path.join(out, "programs.json"), [])
    torch = load(os.path.join(out, "torch.json"), {"skipped": "no torch.json"})
    attention = load(os.path.join(out, "attention-bench.json"), [])
    gemms = load_lines(os.path.join(out, "gemm-bench.jsonl"))
    kernels = load_lines(os.path.join(out, "kernel-bench.jsonl"))
    gpu = open(os.path.join(out, "gpu.txt")).read().strip() \
        if os.path.isfile(os.path.join(out, "gpu.txt")) else "unknown"
    revision = open(os.path.join(args.bundle, "REVISION")).read().strip()
    results = {"revision": revision, "gpu": gpu, "stages": status,
               "kernel_tests": {k: kernel.get(k) for k in
                                ("tests", "failures", "disabled", "errors")},
               "programs": programs, "torch_eager": torch,
               "attention": attention, "gemms": gemms, "kernels": kernels}
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)

    lines = ["# remat CUDA results", "",
             "revision %s, GPU: %s" % (revision, gpu), "",
             "stages: " + ", ".join("%s exit %d (%d s)" % (k, v["exit"], v["seconds"])
                                    for k, v in status.items()), "",
             "CUDA kernel tests: %s tests, %s failures" % (
                 kernel.get("tests", "?"), kernel.get("failures", "?")), "",
             "| program | precision | budget | strategy | equivalence | step ms (median) | "
             "est. step ms | peak MiB | planned MiB | budget MiB |",
             "|---|---|---|---|---|---:|---:|---:|---:|---:|"]
    for p in programs:
        m = p.get("measured", {})
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            p["name"], p.get("precision", "fp32"), p["budget"], p["strategy"],
            p["equivalence"] + ("".join("; " + x for x in p.get("failures", []))),
            ms(m.get("step_seconds_median")), ms(p.get("estimated_step_seconds")),
            mb(m.get("peak_bytes")), mb(m.get("planned_peak_bytes")),
            mb(m.get("budget_bytes")) if m.get("budget_bytes", 0) < 2**40 else "none"))
    lines += ["", "## PyTorch eager (same GPU)", ""]
    if "skipped" in torch:
        lines.append("skipped: " + torch["skipped"])
    else:
        lines += ["| model | variant | step ms (median) | max_memory_allocated MiB |",
                  "|---|---|---:|---:|"]
        for row in torch.get("rows", []):
            lines.append("| %s | %s | %s | %s |" % (
                row["model"], row["variant"],
                ms(row.get("step_seconds_median")) if "skipped" not in row else "skipped: " + row["skipped"],
                mb(row.get("max_memory_allocated"))))
    section(lines, "Fused attention vs torch sdpa (b=8 h=12 s=1024 d=64, same GPU)",
            attention, "attention-bench.json",
            "| impl | dtype | mask | pass | ms | TFLOP/s |", "|---|---|---|---|---:|---:|",
            lambda row: "| %s | %s | %s | %s | %.3f | %.2f |" % (
                row["impl"], row.get("dtype", "bf16"), row.get("mask", "?"),
                row["pass"], row["ms"], row["tflops"]))
    section(lines, "GPT-2 small's GEMMs (gemm-bench, same GPU)", gemms, "gemm-bench.jsonl",
            "| impl | dtype | gemm | m x n x k (batch) | ms | TFLOP/s |",
            "|---|---|---|---|---:|---:|",
            lambda row: "| %s | %s | %s | %d x %d x %d (%d) | %.3f | %.1f |" % (
                row["impl"], row["dtype"], row["gemm"], row["m"], row["n"],
                row["k"], row["batch"], row["ms"], row["tflops"]))
    section(lines, "Memory-bound kernels' bandwidth (kernel-bench, same GPU)", kernels,
            "kernel-bench.jsonl",
            "| kernel | dtype | shape | MB moved | ms | GB/s | of the device copy |",
            "|---|---|---|---:|---:|---:|---:|",
            lambda row: "| %s | %s | %s | %.0f | %.3f | %.0f | %.0f%% |" % (
                row["kernel"], row["dtype"], row["shape"], row["bytes"] / 1e6,
                row["ms"], row["gbps"], 100 * row["of_copy"]))
    for name in PROFILED:
        path = os.path.join(out, "profile-%s.txt" % name)
        if os.path.isfile(path):
            lines += ["", "## Where %s's step goes (REMAT_CUDA_PROFILE)" % name, "",
                      "```", open(path).read().strip(), "```"]
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bundle", required=True)
    p.add_argument("--bin")
    p.add_argument("--out", required=True)
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--compare-only", action="store_true",
                   help="compare the parameters a run left in OUT/work with "
                   "the bundle's references (deferred checks)")
    p.add_argument("--profile", action="store_true",
                   help="profile the PROFILED programs per kernel instead")
    args = p.parse_args()
    if args.report_only:
        return report(args)
    if args.compare_only:
        return compare_all(args)
    return profile_all(args) if args.profile else run_all(args)


if __name__ == "__main__":
    sys.exit(main())
