"""Opens the plan explorer page (remat-opt --emit=html) in headless
Chromium and checks the rendered DOM against the plans' JSON reports.

Usage: plan_explorer.py CHROMIUM SCREENSHOT REMAT_OPT MODEL [options...]
The options are remat-opt's (--budget, --compare, ...). For each plan on
the page, the JSON report of the same plan is made with --emit=json (and
its buffers with --emit=plan), and the page must show: the verdict, one
`rect.buffer` per arena buffer, one `tr.recompute` row per recomputed op.
The page must render to the end without a script error. A screenshot is
saved to SCREENSHOT. Prints one line per check; exits 1 on a mismatch.
"""
import html.parser
import json
import os
import subprocess
import sys
import tempfile


class Page(html.parser.HTMLParser):
    """Counts, per `div.plan`, the elements the checks need."""

    def __init__(self):
        super().__init__()
        self.plans = []
        self.rendered = False
        self.depth = 0        # nesting inside the current plan div
        self.in_h2 = False
        self.in_verdict = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "body" and a.get("data-rendered") == "true":
            self.rendered = True
        if tag == "div" and "plan" in classes:
            self.plans.append({"label": "", "verdict": "", "buffers": 0,
                               "recompute_rows": 0, "aggregated": False})
            self.depth = 1
            return
        if not self.plans or self.depth == 0:
            return
        if tag == "div":
            self.depth += 1
        p = self.plans[-1]
        if tag == "rect" and "buffer" in classes:
            p["buffers"] += 1
        if tag == "tr" and "recompute" in classes:
            p["recompute_rows"] += 1
        if "aggregated" in classes:
            p["aggregated"] = True
        self.in_h2 = tag == "h2" and not p["label"]
        self.in_verdict = "verdict" in classes

    def handle_endtag(self, tag):
        if tag == "div" and self.depth > 0:
            self.depth -= 1
        self.in_h2 = self.in_verdict = False

    def handle_data(self, data):
        if self.in_h2:
            self.plans[-1]["label"] += data
        if self.in_verdict:
            self.plans[-1]["verdict"] += data


def remat(remat_opt, model, options, emit, path):
    status = subprocess.run([remat_opt, model, *options, f"--emit={emit}",
                             "-o", path], stderr=subprocess.DEVNULL).returncode
    if status not in (0, 2):
        sys.exit(f"remat-opt --emit={emit} {' '.join(options)} exited {status}")
    return status


def check(name, ok, detail=""):
    if not ok:
        sys.exit(f"{name}: FAILED {detail}")
    print(f"{name}: ok")


def main():
    chromium, screenshot, remat_opt, model, *options = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "plan.html")
        remat(remat_opt, model, options, "html", page)
        size = os.path.getsize(page)
        browser = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
                   "--enable-logging=stderr", "--v=0",
                   f"--user-data-dir={os.path.join(tmp, 'profile')}"]
        run = subprocess.run(browser + ["--dump-dom", "file://" + page],
                             capture_output=True, text=True, timeout=120)
        subprocess.run(browser + [f"--screenshot={screenshot}",
                                  "--window-size=1600,1400", "file://" + page],
                       capture_output=True, timeout=120)
        dom = Page()
        dom.feed(run.stdout)

        # The plans the page holds, made again one by one as JSON.
        compare = None
        rest = []
        it = iter(options)
        for o in it:
            if o == "--compare":
                compare = next(it)
            elif o.startswith("--compare="):
                compare = o.split("=", 1)[1]
            elif o.startswith("--sweep-points"):
                if "=" not in o:
                    next(it)
            else:
                rest.append(o)
        variants = [[]]
        if compare:
            variants = [["--budget", v.split("=", 1)[1]] if v.startswith("budget=")
                        else ["--strategy", v] for v in compare.split(",")]
        reports, buffers = [], []
        for v in variants:
            path = os.path.join(tmp, "r.json")
            remat(remat_opt, model, rest + v, "json", path)
            reports.append(json.load(open(path)))
            listing = os.path.join(tmp, "plan.txt")
            remat(remat_opt, model, rest + v, "plan", listing)
            buffers.append(sum(1 for line in open(listing)
                               if line.startswith("arena ")
                               and " offset none " not in line))

    errors = [l for l in run.stderr.splitlines()
              if "CONSOLE" in l and ("Uncaught" in l or "Error" in l)]
    check("page renders to the end", dom.rendered, "(no data-rendered mark)")
    check("no script errors", not errors, "\n".join(errors))
    check("one panel per plan", len(dom.plans) == len(reports),
          f"{len(dom.plans)} panels, {len(reports)} plans")
    for p, r, n in zip(dom.plans, reports, buffers):
        label = p["label"].strip()
        check(f"{label}: verdict",
              p["verdict"].strip() == ("FITS" if r["feasible"] else "DOES NOT FIT"),
              p["verdict"])
        check(f"{label}: recomputed rows",
              p["recompute_rows"] == r["recomputed_ops"],
              f"{p['recompute_rows']} vs report {r['recomputed_ops']}")
        check(f"{label}: arena rectangles",
              p["buffers"] == n or (p["aggregated"] and p["buffers"] < n),
              f"{p['buffers']} vs {n} buffers")
    print(f"page: {size} bytes")


if __name__ == "__main__":
    main()
