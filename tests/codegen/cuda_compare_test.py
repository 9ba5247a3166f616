#!/usr/bin/env python3
"""cuda_compare.compare on made-up dumps: equal runs pass; a parameter off
by more than the tolerance, a loss off, a missing file and a peak over the
plan each fail with a line naming what failed; a 16-bit run is held to the
16-bit tolerances and to its precision."""
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cuda_compare  # noqa: E402


def write(path, values):
    # TensorProto: dims (1), data_type FLOAT (2), raw_data (9).
    raw = struct.pack("<%df" % len(values), *values)
    body = bytes([0x08, len(values), 0x10, 1, 0x4A, len(raw)]) + raw
    with open(path, "wb") as f:
        f.write(body)


def dumps(root, w, b):
    os.makedirs(root)
    write(os.path.join(root, "w.pb"), w)
    write(os.path.join(root, "b.pb"), b)
    return root


def main():
    tmp = tempfile.mkdtemp()
    cpu = dumps(os.path.join(tmp, "cpu"), [1.0, 2.0], [0.5])
    same = dumps(os.path.join(tmp, "same"), [1.0, 2.0000001], [0.5])
    off = dumps(os.path.join(tmp, "off"), [1.0, 2.1], [0.5])
    report = {"losses": [2.0, 1.5], "peak_bytes": 100, "planned_peak_bytes": 100,
              "step_seconds_median": 0.001}
    failures = []

    def expect(name, got, needle):
        f, _ = got
        if needle is None and f:
            failures.append("%s: unexpected failures %s" % (name, f))
        if needle is not None and not any(needle in x for x in f):
            failures.append("%s: no failure mentioning %r in %s" % (name, needle, f))

    expect("equal", cuda_compare.compare(report, [2.0, 1.5], same, cpu, "sgd", "0.1", 3), None)
    expect("param", cuda_compare.compare(report, [2.0, 1.5], off, cpu, "sgd", "0.1", 3), "w.pb")
    expect("loss", cuda_compare.compare(report, [2.0, 1.4], same, cpu, "sgd", "0.1", 3),
           "loss of step 2")
    # 0.5% off: beyond fp32's loss tolerance, within bf16's; 5% is beyond both.
    bf16 = dict(report, precision="bf16")
    expect("bf16 loss", cuda_compare.compare(bf16, [2.0, 1.4925], same, cpu, "sgd",
                                             "0.1", 3, "bf16"), None)
    expect("fp32 loss", cuda_compare.compare(report, [2.0, 1.4925], same, cpu, "sgd",
                                             "0.1", 3), "loss of step 2")
    expect("bf16 loss off", cuda_compare.compare(bf16, [2.0, 1.425], same, cpu, "sgd",
                                                 "0.1", 3, "bf16"), "loss of step 2")
    expect("precision", cuda_compare.compare(report, [2.0, 1.5], same, cpu, "sgd",
                                             "0.1", 3, "bf16"), "precision fp32")
    os.remove(os.path.join(same, "b.pb"))
    expect("missing", cuda_compare.compare(report, [2.0, 1.5], same, cpu, "sgd", "0.1", 3),
           "b.pb")
    big = dict(report, peak_bytes=100 + (65 << 20))
    expect("peak", cuda_compare.compare(big, [2.0, 1.5], cpu, cpu, "sgd", "0.1", 3),
           "exceeds the plan")
    for f in failures:
        print("FAIL: " + f)
    print("PASS" if not failures else "FAIL")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
