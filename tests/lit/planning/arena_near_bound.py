#!/usr/bin/env python3
"""The arena is within a stated fraction of the lower bound at every budget.

    arena_near_bound.py REMAT_OPT MODEL MAX_RATIO [remat-opt options...]

Finds the model's baseline peak (`--strategy none` at 1TB) and its memory
floor (minimum_feasible_bytes of a plan at a 1-byte budget), then plans
with every strategy at five budgets from the floor to the baseline and
checks arena_bytes <= MAX_RATIO * lower_bound_bytes for each plan that
fits. Also checks that the strategies' simulated peak is the live peak of
the planned step as the memory profile measures it on the IR (persistent +
workspace + lower_bound_bytes): higher, the search turns down plans whose
arena fits (near the floor, where it then minimises the peak instead of
the time); lower, it takes plans whose arena cannot fit. Prints one line
per plan (with the ratio) and a summary line for FileCheck; exits 1 when a
plan misses.
"""

import os
import sys

# The report helper is shared with the planning sweeps in tests/planning.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "planning"))
from plan_report import baseline_and_floor, plan


def main():
    remat_opt, model, max_ratio, extra = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
    baseline, floor = baseline_and_floor(remat_opt, model, extra)
    budgets = sorted({floor + (baseline - floor) * k // 4 for k in range(5)})
    worst, misses, plans = 1.0, 0, 0
    for budget in budgets:
        for strategy in ("auto", "sqrt", "all", "none"):
            report = plan(remat_opt, model, budget, strategy, extra)
            live = (report["persistent_bytes"] + report["workspace_bytes"] +
                    report["lower_bound_bytes"])
            if report["simulated_peak_bytes"] != live:
                misses += 1
                print("budget %d %-4s simulated peak %d, live peak %d: MISSED" %
                      (budget, strategy, report["simulated_peak_bytes"], live))
            if not report["feasible"]:
                continue
            plans += 1
            ratio = report["arena_bytes"] / max(report["lower_bound_bytes"], 1)
            ok = ratio <= max_ratio
            misses += 0 if ok else 1
            worst = max(worst, ratio)
            print("budget %d %-4s arena %d lower bound %d ratio %.4f %s" %
                  (budget, strategy, report["arena_bytes"], report["lower_bound_bytes"], ratio,
                   "ok" if ok else "MISSED"))
    print("%d plans, worst ratio %.4f: %s" % (plans, worst, "ok" if misses == 0 else "%d MISSED" % misses))
    sys.exit(0 if misses == 0 else 1)


if __name__ == "__main__":
    main()
