#!/usr/bin/python3
"""Plots bench/batch_sizes.sh --json output: ms per step against the batch size (log-log), one
line per step of zotrain and of PyTorch, so the crossover points are visible.

    bench/plot_batch_sizes.py RESULTS.jsonl OUT.png
"""
import json
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    lines = defaultdict(dict)
    for line in open(sys.argv[1]):
        d = json.loads(line)
        if d["step"] == "pytorch":
            for kind in ("bp", "zo"):
                lines[f"PyTorch {kind.upper()}"][d["batch"]] = d[kind]["ms_median"]
        else:
            lines[d["step"]][d["batch"]] = d["ms_median"]
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


if __name__ == "__main__":
    main()
