#!/usr/bin/python3
"""Plots bench/batch_sizes.sh --json output: ms per step against the batch size (log-log), one
line per step of zotrain and of PyTorch, so the crossover points are visible. Several runs'
output in one file (cat'ed) give the median of their medians per point, and the Markdown table
of those is printed.

    bench/plot_batch_sizes.py RESULTS.jsonl OUT.png
"""
import json
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    runs = defaultdict(lambda: defaultdict(list))
    for line in open(sys.argv[1]):
        d = json.loads(line)
        if d["step"] == "pytorch":
            for kind in ("bp", "zo"):
                runs[f"PyTorch {kind.upper()}"][d["batch"]].append(d[kind]["ms_median"])
        else:
            runs[d["step"]][d["batch"]].append(d["ms_median"])
    lines = {name: {b: statistics.median(v) for b, v in points.items()}
             for name, points in runs.items()}
    print_table(lines, max(len(v) for points in runs.values() for v in points.values()))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, points in lines.items():
        batches = sorted(points)
        ax.plot(batches, [points[b] for b in batches], marker="o",
                linestyle="--" if name.startswith("PyTorch") else "-", label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("batch size")
    ax.set_ylabel("ms per step (median, 1 thread)")
    ax.set_title("LeNet-5 training step against the batch size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


def print_table(lines, runs):
    names = list(lines)
    print(f"| batch (median of {runs} runs, ms) | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for b in sorted({b for points in lines.values() for b in points}):
        print(f"| {b} | " + " | ".join(f"{lines[n][b]:.3f}" if b in lines[n] else "" for n in names)
              + " |")


if __name__ == "__main__":
    main()
