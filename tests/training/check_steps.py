#!/usr/bin/env python3
"""Runs `remat-run ... --train` and checks what its per-step lines say.

remat-run prints one line per step:
    step <i> loss <value>[ (skipped: inf/NaN gradients)][ loss scale <s>]
This script checks, for the steps named on its command line:
  --skipped I,J-K       exactly these steps were skipped (all others taken)
  --loss I:VALUE:RTOL   the loss printed at step I is within RTOL of VALUE
  --scale I:VALUE       the loss scale after step I is VALUE
Everything after `--` is the remat-run command. Standard library only.
"""
import argparse
import re
import subprocess
import sys

LINE = re.compile(r"^step (\d+) loss (\S+)( \(skipped: [^)]*\))?(?: loss scale (\S+))?$")


def parse_steps(text):
    steps = set()
    for part in text.split(","):
        if "-" in part:
            first, last = part.split("-")
            steps.update(range(int(first), int(last) + 1))
        elif part:
            steps.add(int(part))
    return steps


def main():
    args_end = sys.argv.index("--") if "--" in sys.argv else len(sys.argv)
    p = argparse.ArgumentParser()
    p.add_argument("--skipped", default=None)
    p.add_argument("--loss", action="append", default=[])
    p.add_argument("--scale", action="append", default=[])
    args = p.parse_args(sys.argv[1:args_end])
    command = sys.argv[args_end + 1:]
    print("+ " + " ".join(command), flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    print(result.stdout)
    if result.returncode != 0:
        sys.exit("FAIL: remat-run exited with %d" % result.returncode)

    steps = {}
    for line in result.stdout.splitlines():
        m = LINE.match(line)
        if m:
            steps[int(m.group(1))] = (float(m.group(2)), bool(m.group(3)),
                                      float(m.group(4)) if m.group(4) else None)
    if not steps:
        sys.exit("FAIL: no `step <i> loss <value>` lines")

    ok = True
    if args.skipped is not None:
        want = parse_steps(args.skipped)
        got = {i for i, (_, skipped, _) in steps.items() if skipped}
        print("skipped steps: %s, expected %s" % (sorted(got), sorted(want)))
        ok &= got == want
    for spec in args.loss:
        index, value, rtol = spec.split(":")
        loss = steps[int(index)][0]
        diff = abs(loss - float(value)) / abs(float(value))
        good = diff <= float(rtol)
        print("%sstep %s loss %.6f, expected %s (relative difference %.2e, "
              "tolerance %s)" % ("" if good else "FAIL ", index, loss, value,
                                 diff, rtol))
        ok &= good
    for spec in args.scale:
        index, value = spec.split(":")
        scale = steps[int(index)][2]
        good = scale == float(value)
        print("%sstep %s loss scale %s, expected %s" %
              ("" if good else "FAIL ", index, scale, value))
        ok &= good
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
