#!/usr/bin/env python3
"""Sweep memory budgets with remat-opt and print a Markdown table.

    budget_sweep.py --remat-opt build/bin/remat-opt MODEL.onnx \
        [--target h100] [--strategies none,all,sqrt,milp,auto] \
        [--milp-seconds 10] [--step 5]

1. Runs ``--strategy auto`` at a huge budget (1 TB) for ``baseline_peak_bytes``
   and ``baseline_step_seconds``, and at a tiny budget (1 B) for
   ``minimum_feasible_bytes`` (the memory floor; remat-opt exits 2 there).
2. For budgets from the floor up to the baseline peak, in steps of ``--step``
   percent of the baseline peak (the baseline itself is always the last row),
   runs every strategy with ``--emit=json``.
3. Prints a Markdown table: budget (GB = 1e9 bytes; MB below 1 GB) | per strategy the
   estimated step-time overhead vs the unplanned step (``—`` when the plan does
   not fit) | the MILP gap where the MILP solved | auto/MILP step-time ratio
   where the MILP proved optimality | the certified lower bound on the step
   time as an overhead (``optimality_bound_seconds``) | auto's optimality gap
   (``optimality_gap``: estimated / bound - 1) | auto's planner seconds.

Exit status 2 from remat-opt (budget infeasible, JSON still printed) is a
normal outcome; so is ``--strategy milp`` declining a graph it cannot solve
(exit 1, "cannot plan this step: <why>"), shown as ``n/s``. Any other
non-zero status is reported as ``error`` in the table and on stderr. Progress goes to stderr, the table to stdout.
Standard library only (Python >= 3.9); runs one remat-opt at a time.
"""

import argparse
import json
import math
import re
import subprocess
import sys
import time

HUGE_BUDGET = "1TB"
TINY_BUDGET = "1B"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Runner:
    def __init__(self, args):
        self.args = args
        self.results = []  # every run, for --raw

    def run(self, budget, strategy):
        """Run remat-opt once; return (status, json-dict-or-None, stderr)."""
        a = self.args
        cmd = [a.remat_opt, a.model, "--budget", str(budget), "--target", a.target,
               "--strategy", strategy, "--emit=json"]
        if strategy == "milp":
            cmd += ["--milp-seconds", str(a.milp_seconds)]
        cmd += a.extra
        t0 = time.monotonic()
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  universal_newlines=True, timeout=a.timeout)
        except subprocess.TimeoutExpired:
            log(f"  {strategy:>5} @ {budget}: TIMEOUT after {a.timeout}s")
            self.results.append({"budget": budget, "strategy": strategy, "status": "timeout"})
            return "timeout", None, ""
        wall = time.monotonic() - t0
        declined = re.search(r"--strategy \S+ cannot plan this step: (.*)", proc.stderr)
        if proc.returncode == 1 and declined:
            log(f"  {strategy:>5} @ {budget}: declined: {declined.group(1)}")
            self.results.append({"budget": budget, "strategy": strategy, "status": "declined",
                                 "returncode": proc.returncode, "reason": declined.group(1)})
            return "declined", {"_declined": declined.group(1)}, proc.stderr
        data = None
        if proc.returncode in (0, 2):
            try:
                data = json.loads(proc.stdout)
            except ValueError:
                data = None
        if data is None:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            log(f"  {strategy:>5} @ {budget}: ERROR exit {proc.returncode}: " + " | ".join(tail))
            self.results.append({"budget": budget, "strategy": strategy, "status": "error",
                                 "returncode": proc.returncode, "stderr": proc.stderr[-2000:]})
            return "error", None, proc.stderr
        status = "fit" if data.get("feasible") else "infeasible"
        if (proc.returncode == 2) != (status == "infeasible"):
            log(f"  warning: exit {proc.returncode} but feasible={data.get('feasible')}")
        if status == "fit" and isinstance(budget, int) and data.get("peak_bytes", 0) > budget:
            log(f"  warning: {strategy} @ {budget}: feasible but peak_bytes "
                f"{data['peak_bytes']} > budget")
        data["_wall_seconds"] = wall
        errs = [l for l in proc.stderr.splitlines() if "error:" in l]
        if errs and proc.returncode == 0:
            # remat-opt printed diagnostics yet exited 0 (e.g. an IR verifier
            # complaint after rewriting): keep the result but flag it.
            data["_stderr_errors"] = errs
            log(f"  warning: {strategy} @ {budget}: exit 0 but stderr has "
                f"{len(errs)} error line(s): {errs[0][-120:]}")
        self.results.append({"budget": budget, "strategy": strategy, "status": status,
                             "returncode": proc.returncode, "json": data})
        return status, data, proc.stderr


UNIT = [1e9, "GB"]  # switched to MB for small models (baseline < 1 GB)


def gb(n):
    return f"{n / UNIT[0]:.2f}" if UNIT[1] == "GB" else f"{n / UNIT[0]:.3f}"


def milp_unsolved(data):
    """The MILP declined (remat-opt exit 1: over its size limit, or out of
    time without a solution)."""
    return bool((data or {}).get("_declined"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--remat-opt", required=True, help="path to remat-opt")
    ap.add_argument("model", help="ONNX model")
    ap.add_argument("--target", default="h100")
    ap.add_argument("--strategies", default="none,all,sqrt,milp,auto")
    ap.add_argument("--milp-seconds", type=float, default=10)
    ap.add_argument("--step", type=float, default=5, help="budget step, percent of baseline peak")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per remat-opt run")
    ap.add_argument("--raw", help="write every run's JSON to this file")
    ap.add_argument("extra", nargs="*", help="extra remat-opt flags after --")
    a = ap.parse_args()
    strategies = [s.strip() for s in a.strategies.split(",") if s.strip()]
    if not 0 < a.step <= 100:
        ap.error("--step must be in (0, 100]")
    r = Runner(a)

    log(f"calibrating {a.model} (target {a.target})")
    st_hi, hi, _ = r.run(HUGE_BUDGET, "auto")
    if hi is None or st_hi != "fit":
        log(f"auto at {HUGE_BUDGET} did not produce a feasible plan ({st_hi}); giving up")
        return 1
    baseline = int(hi["baseline_peak_bytes"])
    if baseline < 1e9:
        UNIT[:] = [1e6, "MB"]
    base_step = float(hi["baseline_step_seconds"])
    st_lo, lo, _ = r.run(TINY_BUDGET, "auto")
    if lo is None:
        log(f"auto at {TINY_BUDGET} failed ({st_lo}); giving up")
        return 1
    floor = int(lo["minimum_feasible_bytes"])
    log(f"baseline peak {gb(baseline)} {UNIT[1]}, step {base_step:.4g} s; floor {gb(floor)} {UNIT[1]}; "
        f"auto planner {hi['planner_seconds']:.3f} s at {HUGE_BUDGET}, "
        f"{lo['planner_seconds']:.3f} s at {TINY_BUDGET}")

    step = baseline * a.step / 100.0
    budgets = []
    if floor < baseline:
        k = 0
        while True:
            b = int(math.ceil(floor + k * step))
            if b >= baseline:
                break
            budgets.append(b)
            k += 1
    budgets.append(baseline)

    rows = []
    total = len(budgets) * len(strategies)
    done = 0
    for b in budgets:
        row = {"budget": b, "cells": {}}
        for s in strategies:
            done += 1
            st, data, _ = r.run(b, s)
            row["cells"][s] = (st, data)
            extra = ""
            if data is not None and not data.get("_declined"):
                ov = 100.0 * (data["estimated_step_seconds"] / base_step - 1.0)
                extra = (f"est {data['estimated_step_seconds']:.4g} s ({ov:+.1f}%), "
                         f"peak {gb(data['peak_bytes'])} {UNIT[1]}, planner "
                         f"{data['planner_seconds']:.3f} s")
            log(f"[{done}/{total}] {gb(b)} {UNIT[1]} {s:>5}: {st} {extra}")
        rows.append(row)

    # ---- table ---------------------------------------------------------
    have_milp = "milp" in strategies
    have_auto = "auto" in strategies
    header = [f"budget ({UNIT[1]})", "% of baseline"] + [f"{s} overhead" for s in strategies]
    if have_milp:
        header.append("MILP gap")
    if have_milp and have_auto:
        header.append("auto/MILP (opt)")
    if have_auto:
        header += ["bound overhead", "auto gap", "auto planner s"]

    def cell(s, st, data):
        if st in ("error", "timeout"):
            return st
        # An unsolved MILP is n/s whether or not its fallback plan fits.
        if s == "milp" and data is not None and milp_unsolved(data):
            return "n/s"
        if st != "fit" or data is None:
            return "—"
        ov = 100.0 * (data["estimated_step_seconds"] / base_step - 1.0)
        return f"{ov:.1f}%" + ("†" if data.get("_stderr_errors") else "")

    out = []
    out.append(f"Model `{a.model}`, target `{a.target}`: baseline peak {gb(baseline)} {UNIT[1]}, "
               f"baseline step {base_step:.4g} s (estimated), memory floor {gb(floor)} {UNIT[1]} "
               f"({100.0 * floor / baseline:.1f}% of baseline).")
    out.append("")
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + "|".join("---:" for _ in header) + "|")
    ratios = []
    gaps = []  # auto's optimality gap per budget
    for row in rows:
        b = row["budget"]
        cells = [gb(b), f"{100.0 * b / baseline:.0f}%"]
        for s in strategies:
            cells.append(cell(s, *row["cells"][s]))
        if have_milp:
            st, d = row["cells"]["milp"]
            note = (d or {}).get("strategy_note", "")
            if d is None or milp_unsolved(d):
                cells.append("—")
            elif "proven infeasible" in note:
                # The MILP's own memory model found no plan; remat-opt then
                # returns a fallback plan, which may still fit the budget.
                cells.append("infeasible (MILP model)")
            elif st == "fit":
                gap = d.get("milp_gap", 0.0)
                cells.append(f"{100.0 * gap:.2f}%" + (" (opt)" if d.get("milp_proved_optimal") else ""))
            else:
                cells.append("—")
        if have_milp and have_auto:
            sm, dm = row["cells"]["milp"]
            sa, da = row["cells"]["auto"]
            if (sm == "fit" and sa == "fit" and dm and da and dm.get("milp_proved_optimal")
                    and not milp_unsolved(dm)):
                ratio = da["estimated_step_seconds"] / dm["estimated_step_seconds"]
                ratios.append((ratio, b))
                cells.append(f"{ratio:.4f}")
            else:
                cells.append("—")
        if have_auto:
            st, d = row["cells"]["auto"]
            bound = (d or {}).get("optimality_bound_seconds")
            gap = (d or {}).get("optimality_gap")
            cells.append("—" if bound is None else f"{100.0 * (bound / base_step - 1.0):.1f}%")
            cells.append("—" if gap is None else f"{100.0 * gap:.2f}%")
            if gap is not None:
                gaps.append((gap, b))
            cells.append(f"{d['planner_seconds']:.3f}" if d else "—")
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    out.append(f"auto planner seconds: {hi['planner_seconds']:.3f} at {HUGE_BUDGET} "
               f"(baseline fits), {lo['planner_seconds']:.3f} at {TINY_BUDGET} "
               f"(infeasible; floor search)")
    out.append(f"consistency: minimum_feasible_bytes {floor} vs peak_bytes of auto's floor plan "
               f"{lo['peak_bytes']} ({int(lo['peak_bytes']) - floor:+d} B); baseline_peak_bytes "
               f"{baseline} vs peak_bytes of the unplanned step {hi['peak_bytes']} "
               f"({int(hi['peak_bytes']) - baseline:+d} B)")
    for label, b in (("floor", budgets[0]), ("baseline", baseline)):
        for row in rows:
            if row["budget"] == b and "auto" in row["cells"] and row["cells"]["auto"][1]:
                d = row["cells"]["auto"][1]
                out.append(f"auto planner seconds at the {label} ({gb(b)} {UNIT[1]}): "
                           f"{d['planner_seconds']:.3f} ({row['cells']['auto'][0]})")
    flagged = sorted({s for row in rows for s, (st, d) in row["cells"].items()
                      if d and d.get("_stderr_errors")})
    if flagged:
        msgs = sorted({e.split("error:", 1)[1].strip() for row in rows
                       for st, d in row["cells"].values() if d
                       for e in d.get("_stderr_errors", [])})
        out.append("† remat-opt exited 0 but printed errors on stderr (strategies: "
                   + ", ".join(flagged) + "): " + "; ".join(msgs))
    if have_auto:
        # auto's estimated step time should not rise as the budget grows.
        fits = [(row["budget"], row["cells"]["auto"][1]["estimated_step_seconds"])
                for row in rows if row["cells"]["auto"][0] == "fit"]
        rises = [(b0, b1) for (b0, t0), (b1, t1) in zip(fits, fits[1:]) if t1 > t0 * (1 + 1e-9)]
        out.append("auto step time non-increasing as the budget grows: " +
                   ("yes, over %d budgets that fit" % len(fits) if not rises else
                    "no: it rises from " + ", ".join(f"{gb(b0)} to {gb(b1)} {UNIT[1]}"
                                                     for b0, b1 in rises)))
        arena = [(int(d["arena_bytes"]) / max(int(d["lower_bound_bytes"]), 1), row["budget"])
                 for row in rows for st, d in [row["cells"]["auto"]] if st == "fit" and d]
        if arena:
            worst_arena = max(arena)
            out.append(f"auto's arena over its lower bound: worst {100.0 * (worst_arena[0] - 1):.2f}% "
                       f"at {gb(worst_arena[1])} {UNIT[1]}")
    if gaps:
        worst_gap = max(gaps)
        over = [f"{gb(b)} {UNIT[1]} ({100.0 * g:.2f}%)" for g, b in gaps if g > 0.05]
        out.append(f"auto's certified optimality gap: worst {100.0 * worst_gap[0]:.2f}% at "
                   f"{gb(worst_gap[1])} {UNIT[1]} over {len(gaps)} budgets; over 5%: "
                   + (", ".join(over) if over else "none"))
    if ratios:
        worst = max(ratios)
        out.append(f"auto/MILP step-time ratio where the MILP proved optimality: "
                   f"worst {worst[0]:.4f} at {gb(worst[1])} {UNIT[1]} over {len(ratios)} budgets")
    if have_milp:
        notes = sorted({d["_declined"] for row in rows
                        for st, d in [row["cells"]["milp"]] if milp_unsolved(d)})
        for n in notes:
            out.append(f"MILP note (n/s = not solved): {n}")
    print("\n".join(out))

    if a.raw:
        with open(a.raw, "w") as f:
            json.dump({"model": a.model, "target": a.target, "baseline_peak_bytes": baseline,
                       "baseline_step_seconds": base_step, "floor_bytes": floor,
                       "runs": r.results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
