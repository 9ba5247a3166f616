"""The CUDA-vs-CPU equivalence check, shared by cuda_equivalence.py (ctest)
and the GPU bundle's run_programs.py (tools/gpu): one place states the
tolerances. The same precision on both sides, different GEMM and reduction
orders:

  losses      |cuda - cpu| <= r * max(1, |cpu|), r = 1e-4 in fp32; in bf16
              and fp16, where one rounding of an activation that lands the
              other side of a 16-bit rounding boundary moves it by 2^-8
              (bf16) or 2^-11 (fp16) relative, r = 1e-2
  parameters  |cuda - cpu| <= atol + rtol * |cpu|, rtol = 1e-3 (1e-2 in 16
              bits), atol = 1e-5 for SGD; for Adam, whose normalised step
              turns tiny gradient differences into up to lr per step,
              lr * steps
  peak        measured <= planned + 16 MiB. The plan already holds every
              byte the program allocates (regions, and a workspace with the
              cuBLAS workspace and all kernel scratch); the device's
              free-memory figures also see the cuBLAS handle, the
              instantiated CUDA Graph and the driver's 2 MiB allocation
              granularity on each of the four allocations. Not yet checked
              on a GPU: the first GPU run says whether 16 MiB is right.

Standard library only.
"""
import os

import tensor_proto

PEAK_SLACK_BYTES = 16 << 20


def compare(report, cpu_losses, cuda_params, cpu_params, optimizer, lr, steps,
            precision="fp32"):
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

    atol = 1e-5 if optimizer == "sgd" else float(lr) * steps
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
        excess = max((abs(x - y) - (atol + param_rtol * abs(y))
                      for x, y in zip(a, b)), default=float("-inf"))
        if excess > 0:
            failures.append("parameter %s differs: |cuda - cpu| exceeds "
                            "%g + %g*|cpu| by %.3g" % (name, atol, param_rtol,
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
