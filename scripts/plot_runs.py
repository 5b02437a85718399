#!/usr/bin/python3
"""Plots runs from their metrics.jsonl: one curve per run folder, the mean over its seeds
(s*/metrics.jsonl, or the folder's own metrics.jsonl) with the seeds' range shaded.

    scripts/plot_runs.py [--x forward_passes|epoch] [--y test_acc|val_acc|q|...]
                         [--title TEXT] OUT.png DIR[=LABEL] ...

The default is test accuracy against forward passes: accuracy per forward pass, the measure
of a ZO method. Needs Debian's python3-matplotlib (scripts/setup.sh installs it; hence
/usr/bin/python3, not whichever python3 comes first on the PATH).
"""
import argparse
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402


def read_metrics(path):
    lines = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError as e:
            sys.exit(f"plot_runs: {path}:{n}: not a JSON line ({e.msg})")
    return lines


def seeds_of(folder):
    files = sorted(folder.glob("s*/metrics.jsonl")) or sorted(folder.glob("metrics.jsonl"))
    if not files:
        sys.exit(f"plot_runs: {folder}: no metrics.jsonl in it or in its s*/ folders")
    return [read_metrics(f) for f in files]


def curve(runs, x, y, source):
    """Mean, min and max of y over the seeds at each x the seeds share (the shortest run's)."""
    for lines in runs:
        for line in lines:
            for key in (x, y):
                if key not in line:
                    sys.exit(f"plot_runs: {source}: metrics line of epoch {line.get('epoch')} "
                             f"has no field '{key}'")
    n = min(len(lines) for lines in runs)
    xs = [runs[0][i][x] for i in range(n)]
    ys = [[lines[i][y] for lines in runs] for i in range(n)]
    scale = 100 if y.endswith("_acc") else 1
    return (xs, [scale * sum(v) / len(v) for v in ys], [scale * min(v) for v in ys],
            [scale * max(v) for v in ys])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--x", default="forward_passes")
    ap.add_argument("--y", default="test_acc")
    ap.add_argument("--title", default="")
    ap.add_argument("out")
    ap.add_argument("runs", nargs="+", help="run folder, optionally =label")
    a = ap.parse_args()
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    for spec in a.runs:
        folder, _, label = spec.partition("=")
        runs = seeds_of(Path(folder))
        xs, mean, lo, hi = curve(runs, a.x, a.y, folder)
        label = (label or Path(folder).name) + (f" ({len(runs)} seeds)" if len(runs) > 1 else "")
        (line,) = ax.plot(xs, mean, label=label, linewidth=1.4)
        if len(runs) > 1:
            ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.15, linewidth=0)
    ax.set_xlabel(a.x.replace("_", " "))
    ax.set_ylabel(a.y.replace("_", " ") + (" (%)" if a.y.endswith("_acc") else ""))
    if a.x == "forward_passes":
        ax.ticklabel_format(axis="x", style="sci", scilimits=(3, 3))
    ax.grid(alpha=0.3)
    ax.set_title(a.title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out)


main()
