#!/usr/bin/env python3
"""Run remat on every exported variant under tests/models/hf/ and print a Markdown table.

Run by hand from the repository root (Python standard library only):

    python3 tests/models/hf/check_remat.py --bin build/bin [--json out.json] [model ...]

For each <model>/<variant>/model.onnx that the export produced, with the variant's
test_data_set_0 and the model's reference/:

  import   remat-opt MODEL > /dev/null
  forward  remat-run MODEL --inputs DATA --expect-loss <variant's expected loss>
  sgd      remat-run MODEL --train --steps 1 --optimizer sgd --lr 0.1 --inputs DATA
               --check-grads REF/grad --check-params REF/sgd --expect-loss <loss> --verbose
  adam     remat-run MODEL --train --steps 1 --optimizer adam --lr 1e-3 --inputs DATA
               --check-grads REF/grad --check-params REF/adam --skip-grad-below 1e-6
               --expect-loss <loss> --verbose

The training checks run only where the forward check passed. "grads" in the table is the
largest per-tensor max|a-b| / max|ref| over the gradients remat printed (--verbose).
"""

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TIMEOUT = 600


def run(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {TIMEOUT} s"


def first_error(out, err, n=2):
    lines = [l.strip() for l in (err + "\n" + out).splitlines() if l.strip()]
    pick = [l for l in lines if "error" in l.lower() or "fail" in l.lower()
            or "unsupported" in l.lower() or "not supported" in l.lower()]
    return sanitize(" | ".join((pick or lines)[:n]))


REL = re.compile(r"^\s*(?:FAIL )?(grads|params|buffers) '([^']+)': max\|a-b\| = ([^,\s]+), "
                 r"max\|ref\| = ([^,\s]+), relative ([^,\s]+)", re.M)
UNSUPPORTED = re.compile(r"\((\w+), domain ([^)]*)\): (unsupported op|unsupported opset "
                         r"version[^\n|]*)")


def parse_checks(out):
    res = {"grads": {}, "params": {}, "buffers": {}}
    for kind, name, _abs, _ref, rel in REL.findall(out):
        res[kind][name] = float(rel)
    return res


def sanitize(text):
    """Paths of this checkout out of the messages (they go into README.md)."""
    return text.replace(str(HERE) + "/", "").replace(str(HERE), ".")


# Embeddings built with padding_idx = the config's pad_token_id, whose
# gradient row PyTorch zeroes; no export records it, so remat is told with
# --padding-idx.
PADDING_EMBEDDINGS = {"bert": "bert.embeddings.word_embeddings.weight"}


def check_variant(bindir, root, variant, man):
    v = man["variants"][variant]
    model = root / variant / "model.onnx"
    data = root / variant / "test_data_set_0"
    ref = root / "reference"
    r = {"model": man["model"], "variant": variant,
         "opset": v.get("opset_import", {}).get("ai.onnx"), "ir": v.get("ir_version")}
    rc, out, err = run([str(bindir / "remat-opt"), str(model)])
    r["import"] = rc == 0
    if rc != 0:
        r["import_error"] = first_error("", err, 1)
        r["unsupported"] = sorted({f"{d or 'ai.onnx'}:{op}" + ("" if what == "unsupported op"
                                                              else f" ({what})")
                                   for op, d, what in UNSUPPORTED.findall(err)})
        return r
    rc, out, err = run([str(bindir / "remat-run"), str(model), "--inputs", str(data),
                        "--expect-loss", repr(v["expected_loss"])])
    r["forward"] = rc == 0
    m = re.search(r"loss \('[^']*'\) (\S+)", out + err)
    r["forward_loss"] = float(m.group(1).rstrip(",")) if m else None
    if rc != 0:
        r["forward_error"] = first_error(out, err)
        return r
    if v["expected_loss"] != man["loss_value"]:
        r["train_na"] = ("the graph computes another loss than PyTorch's training step "
                         "(BatchNorm exported in inference mode)")
        return r
    loss = repr(man["loss_value"])
    missing = set(v.get("parameters_missing", []))
    r["params_missing"] = len(missing)
    r["params_folded"] = v.get("parameters_with_folded_copies", [])
    tmp = tempfile.TemporaryDirectory()
    if missing:
        # Check the parameters that the export kept (the others are not in the graph).
        sub = Path(tmp.name)
        for kind in ("grad", "sgd", "adam"):
            (sub / kind).mkdir()
            for f in (ref / kind).glob("*.pb"):
                if f.name[:-3] not in missing:
                    shutil.copy(f, sub / kind / f.name)
        ref = sub
    for opt, lr, extra in (("sgd", "0.1", []), ("adam", "1e-3", ["--skip-grad-below", "1e-6"])):
        cmd = [str(bindir / "remat-run"), str(model), "--train", "--steps", "1", "--optimizer",
               opt, "--lr", lr, "--inputs", str(data), "--check-grads", str(ref / "grad"),
               "--check-params", str(ref / opt), "--expect-loss", loss, "--verbose"] + extra
        # The embedding PyTorch built with padding_idx (the exporters drop it).
        embedding = PADDING_EMBEDDINGS.get(man["model"])
        if embedding and embedding not in missing:
            cmd += ["--padding-idx", f"{embedding}={man['config']['pad_token_id']}"]
        # Gradients zero in exact arithmetic: measured against the largest.
        for name in man["float64_check"]["left_out_zero_gradients"]["params"]:
            if name not in missing:
                cmd += ["--zero-gradient", name]
        buffers = root / "reference" / "buffers"
        if opt == "sgd" and buffers.is_dir():
            cmd += ["--check-buffers", str(buffers)]
            r["buffers_checked"] = True
        rc, out, err = run(cmd)
        checks = parse_checks(out + err)
        r[opt] = rc == 0
        r[opt + "_rc"] = rc
        if checks["grads"]:
            r[opt + "_grad_max_rel"] = max(checks["grads"].values())
            r[opt + "_grad_worst"] = max(checks["grads"], key=checks["grads"].get)
        if checks["params"]:
            r[opt + "_param_max_rel"] = max(checks["params"].values())
        if checks["buffers"]:
            r[opt + "_buffer_max_rel"] = max(checks["buffers"].values())
        if rc != 0:
            bad = sorted(n for n, e in checks["grads"].items() if e > 1e-4)
            r[opt + "_error"] = (f"grads over 1e-4: {', '.join(bad)}" if bad and
                                 "error" not in (out + err).lower()
                                 else first_error(out, err))
    tmp.cleanup()
    return r


def fmt(r):
    """| model | variant | opset/IR | import | forward | grads (SGD step) | params SGD / Adam |"""
    if not r["import"]:
        imp = f"no: `{r.get('import_error', '')}`"
        if len(r.get("unsupported", [])) > 1:
            imp += " (all refused: " + ", ".join(u.split(":", 1)[1] for u in r["unsupported"]) \
                + ")"
        return f"| {r['model']} | {r['variant']} | {r['opset']}/{r['ir']} | {imp} | - | - | - |"
    if r["forward"]:
        fwd = f"yes ({r['forward_loss']:.6f})" if r.get("forward_loss") is not None else "yes"
    else:
        fwd = f"no: `{r.get('forward_error', '')}`"
    if "train_na" in r:
        grads, params = "n/a: " + r["train_na"], "-"
    elif "sgd" not in r:
        grads = params = "-"
    else:
        grads = "pass" if r["sgd"] or "over 1e-4" in r.get("sgd_error", "x") else "FAIL"
        if "sgd_grad_max_rel" in r:
            grads = ("pass" if r["sgd_grad_max_rel"] <= 1e-4 else "FAIL") + \
                f", max rel {r['sgd_grad_max_rel']:.1e}"
            if r["sgd_grad_max_rel"] > 1e-4:
                grads += f" ({r.get('sgd_grad_worst')})"
        elif not r["sgd"]:
            grads = f"FAIL: `{r.get('sgd_error', '')}`"
        if r.get("params_missing"):
            grads += f"; {r['params_missing']} parameters folded away (not checked)"
        parts = []
        for opt in ("sgd", "adam"):
            if opt + "_param_max_rel" in r:
                parts.append(f"{opt} {r[opt + '_param_max_rel']:.1e}")
            else:
                parts.append(f"{opt} -")
        if "sgd_buffer_max_rel" in r:
            parts.append(f"BN buffers {r['sgd_buffer_max_rel']:.1e}")
        params = ", ".join(parts) + ("" if r["sgd"] and r["adam"] else
                                     " (step: " + ("pass" if r["sgd"] else "FAIL") + " / " +
                                     ("pass" if r["adam"] else "FAIL") + ")")
    return (f"| {r['model']} | {r['variant']} | {r['opset']}/{r['ir']} | {'yes' if r['import'] else ''} "
            f"| {fwd} | {grads} | {params} |")


def ops_table(models):
    print("| model | variant | nodes | ops (ai.onnx domain unless marked) |")
    print("|---|---|---:|---|")
    for name in models:
        man = json.loads((HERE / name / "manifest.json").read_text())
        for variant, v in man["variants"].items():
            if not v.get("exported"):
                continue
            ops = ", ".join(f"{k.split(':', 1)[1] if k.startswith('ai.onnx:') else k} {c}"
                            for k, c in v["ops"].items())
            print(f"| {name} | {variant} | {v['node_count']} | {ops} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", help="directory with remat-opt and remat-run")
    ap.add_argument("--json", help="write the results here too")
    ap.add_argument("--ops", action="store_true",
                    help="only print the op histograms of the exports (no remat needed)")
    ap.add_argument("models", nargs="*")
    a = ap.parse_args()
    models = a.models or sorted(p.parent.name for p in HERE.glob("*/manifest.json"))
    if a.ops:
        ops_table(models)
        return 0
    if not a.bin:
        ap.error("--bin is required")
    bindir = Path(a.bin).resolve()
    results = []
    print("| model | variant | opset/IR | import | forward loss | grads (SGD step, max "
          "rel err) | params after SGD / Adam (max rel err) |")
    print("|---|---|---|---|---|---|---|")
    for name in models:
        root = HERE / name
        man = json.loads((root / "manifest.json").read_text())
        for variant, v in man["variants"].items():
            if not v.get("exported"):
                print(f"| {name} | {variant} | - | export failed: "
                      f"{v.get('error', '').splitlines()[0]} | - | - | - |", flush=True)
                continue
            r = check_variant(bindir, root, variant, man)
            results.append(r)
            print(fmt(r), flush=True)
    refused = sorted({u for r in results for u in r.get("unsupported", [])})
    print("\nops remat refuses:", ", ".join(refused) or "none")
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
