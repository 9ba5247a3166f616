"""Reads the three views of one plan with independent readers (json, pickle,
text) and checks them against the plan's JSON report.

Usage: plan_views.py REMAT_OPT MODEL [remat-opt options...]
Prints one `name: ok` line per check; exits 1 with the reason on a mismatch.
"""
import json
import os
import pickle
import subprocess
import sys
import tempfile


def run(remat_opt, model, options, emit, path):
    # Exit 0 (fits) and 2 (does not fit) both write the views.
    status = subprocess.run([remat_opt, model, *options, f"--emit={emit}",
                             "-o", path]).returncode
    if status not in (0, 2):
        sys.exit(f"remat-opt --emit={emit} exited {status}")


def check(name, ok, detail):
    if not ok:
        sys.exit(f"{name}: FAILED: {detail}")
    print(f"{name}: ok")


def main():
    remat_opt, model, *options = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        paths = {e: os.path.join(tmp, e) for e in
                 ("json", "plan", "trace", "memory-snapshot")}
        for emit, path in paths.items():
            run(remat_opt, model, options, emit, path)
        report = json.load(open(paths["json"]))
        trace = json.load(open(paths["trace"]))
        with open(paths["memory-snapshot"], "rb") as f:
            snapshot = pickle.load(f)
        listing = open(paths["plan"]).read().splitlines()

    persistent = report["persistent_bytes"]
    workspace = report["workspace_bytes"]
    arena = report["arena_bytes"]
    bound = persistent + report["lower_bound_bytes"] + workspace

    # The plan listing: one line per op, recomputations marked.
    steps = [l for l in listing if l.startswith(("compute ", "recompute "))]
    recomputed = [l for l in steps if l.startswith("recompute ")]
    check("listing recomputed ops", len(recomputed) == report["recomputed_ops"],
          f"{len(recomputed)} vs report {report['recomputed_ops']}")
    check("listing header", listing[0].startswith("# remat plan: strategy "
                                                  + report["strategy"]),
          listing[0])

    # The trace: one slice per op, memory counters peaking at the live-bytes
    # bound the arena is measured against.
    events = trace["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    check("trace slices", len(slices) == len(steps),
          f"{len(slices)} slices, {len(steps)} steps")
    check("trace recompute slices",
          sum(e["cat"] == "recompute" for e in slices) == report["recomputed_ops"],
          "count differs from the report")
    counters = [e for e in events
                if e["ph"] == "C" and e["name"] == "device memory (bytes)"]
    peak = max(sum(e["args"].values()) for e in counters)
    check("trace memory peak", peak == bound,
          f"{peak} vs persistent + lower bound + workspace {bound}")
    ends = [e["ts"] + e["dur"] for e in slices]
    check("trace step time",
          abs(max(ends) - report["estimated_step_seconds"] * 1e6)
          <= 1e-6 * max(ends) + 1e-3,
          f"{max(ends)} us vs report {report['estimated_step_seconds']} s")

    # The memory snapshot: segments add up to the planned peak; replaying the
    # trace, every allocation lies in the arena and live ones never overlap.
    segments = {s["category"]: s for s in snapshot["segments"]}
    total = sum(s["total_size"] for s in snapshot["segments"])
    check("snapshot segments", total == report["peak_bytes"],
          f"{total} vs peak_bytes {report['peak_bytes']}")
    base = segments["arena"]["address"] if arena else 0
    live = {}
    high = 0
    for e in snapshot["device_traces"][0]:
        if e["action"] == "alloc":
            lo, hi = e["addr"], e["addr"] + e["size"]
            if not (base <= lo and hi <= base + arena):
                sys.exit(f"snapshot: allocation {e['frames'][0]['filename']} "
                         f"outside the arena")
            for (a, b), name in live.items():
                if lo < b and a < hi:
                    sys.exit(f"snapshot: {e['frames'][0]['filename']} overlaps"
                             f" live {name}")
            live[(lo, hi)] = e["frames"][0]["filename"]
            high = max(high, sum(b - a for a, b in live))
        elif e["action"] == "free_completed":
            del live[(e["addr"], e["addr"] + e["size"])]
    print("snapshot replay: ok")
    check("snapshot ends empty", not live, f"{len(live)} still allocated")
    check("snapshot replay peak", high <= arena and high + persistent + workspace <= bound,
          f"{high} live arena bytes vs arena {arena}")


if __name__ == "__main__":
    main()
