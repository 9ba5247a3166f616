#!/usr/bin/env python3
"""CI check (ctest cuda-binaries/packed-access): the packed elementwise
kernels move their data in 128-bit accesses.

The kernels named *PackedKernel (runtime/cuda/Pack.cuh) read and write
contiguous operands as 16-byte packs so that each memory instruction moves
16 bytes (issue 17). Whether it does is nvcc's choice, from the pack's
alignment: this reads the PTX nvcc embedded in the runtime's objects
(cuobjdump -xptx) and requires, in every such kernel on every architecture,
a 128-bit global load (ld.global[.nc].v4 of 32-bit or .v2 of 64-bit
elements) and a 128-bit global store. The narrower accesses it counts
besides are the tail's (the last n % pack elements), the math library's
tables (sin, cos, erf) and the error word of integer division; they are
printed, not checked. Exits 1 when a kernel misses a wide access.

Usage: check_packed_access.py [--cuobjdump PATH] [--toolkit-bin DIR]
                              [--source-dir DIR] OBJECT...
"""

import argparse
import re
import sys

import kernel_binaries as kb

WIDE = re.compile(r"^(ld|st)\.global(?:\.nc)?\.(v4\.(?:[usbf]32)|v2\.(?:[usbf]64))\b")


def accesses(body):
    """(wide loads, wide stores, narrow loads, narrow stores) in PTX lines."""
    counts = [0, 0, 0, 0]
    for line in body:
        text = re.sub(r"^@!?%\w+\s+", "", line).strip()
        wide = WIDE.match(text)
        if wide:
            counts[0 if wide.group(1) == "ld" else 1] += 1
            continue
        if re.match(r"^(ld|st)\.global", text) and ".v" not in text.split()[0]:
            counts[2 if text.startswith("ld") else 3] += 1
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    kb.add_arguments(parser)
    args = parser.parse_args()

    cuobjdump = kb.cuobjdump_or_report(args)
    if not cuobjdump:
        return 1

    found = {}  # (mangled, arch) -> counts
    for name, arch, bodies in kb.kernel_bodies(cuobjdump, args.objects):
        if "PackedKernel" in name:
            found[(name, arch)] = [sum(column) for column in
                                   zip(*(accesses(body) for body in bodies))]

    if not found:
        print("FAIL: no *PackedKernel in the objects (built without them?)")
        return 1
    names = kb.demangle({name for name, _ in found})
    failures = []
    print("arch   wide-ld wide-st narrow-ld narrow-st  kernel")
    for (mangled, arch), (wl, ws, nl, ns) in sorted(
            found.items(), key=lambda item: (names[item[0][0]], item[0][1])):
        short = kb.short_name(names[mangled])
        print("%-6s %7d %7d %9d %9d  %s" % (arch, wl, ws, nl, ns, short))
        if wl == 0 or ws == 0:
            failures.append("%s [%s] has no 128-bit global %s" %
                            (short, arch, "load" if wl == 0 else "store"))
    print("%d packed kernel compilations" % len(found))
    for failure in failures:
        print("FAIL: " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
