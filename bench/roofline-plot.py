#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plot a bkbench run: the roofline fraction of each op, per dtype, as a PNG.

Reads the JSON of `bkbench --json` (or --json-file), or the CSV of
`bkbench --csv`, and draws one strip chart per op family, one column per op
and dtype, one dot per case:

  gated-fwd, gated-bwd  "roofline": bandwidth over the copy bandwidth
  gemm                  "peakFraction": reusable TFLOP/s over the device's peak
  sparse24-gemm         "sparsePeakFraction", dense-equivalent TFLOP/s
  w4a16                 "ofFloor": the time the int4 weight takes to read at
                        the copy bandwidth over the time
  attention-fwd/bwd     TFLOP/s over the peak the run reports for the dtype,
                        if any (bkbench reports none for attention today)

A compute-bound family without a peak (the host device, or an unknown GPU)
is plotted in TFLOP/s instead, on a panel of its own, so that fractions and
TFLOP/s never share an axis. Only results with status "ok" are plotted.
The plot is for people: nothing checks it.

usage: roofline-plot.py RUN.json|RUN.csv [-o OUT.png] [--title TEXT]
"""
import argparse
import csv
import json
import os
import sys

SECTIONS = ("results", "gemm", "sparse24", "w4a16", "attention")

# Per section: (fraction field, TFLOP/s field when there is no fraction).
FIELDS = {
    "results": ("roofline", None),
    "gemm": ("peakFraction", "reusableTflopPerS"),
    "sparse24": ("sparsePeakFraction", "sparseTflopPerS"),
    "w4a16": ("ofFloor", "tflopPerS"),
    "attention": ("peakFraction", "tflopPerS"),
}


def number(v):
    """A JSON number or a CSV cell as a float; None for null or empty."""
    if v is None or v == "":
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def load(path):
    """[(section, record)] from a bkbench JSON or CSV file."""
    with open(path, newline="") as f:
        text = f.read()
    if text.lstrip().startswith("{"):
        d = json.loads(text)
        return [(s, r) for s in SECTIONS for r in (d.get(s) or [])]
    rows = list(csv.DictReader(text.splitlines()))
    if rows and "section" not in rows[0]:
        raise ValueError("no 'section' column: not a bkbench --csv file")
    return [(r["section"], r) for r in rows]


def points(records):
    """{(panel, label): [values]}: panel "fraction" or "TFLOP/s"."""
    out = {}
    for section, r in records:
        if section not in FIELDS or r.get("status") != "ok":
            continue
        frac_key, tf_key = FIELDS[section]
        label = "%s %s" % (r.get("op"), "tf32" if r.get("tf32") in (True, "true")
                           else r.get("dtype"))
        v = number(r.get(frac_key))
        panel = "fraction"
        if v is None and tf_key:
            v, panel = number(r.get(tf_key)), "TFLOP/s"
        if v is not None:
            out.setdefault((panel, label), []).append(v)
    return out


def plot(data, out, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("roofline-plot.py: matplotlib is not installed "
                 "(pip install matplotlib, or your system's python3-matplotlib)")
    panels = [p for p in ("fraction", "TFLOP/s") if any(k[0] == p for k in data)]
    if not panels:
        sys.exit("roofline-plot.py: no result with a roofline fraction or TFLOP/s")
    widths = [sum(1 for k in data if k[0] == p) for p in panels]
    fig, axes = plt.subplots(1, len(panels), figsize=(max(6, 0.6 * sum(widths) + 3), 5),
                             gridspec_kw={"width_ratios": widths}, squeeze=False)
    for ax, panel in zip(axes[0], panels):
        labels = [k[1] for k in data if k[0] == panel]
        for x, label in enumerate(labels):
            ys = data[(panel, label)]
            # Spread the dots of one column a little, so that equal values show.
            xs = [x + (i - (len(ys) - 1) / 2) * min(0.5 / max(len(ys), 1), 0.08)
                  for i in range(len(ys))]
            ax.scatter(xs, ys, s=14, alpha=0.7)
            ax.hlines(sorted(ys)[len(ys) // 2], x - 0.3, x + 0.3, colors="k", linewidth=1)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=8)
        if panel == "fraction":
            ax.set_ylabel("fraction of the roofline (1 = at the roof)")
            ax.axhline(1.0, color="grey", linestyle="--", linewidth=0.8)
            ax.set_ylim(bottom=0)
        else:
            ax.set_ylabel("TFLOP/s (no peak known)")
            ax.set_yscale("log")
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main():
    ap = argparse.ArgumentParser(
        description="Plot the roofline fraction of each op and dtype of a bkbench run "
                    "(bkbench --json or --csv) as a PNG strip chart; the bar is the median.")
    ap.add_argument("run", help="bkbench JSON (--json, --json-file) or CSV (--csv) file")
    ap.add_argument("-o", "--output", help="PNG to write (default: RUN with .png)")
    ap.add_argument("--title", help="the plot's title (default: the device from the JSON)")
    a = ap.parse_args()
    try:
        records = load(a.run)
    except (OSError, ValueError) as e:
        sys.exit("roofline-plot.py: %s: %s" % (a.run, e))
    title = a.title
    if title is None:
        title = os.path.basename(a.run)
        try:
            with open(a.run) as f:
                dev = json.load(f)["device"]
            title = "bkbench on %s %s: %s" % (dev["type"], dev["index"], dev["name"])
        except (ValueError, KeyError, TypeError):
            pass
    out = a.output or os.path.splitext(a.run)[0] + ".png"
    plot(points(records), out, title)
    print(out)


if __name__ == "__main__":
    main()
