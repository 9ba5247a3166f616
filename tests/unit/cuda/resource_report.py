#!/usr/bin/env python3
"""CI report (ctest cuda-binaries/resources): registers, shared memory and
spills of every CUDA kernel; fails on spills in the hot kernels.

cuobjdump --dump-resource-usage shows registers and shared memory but not
spills, so this recompiles the PTX that nvcc embedded in each object
(cuobjdump -xptx, which also gives the ptxas options nvcc used) with that
ptxas and -v: the same PTX, options and ptxas version give the same machine
code, so these are the figures of the compiled runtime. Static shared
memory only: the attention kernels size theirs at launch.

The hot kernels (HOT, below) are those a training step spends its time in,
apart from cuBLAS; a spill there costs local-memory traffic on every
element or row. Their fp64 instantiations are exempt (fp64 training is not
the fast path), as are the other kernels, whose spills are printed but
allowed. A stack frame without spills (CUDA's sinf/cosf reduce huge
arguments in a local array) is reported, not failed.

Usage: resource_report.py [--cuobjdump PATH] [--toolkit-bin DIR]
                          [--source-dir DIR] [--ptxas PATH] OBJECT...
"""

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

import kernel_binaries as kb

# Hot kernels, by family, and why.
HOT = {
    # Elementwise: every activation, residual add, scale, cast and dropout
    # of the forward and backward passes; bandwidth-bound, run on every
    # element of every activation.
    "unaryKernel": "elementwise", "binaryKernel": "elementwise",
    "unaryPackedKernel": "elementwise", "binaryPackedKernel": "elementwise",
    "whereKernel": "elementwise", "castKernel": "elementwise",
    "dropoutKernel": "elementwise", "geluBackwardKernel": "elementwise",
    "activationBackwardKernel": "elementwise",
    "castPackedKernel": "elementwise", "binaryRowPackedKernel": "elementwise",
    "geluBackwardPackedKernel": "elementwise",
    "activationBackwardPackedKernel": "elementwise",
    # GEMM-adjacent: the im2col/col2im around every convolution GEMM, the
    # bias add after it, the fp32 accumulator's rounding after 16-bit ones.
    "im2colKernel": "GEMM-adjacent", "col2imKernel": "GEMM-adjacent",
    "addChannelBiasKernel": "GEMM-adjacent",
    "roundAccumulatorKernel": "GEMM-adjacent",
    # Softmax: every unfused attention and the loss over the vocabulary.
    "softmaxKernel": "softmax", "softmaxBackwardKernel": "softmax",
    "fusedCrossEntropyKernel": "softmax",
    # Layer norm: twice per transformer block, forward and backward; its
    # parameter gradients are column reductions.
    "layerNormKernel": "layer norm", "layerNormBackwardKernel": "layer norm",
    "reducePartialKernel": "layer norm",
    # ... their one-pass row kernels (a warp or 64 lanes per row), the
    # cached-row softmax, the row-parallel cross-entropy backward, and the
    # column reduction of bias gradients.
    "layerNormRowsKernel": "layer norm",
    "layerNormBackwardRowsKernel": "layer norm",
    "softmaxRowCachedKernel": "softmax",
    "softmaxCrossEntropyBackwardRowsKernel": "softmax",
    "reduceColumnsKernel": "reduction",
    # Transposes: every head split and merge of attention, in both passes.
    "transposeRowsKernel": "data movement",
    "transposeTileKernel": "data movement",
    # Attention: the fused FlashAttention-style kernels (f32/16-bit).
    "attentionForwardKernel": "attention",
    "attentionKeyValueGradKernel": "attention",
    "attentionQueryGradKernel": "attention", "rowDotKernel": "attention",
    # ... and their fast paths (register-tiled fp32, tensor-core 16-bit),
    # which take every call without dropout at head sizes 32/64/128.
    "tiledAttentionForwardKernel": "attention",
    "tiledAttentionKeyValueGradKernel": "attention",
    "tiledAttentionQueryGradKernel": "attention",
    "tcForwardKernel": "attention", "tcKeyValueGradKernel": "attention",
    "tcQueryGradKernel": "attention",
    # Optimizer: every parameter, every step.
    "sgdKernel": "optimizer", "adamKernel": "optimizer",
}


def run_ptxas(ptxas, ptx):
    """ptxas -v on one extracted PTX file with nvcc's options: {mangled:
    {registers, smem, stack, spill_stores, spill_loads}}."""
    options = [o for o in ptx.ptxas_options if o]
    result = subprocess.run([ptxas, *options, "-v", ptx.path, "-o", os.devnull],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("ptxas failed on %s (%s): %s"
                           % (ptx.obj, ptx.arch, result.stderr[-2000:]))
    usage, current, props_for = {}, None, None
    for line in result.stderr.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current = m.group(1)
            usage[current] = dict(registers=0, smem=0, stack=0,
                                  spill_stores=0, spill_loads=0)
            continue
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            props_for = m.group(1)
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                      r"(\d+) bytes spill loads", line)
        if m and props_for in usage:
            usage[props_for].update(stack=int(m.group(1)),
                                    spill_stores=int(m.group(2)),
                                    spill_loads=int(m.group(3)))
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and current in usage:
            usage[current]["registers"] = int(m.group(1))
            smem = re.search(r"(\d+) bytes smem", line)
            usage[current]["smem"] = int(smem.group(1)) if smem else 0
    return usage


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    kb.add_arguments(parser)
    parser.add_argument("--ptxas")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()

    cuobjdump = kb.cuobjdump_or_report(args)
    if not cuobjdump:
        return 1
    ptxas = args.ptxas or (os.path.join(args.toolkit_bin, "ptxas")
                           if args.toolkit_bin else shutil.which("ptxas"))
    if not ptxas or not os.path.isfile(ptxas):
        print("FAIL: ptxas not found")
        return 1

    with tempfile.TemporaryDirectory() as work:
        files = kb.extract_ptx(cuobjdump, args.objects, work)
        if not files:
            print("FAIL: no PTX found in %d objects" % len(args.objects))
            return 1
        rows = []  # (demangled, arch, usage)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for ptx, usage in zip(files, pool.map(lambda f: run_ptxas(ptxas, f),
                                                  files)):
                rows += [(name, ptx.arch, u) for name, u in usage.items()]

    names = kb.demangle({name for name, _, _ in rows})
    table = sorted(((names[n], arch, u) for n, arch, u in rows),
                   key=lambda r: (kb.kernel_base_name(r[0]), r[0], r[1]))
    print("%-6s %4s %6s %5s %6s %6s  %s" % ("arch", "regs", "smem", "stack",
                                            "spillS", "spillL", "kernel"))
    failures = []
    for demangled, arch, u in table:
        base = kb.kernel_base_name(demangled)
        family = HOT.get(base)
        hot = family is not None and not kb.is_f64_instantiation(demangled)
        spills = u["spill_stores"] + u["spill_loads"]
        mark = ("SPILL" if spills else "") + (" hot:" + family if hot else "")
        print("%-6s %4d %6d %5d %6d %6d  %s%s"
              % (arch, u["registers"], u["smem"], u["stack"],
                 u["spill_stores"], u["spill_loads"], kb.short_name(demangled),
                 "  [" + mark.strip() + "]" if mark.strip() else ""))
        if hot and spills:
            failures.append((demangled, arch, u))
    print("%d kernel compilations (%s)" % (len(table),
          ", ".join(sorted({a for _, a, _ in table}))))
    for demangled, arch, u in failures:
        print("FAIL: hot kernel %s [%s] spills (%d bytes stored, %d loaded)"
              % (demangled, arch, u["spill_stores"], u["spill_loads"]))
    if failures:
        return 1
    print("PASS: no spills in the hot kernels (%s)"
          % ", ".join(sorted(set(HOT.values()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
