#!/usr/bin/env python3
"""CI check (ctest cuda-binaries/no-f64): no fp64 arithmetic in kernels that
are not fp64 instantiations.

An H100 runs fp64 at half of fp32's rate and double transcendentals far
slower, so the F32, F16 and BF16 kernels compute in fp32 (issue 17). This
reads the PTX that nvcc embedded in the runtime's objects (cuobjdump -xptx),
and for every kernel, with the device functions it calls, looks for f64
arithmetic instructions: add/sub/mul/div/fma/mad/sqrt/rcp/rsqrt/min/max/abs/
neg/setp/set/testp/copysign/ex2/lg2/sin/cos/tanh on .f64. Loads, stores,
moves and conversions of f64 data are allowed (a float kernel may read an
F64 statistics array). Kernels whose template arguments name `double`
(demangled: unaryKernel<double>, layerNormKernel<float, double>, ...) are
the fp64 instantiations and may compute in double; so may the kernels of
COORDINATE_F64, for index arithmetic only, each with its reason. Every
other kernel with an f64 instruction fails the check, named with its
instructions. The
only instruction not counted is the math library's own (CUDA's sinf/cosf
reduce huge arguments with one f64 multiply; see LIBDEVICE_TRIG_REDUCTION).

Usage: check_no_f64.py [--cuobjdump PATH] [--toolkit-bin DIR]
                       [--source-dir DIR] OBJECT...
"""

import argparse
import re
import sys

import kernel_binaries as kb

F64_ARITHMETIC = {
    "add", "sub", "mul", "div", "fma", "mad", "sqrt", "rcp", "rsqrt", "min",
    "max", "abs", "neg", "setp", "set", "testp", "copysign", "ex2", "lg2",
    "sin", "cos", "tanh",
}

# The one f64 instruction of CUDA's own sinf/cosf: on the branch for huge
# arguments (|x| > 105615), its Payne-Hanek reduction scales a 64-bit
# fixed-point remainder by pi/2 * 2^-64 in double. It belongs to the math
# library, not to our kernels, and runs only for such arguments, so it is
# recognised by that constant and not counted.
LIBDEVICE_TRIG_REDUCTION = re.compile(
    r"^mul\.rn\.f64\s+%fd\d+,\s*%fd\d+,\s*0d3BF921FB54442D19$")


# Kernels allowed f64 index arithmetic, with the reason. Resize maps each
# output coordinate to an input coordinate in double as ONNX's reference
# does (runtime/common/ResizeIndex.h, shared with the CPU so both backends
# pick the same taps and weights bit for bit); the data itself is summed in
# fp32. A table of per-dim taps computed on the host would remove it (open
# work: issue 17); Resize is not on a transformer's path.
COORDINATE_F64 = {
    "resizeNearestKernel": "ONNX coordinate transform in double",
    "resizeInterpolatedKernel": "ONNX coordinate transform and cubic weights in double",
    "resizeBackwardKernel": "ONNX coordinate transform in double",
}


def f64_instructions(body):
    """The f64 arithmetic instructions among PTX instruction lines."""
    found = []
    for line in body:
        text = re.sub(r"^@!?%\w+\s+", "", line).rstrip(";").strip()
        opcode = text.split(None, 1)[0] if text else ""
        parts = opcode.split(".")
        if parts[0] in F64_ARITHMETIC and "f64" in parts[1:]:
            if not LIBDEVICE_TRIG_REDUCTION.match(text):
                found.append(text)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    kb.add_arguments(parser)
    args = parser.parse_args()

    cuobjdump = kb.cuobjdump_or_report(args)
    if not cuobjdump:
        return 1

    found = kb.kernel_bodies(cuobjdump, args.objects)
    if not found:
        print("FAIL: no PTX found in %d objects (built without the "
              "CUDA backend's PTX?)" % len(args.objects))
        return 1
    kernels = {}  # mangled name -> {arch: [instructions]}
    for name, arch, bodies in found:
        kernels.setdefault(name, {})[arch] = [
            instruction for body in bodies
            for instruction in f64_instructions(body)]

    names = kb.demangle(kernels)
    checked = f64_kernels = 0
    failures = []
    coordinate_exempt = set()
    for mangled in sorted(kernels, key=lambda n: names[n]):
        demangled = names[mangled]
        if kb.is_f64_instantiation(demangled):
            f64_kernels += 1
            continue
        base = kb.kernel_base_name(demangled)
        if base in COORDINATE_F64:
            coordinate_exempt.add(base)
            continue
        checked += 1
        for arch, instructions in sorted(kernels[mangled].items()):
            if instructions:
                failures.append((demangled, arch, instructions))
    archs = sorted({arch for _, arch, _ in found})
    print("checked %d kernels (%s) for f64 arithmetic; %d fp64 "
          "instantiations (double among their template arguments) exempt"
          % (checked, ", ".join(archs), f64_kernels))
    for name in sorted(coordinate_exempt):
        print("exempt: %s (%s)" % (name, COORDINATE_F64[name]))
    for demangled, arch, instructions in failures:
        ops = sorted({i.split(None, 1)[0] for i in instructions})
        print("FAIL: %s [%s] has %d f64 instructions (%s), e.g.:"
              % (demangled, arch, len(instructions), ", ".join(ops)))
        for text in instructions[:3]:
            print("    " + text)
    if failures:
        print("%d non-f64 kernel instantiations compute in double"
              % len({d for d, _, _ in failures}))
        return 1
    print("PASS: no f64 arithmetic outside the fp64 instantiations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
