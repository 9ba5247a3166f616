"""The CUDA-vs-CPU equivalence check, shared by cuda_equivalence.py (ctest)
and the GPU bundle's run_programs.py (tools/gpu): one place states the
tolerances. The same precision on both sides, different GEMM and reduction
orders:

  losses      |cuda - cpu| <= r * max(1, |cpu|), r = 1e-4 in fp32; in bf16
              and fp16, where one rounding of an activation that lands the
              other side of a 16-bit rounding boundary moves it by 2^-8
              (bf16) or 2^-11 (fp16) relative, r = 1e-2
  parameters  |cuda - cpu| <= atol + rtol * |cpu|, rtol = 1e-3; in 16 bits
              rtol = 1e-2 of the tensor's largest |cpu| (a flipped 16-bit
              rounding moves a gradient by a share of the activations'
              scale, not of that parameter's own value: near-zero conv
              weights of the bf16 CNN moved 4e-4 to 8e-4 apart on an H100
              after 3 SGD steps at lr 0.1), or, where the same model's fp32
              reference exists, within the tensor's largest |cpu16 -
              cpu32|: the GPU no farther from the CPU's 16-bit result than
              16-bit arithmetic is from fp32 (the bf16 CNN's batch-norm
              biases: 1-4% of their largest value apart on an H200, 4-17%
              between bf16 and fp32 on the CPU); atol = 1e-5 for SGD;
              for Adam, whose normalised step turns tiny gradient
              differences into up to lr per step,
              lr * steps in fp32 and 2 * lr * steps in 16 bits: there a
              gradient that is zero in exact arithmetic (GPT-2's key bias:
              softmax ignores a shift shared by all keys) is rounding noise
              far above eps on both sides, so each side steps by about lr
              with its own sign (first seen on an H100: gpt2_tiny bf16,
              c_attn.bias, 4.2e-3 apart after 3 steps at lr 1e-3)
  peak        measured <= planned + 16 MiB. The plan already holds every
              byte the program allocates (regions, and a workspace with the
              cuBLAS workspace and all kernel scratch); the device's
              free-memory figures also see the cuBLAS handle, the
              instantiated CUDA Graph and the driver's 2 MiB allocation
              granularity on each of the four allocations. Measured on an
              H200 (2026-11-27): 8 to 10 MiB over the plan for the small
              programs, 10.9 MB for GPT-2 small, once cuBLAS's default
              workspace pool is off (runtime/cuda/Context.cu); 70-74 MiB
              before.

Standard library only.
"""
import os

import tensor_proto

PEAK_SLACK_BYTES = 16 << 20


def compare(report, cpu_losses, cuda_params, cpu_params, optimizer, lr, steps,
            precision="fp32", fp32_params=None):
    """Returns (failures, notes): one line per failed check, naming the
    tensor where one is at fault, and the figures worth printing either way.
    `report` is the executable's --json output."""
    failures, notes = [], []
    low = precision in ("bf16", "fp16")
    loss_rtol, param_rtol = (1e-2, 1e-2) if low else (1e-4, 1e-3)
    reported = report.get("precision", "fp32")
    if reported != precision:
        failures.append("the program reports precision %s, not %s" %
                        (reported, precision))
    cuda_losses = report["losses"]
    notes.append("losses  cuda %s\n        cpu  %s" % (cuda_losses, cpu_losses))
    if len(cuda_losses) != len(cpu_losses):
        failures.append("%d losses on CUDA, %d on the CPU" %
                        (len(cuda_losses), len(cpu_losses)))
    for step, (a, b) in enumerate(zip(cuda_losses, cpu_losses), 1):
        if abs(a - b) > loss_rtol * max(1.0, abs(b)):
            failures.append("loss of step %d: cuda %.7g, cpu %.7g (beyond "
                            "%g relative)" % (step, a, b, loss_rtol))
            break

    atol = 1e-5 if optimizer == "sgd" else float(lr) * steps * (2 if low else 1)
    names = sorted(os.listdir(cpu_params)) if os.path.isdir(cpu_params) else []
    cuda_names = sorted(os.listdir(cuda_params)) if os.path.isdir(cuda_params) else []
    if cuda_names != names or not names:
        failures.append("different parameter sets: cuda %d files, cpu %d "
                        "(first difference: %s)" % (
                            len(cuda_names), len(names),
                            sorted(set(cuda_names) ^ set(names))[:1]))
    worst = (float("-inf"), "")
    for name in names:
        if name not in cuda_names:
            continue
        _, _, a = tensor_proto.read(os.path.join(cuda_params, name))
        _, _, b = tensor_proto.read(os.path.join(cpu_params, name))
        if len(a) != len(b):
            failures.append("parameter %s has %d elements on CUDA, %d on the "
                            "CPU" % (name, len(a), len(b)))
            continue
        scale = max((abs(y) for y in b), default=0.0)
        excess = max((abs(x - y) - (atol + param_rtol * (scale if low else abs(y)))
                      for x, y in zip(a, b)), default=float("-inf"))
        own = None
        if low and excess > 0 and fp32_params and \
                os.path.isfile(os.path.join(fp32_params, name)):
            # Within 16-bit arithmetic's own error: CUDA no farther from
            # the CPU's 16-bit result than that is from the fp32 one.
            _, _, c = tensor_proto.read(os.path.join(fp32_params, name))
            if len(c) == len(b):
                own = max((abs(y - z) for y, z in zip(b, c)), default=0.0)
                excess = min(excess, max(abs(x - y) for x, y in zip(a, b)) - own)
        if excess > 0:
            failures.append("parameter %s differs: |cuda - cpu| exceeds "
                            "%g + %g*%s%s by %.3g" % (
                                name, atol, param_rtol,
                                "max|cpu|" if low else "|cpu|",
                                "" if own is None else
                                " and the 16-bit error max|cpu16 - cpu32| = %.3g" % own,
                                excess))
        if excess > worst[0]:
            worst = (excess, name)
    notes.append("%d parameter files; largest |cuda - cpu| - tolerance: %.3g "
                 "(%s)" % (len(names), worst[0], worst[1]))

    notes.append("peak %d bytes measured, %d planned; median step %.4f s" %
                 (report["peak_bytes"], report["planned_peak_bytes"],
                  report["step_seconds_median"]))
    if report["peak_bytes"] > report["planned_peak_bytes"] + PEAK_SLACK_BYTES:
        failures.append("measured peak %d bytes exceeds the plan (%d) by more "
                        "than %d MiB" % (report["peak_bytes"],
                                         report["planned_peak_bytes"],
                                         PEAK_SLACK_BYTES >> 20))
    return failures, notes
