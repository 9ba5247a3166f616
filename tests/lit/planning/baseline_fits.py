#!/usr/bin/env python3
"""baseline_peak_bytes is the budget the unplanned step needs, exactly.

    baseline_fits.py REMAT_OPT MODEL [remat-opt options...]

Runs `--strategy none --emit=json` at 1TB, then at exactly the reported
baseline_peak_bytes (must fit: exit 0, feasible, peak == budget) and one
byte below it (must not fit: exit 2). Prints one line per check for
FileCheck; exits 1 on a failed check.
"""

import json
import subprocess
import sys


def plan(remat_opt, model, budget, extra):
    proc = subprocess.run([remat_opt, model, "--budget", str(budget), "--strategy", "none",
                           "--emit=json"] + extra,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    return proc.returncode, json.loads(proc.stdout)


def main():
    remat_opt, model, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    ok = True

    def check(label, cond, detail):
        nonlocal ok
        ok = ok and cond
        print("%s: %s (%s)" % (label, "ok" if cond else "FAILED", detail))

    status, big = plan(remat_opt, model, "1TB", extra)
    baseline = big["baseline_peak_bytes"]
    check("unbounded", status == 0 and big["peak_bytes"] == baseline,
          "exit %d, peak_bytes %d, baseline_peak_bytes %d" % (status, big["peak_bytes"], baseline))
    status, exact = plan(remat_opt, model, baseline, extra)
    check("at baseline", status == 0 and exact["feasible"] and exact["peak_bytes"] == baseline
          and exact["baseline_peak_bytes"] == baseline and "does not fit" not in exact["strategy_note"],
          "exit %d, feasible %s, peak_bytes %d, budget %d, note %r" %
          (status, exact["feasible"], exact["peak_bytes"], baseline, exact["strategy_note"]))
    status, below = plan(remat_opt, model, baseline - 1, extra)
    check("one byte below", status == 2 and not below["feasible"],
          "exit %d, feasible %s" % (status, below["feasible"]))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
