#!/usr/bin/env python3
"""auto's plans over a budget sweep: step time never rises with the budget.

    auto_sweep.py REMAT_OPT MODEL [--near-floor F MAX_GAP] [remat-opt options...]

Finds the model's baseline peak (`--strategy none` at 1TB) and its memory
floor (minimum_feasible_bytes at a 1-byte budget), then plans with auto at
the floor, at every 10% of the way to the baseline, and at the baseline.
Checks that every plan fits, that auto's estimated step time does not rise
as the budget grows, and that no plan is faster than the certified bound
(optimality_gap >= 0). Prints one line per budget with the gap, and a
summary line; exits 1 on a failed check (tests/planning/CMakeLists.txt runs
it on every fixture).

--near-floor F MAX_GAP adds the budget F of the way from the floor to the
baseline, checked like the others and also for a gap of at most MAX_GAP
(e.g. 1.0: within twice the certified bound), for models whose plans just
above the floor need a search of their own.
"""

import sys

from plan_report import baseline_and_floor, plan


def main():
    remat_opt, model, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    near_floor = None
    if extra[:1] == ["--near-floor"]:
        near_floor = (float(extra[1]), float(extra[2]))
        extra = extra[3:]
    baseline, floor = baseline_and_floor(remat_opt, model, extra)
    budgets = {floor + (baseline - floor) * k // 10 for k in range(11)}
    near_budget = None
    if near_floor:
        near_budget = floor + int((baseline - floor) * near_floor[0])
        budgets.add(near_budget)
    budgets = sorted(budgets)
    failures = []
    previous = None
    worst_gap = 0.0
    for budget in budgets:
        report = plan(remat_opt, model, budget, "auto", extra)
        seconds = report["estimated_step_seconds"]
        gap = report["optimality_gap"]
        print("budget %d: %s, step %.6g s, bound %s, gap %s, planner %.2f s" %
              (budget, "fits" if report["feasible"] else "DOES NOT FIT", seconds,
               report["optimality_bound_seconds"],
               "none" if gap is None else "%.2f%%" % (100 * gap), report["planner_seconds"]))
        if not report["feasible"]:
            failures.append("budget %d does not fit" % budget)
            continue
        if gap is None or gap < -1e-9:
            failures.append("budget %d: gap %s (the plan beats its bound)" % (budget, gap))
        else:
            worst_gap = max(worst_gap, gap)
            if budget == near_budget and gap > near_floor[1]:
                failures.append("budget %d, %g of the way from the floor: gap %.2f%% over %.2f%%" %
                                (budget, near_floor[0], 100 * gap, 100 * near_floor[1]))
        if previous is not None and seconds > previous[1] * (1 + 1e-12):
            failures.append("step time rises from %.9g s at %d to %.9g s at %d" %
                            (previous[1], previous[0], seconds, budget))
        previous = (budget, seconds)
    print("%d budgets, step time non-increasing, worst gap %.2f%%: %s" %
          (len(budgets), 100 * worst_gap, "ok" if not failures else "; ".join(failures)))
    sys.exit(0 if not failures else 1)


if __name__ == "__main__":
    main()
