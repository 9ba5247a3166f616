#!/usr/bin/env python3
"""Reference data for dynamic loss scaling: what PyTorch's own GradScaler does, step by step.

For scripted sequences of gradients (finite, inf, -inf, NaN, or finite but too large to survive
the scaling), this drives a real `torch.amp.GradScaler("cpu")` over a real optimizer and records,
after every step, the scale, the growth tracker and whether the optimizer step was skipped. The
rules are PyTorch's own code (GradScaler.step/update and the `_amp_update_scale_` kernel), not a
re-implementation; every case is then replayed through `torch._amp_update_scale_` directly, with
the recorded found-inf flags, and must give the same scales and trackers.

The cases cover issue 13's loss-scaling rules: an initial run of overflows (backoff every step),
recovery, growth after exactly `growth_interval` finite steps (2000 and 3), an overflow one step
before growth resetting the tracker, the growth that would make the scale inf being refused
(the scale starts at 2^127), NaN and -inf, and a finite gradient that overflows only once scaled.
They are the expected values of the unit tests of remat's loss-scale update kernel.

Needs a torch whose GradScaler and `_amp_update_scale_` run on the CPU (2.3 or later; Debian's
1.13 has them for CUDA only). Run by hand from the repository root:

    .cache/torch-venv/bin/python tests/models/pytorch/mixed_precision/make_grad_scaler_reference.py

It writes grad_scaler.json beside itself (README.md there says how the environment was made).
"""

import json
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent

# GradScaler's defaults (torch.amp.GradScaler): the cases below state theirs explicitly.
DEFAULTS = dict(init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000)

# Each step's gradient is scale x value for one element (a second element is always scale x 1).
# "1e34" is finite, but 1e34 x 2^16 is past float32's maximum (3.4e38): it overflows only once
# scaled, until the scale has backed off to 2^15.
CASES = [
    dict(name="default_interval",
         description="defaults (2^16, x2 every 2000, x0.5): three overflows back off three times "
                     "and are skipped; 1999 finite steps; a NaN one step before growth resets "
                     "the tracker; then growth after exactly 2000 finite steps",
         settings=DEFAULTS,
         script=[["inf", 3], ["1", 1999], ["nan", 1], ["1", 2000], ["1", 1]]),
    dict(name="interval_3",
         description="growth interval 3: inf and -inf back off, growth after 3 finite steps, "
                     "an overflow after 1 and after 2 finite steps resets the tracker, NaN",
         settings={**DEFAULTS, "growth_interval": 3},
         script=[["inf", 1], ["-inf", 1], ["1", 3], ["1", 1], ["nan", 1], ["1", 3], ["1", 2],
                 ["inf", 1], ["1", 6], ["nan", 2], ["1", 3]]),
    dict(name="growth_capped_below_inf",
         description="the scale starts at 2^127: growing it would give inf (2^128), so growth is "
                     "refused (scale kept, tracker reset to 0) until an overflow backs it off",
         settings={**DEFAULTS, "init_scale": 2.0 ** 127, "growth_interval": 3},
         script=[["1", 3], ["1", 3], ["inf", 1], ["1", 3], ["1", 4], ["nan", 1], ["1", 1]]),
    dict(name="overflow_only_when_scaled",
         description="a finite gradient of 1e34 overflows float32 once scaled by 2^20 ... 2^16: "
                     "the scaler backs off until 1e34 x 2^15 fits, then grows again after 3 "
                     "finite steps and overflows again",
         settings={**DEFAULTS, "init_scale": 2.0 ** 20, "growth_interval": 3},
         script=[["1e34", 12]]),
]


class CountingSGD(torch.optim.SGD):
    """SGD that counts the steps it really takes: GradScaler.step skips calling it on inf/NaN."""

    def __init__(self, params):
        # lr 0: the parameter never moves, so every step's gradient is exactly scale x value.
        super().__init__(params, lr=0.0)
        self.steps_taken = 0

    def step(self, closure=None):
        self.steps_taken += 1
        return super().step(closure)


def expand(script):
    return [float(value) for value, count in script for _ in range(count)]


def run_grad_scaler(case):
    param = torch.nn.Parameter(torch.ones(2))
    opt = CountingSGD([param])
    scaler = torch.amp.GradScaler("cpu", **case["settings"])
    scale, tracker, skipped = [], [], []
    for value in expand(case["script"]):
        opt.zero_grad(set_to_none=True)
        loss = (param * torch.tensor([1.0, value])).sum()
        taken = opt.steps_taken
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        state = scaler.state_dict()
        scale.append(state["scale"])
        tracker.append(state["_growth_tracker"])
        skipped.append(opt.steps_taken == taken)
    return scale, tracker, skipped


def replay_update_kernel(case, skipped):
    """The same scale/tracker sequence from torch._amp_update_scale_ fed the found-inf flags."""
    settings = case["settings"]
    scale = torch.full((), settings["init_scale"], dtype=torch.float32)
    tracker = torch.zeros((), dtype=torch.int32)
    scales, trackers = [], []
    for found_inf in skipped:
        torch._amp_update_scale_(scale, tracker, torch.full((), float(found_inf)),
                                 settings["growth_factor"], settings["backoff_factor"],
                                 settings["growth_interval"])
        scales.append(scale.item())
        trackers.append(tracker.item())
    return scales, trackers


def main():
    torch.set_num_threads(1)
    out = {
        "torch_version": torch.__version__,
        "how": "torch.amp.GradScaler('cpu', ...) over an SGD optimizer with lr 0 on a 2-element "
               "parameter p = [1, 1]; step i's loss is sum(p * [1, value_i]), so its gradient "
               "is scale * [1, value_i]; after scaler.step(opt) and scaler.update() the scale "
               "and growth tracker come from scaler.state_dict(), and step_skipped is whether "
               "scaler.step() did not call the optimizer. Replayed through "
               "torch._amp_update_scale_ with found_inf = step_skipped: identical.",
        "fields": {
            "script": "[gradient value, repeat count] pairs, in step order; the value is a "
                      "string for float(): '1', '1e34', 'inf', '-inf', 'nan'",
            "scale_after": "the scale after step i's update (step i itself used the previous "
                           "entry, or init_scale for the first step)",
            "growth_tracker_after": "consecutive finite steps counted after step i's update",
            "step_skipped": "the optimizer step was skipped: some scaled gradient was inf/NaN "
                            "(found_inf); parameters and optimizer state unchanged",
        },
        "cases": [],
    }
    for case in CASES:
        scale, tracker, skipped = run_grad_scaler(case)
        if replay_update_kernel(case, skipped) != (scale, tracker):
            raise SystemExit(f"{case['name']}: torch._amp_update_scale_ disagrees with "
                             f"GradScaler.update")
        if not all(s != float("inf") and s > 0 for s in scale):
            raise SystemExit(f"{case['name']}: scale left (0, inf): {scale}")
        out["cases"].append({
            "name": case["name"], "description": case["description"], **case["settings"],
            "script": case["script"], "steps": len(scale), "scale_after": scale,
            "growth_tracker_after": tracker, "step_skipped": skipped})
        print(f"{case['name']}: {len(scale)} steps, {sum(skipped)} skipped, final scale "
              f"{scale[-1]!r}, tracker {tracker[-1]}")
    path = HERE / "grad_scaler.json"
    path.write_text(to_json(out))
    print(f"wrote {path.name} ({path.stat().st_size} bytes)")


def to_json(out):
    """JSON with one key a line and each value on its line: the per-step arrays stay readable
    (and diffable) at a few tens of kilobytes for 4000+ steps."""
    def block(obj, indent):
        pad = " " * indent
        return "{\n" + ",\n".join(f"{pad} {json.dumps(k)}: {v}" for k, v in obj.items()) + \
            f"\n{pad}}}"
    cases = ",\n".join("  " + block({k: json.dumps(v) for k, v in c.items()}, 2)
                       for c in out["cases"])
    top = {k: json.dumps(v, indent=2).replace("\n", "\n ") for k, v in out.items()
           if k != "cases"}
    top["cases"] = "[\n" + cases + "\n ]"
    return block(top, 0) + "\n"


if __name__ == "__main__":
    main()
