"""remat-opt's JSON plan report, for the planning sweeps (auto_sweep.py here,
tests/lit/planning/arena_near_bound.py)."""

import json
import subprocess
import sys


def plan(remat_opt, model, budget, strategy, extra):
    """The report of one plan; exit 2 (it does not fit) is a report too."""
    proc = subprocess.run([remat_opt, model, "--budget", str(budget), "--strategy", strategy,
                           "--emit=json"] + extra,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if proc.returncode not in (0, 2):
        sys.exit("remat-opt failed (exit %d) at budget %s, strategy %s:\n%s" %
                 (proc.returncode, budget, strategy, proc.stderr))
    return json.loads(proc.stdout)


def baseline_and_floor(remat_opt, model, extra):
    """The baseline peak (`--strategy none` at 1TB) and the memory floor
    (minimum_feasible_bytes of auto at a 1-byte budget)."""
    baseline = plan(remat_opt, model, "1TB", "none", extra)["baseline_peak_bytes"]
    floor = plan(remat_opt, model, 1, "auto", extra)["minimum_feasible_bytes"]
    return baseline, floor
