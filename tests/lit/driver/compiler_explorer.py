"""Runs remat-opt the way Compiler Explorer's MLIR compiler class (and
tools/compiler-explorer/remat.ts) does, and checks what CE would parse.

Usage: compiler_explorer.py REMAT_OPT MODEL.onnx [user options...]

1. The source pane: what `remat-opt MODEL.onnx` prints, saved as
   <dir>/example.mlir.
2. Compilation: `remat-opt -o <dir>/example.out.mlir <user options>
   <dir>/example.mlir`; the -o file must parse back as MLIR.
3. Opt Pipeline view: the same plus --mlir-print-ir-after-all
   --mlir-disable-threading; stderr is split by CE's pass-dump banner rule,
   each dump must name a function by CE's rule and parse as MLIR.
Prints what it found; exits 1 with the reason on a failure.
"""
import os
import re
import subprocess
import sys
import tempfile

# CE's lib/parsers/mlir-pass-dump-parser.ts rules.
BANNER = re.compile(r"^// -----// (IR Dump (?:Before|After) .+) //----- //$")
FUNCTION = re.compile(r"^\s*(\w+\.func\s+(?:\w+\s+)?@(\w+).*\{)$")


def parses(remat_opt, path):
    return subprocess.run([remat_opt, path], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)


def main():
    remat_opt, model, *user = sys.argv[1:]
    with tempfile.TemporaryDirectory() as d:
        source = os.path.join(d, "example.mlir")
        out = os.path.join(d, "example.out.mlir")
        with open(source, "w") as f:
            subprocess.run([remat_opt, model], stdout=f, check=True)

        run = subprocess.run([remat_opt, "-o", out, *user, source],
                             capture_output=True, text=True)
        print(f"compile: exit {run.returncode}")
        if run.returncode != 0:
            print(run.stderr)
            return
        text = open(out).read()
        if d in text:
            sys.exit("output: contains the temporary directory's path")
        check = parses(remat_opt, out)
        if check.returncode != 0:
            sys.exit(f"output: does not parse: {check.stderr}")
        lines = text.splitlines()
        longest = max(len(l) for l in lines)
        print(f"output: {len(lines)} lines, parses, longest line {longest}")
        for line in lines:
            if line.lstrip().startswith("// remat plan:"):
                print("output: " + line.strip())

        dump = subprocess.run([remat_opt, "-o", out, *user, source,
                               "--mlir-print-ir-after-all",
                               "--mlir-disable-threading"],
                              capture_output=True, text=True)
        dumps = []
        for line in dump.stderr.splitlines():
            m = BANNER.match(line)
            if m:
                dumps.append([m.group(1), []])
            elif dumps:
                dumps[-1][1].append(line)
        if not dumps:
            sys.exit("pipeline: no IR dump banners on stderr")
        for i, (header, body) in enumerate(dumps):
            names = [m.group(2) for m in map(FUNCTION.match, body) if m]
            if not names:
                sys.exit(f"pipeline: dump '{header}' names no function by "
                         "CE's rule")
            path = os.path.join(d, f"dump{i}.mlir")
            with open(path, "w") as f:
                f.write("\n".join(body) + "\n")
            check = parses(remat_opt, path)
            if check.returncode != 0:
                sys.exit(f"pipeline: dump '{header}' does not parse: "
                         f"{check.stderr[:500]}")
            print(f"pipeline: {header}: parses, functions "
                  + ",".join(dict.fromkeys(names)))


if __name__ == "__main__":
    main()
