#!/usr/bin/python3
"""One figure of any runs: how they learned, at what cost in forward passes, and what memory
they took.

    scripts/plot.py RUN_DIR [RUN_DIR ...] -o FILE.png [--title TEXT]

A RUN_DIR is a `zotrain train --out` folder (metrics.jsonl; summary.json for the memory panel).
Panels: training and test accuracy against epochs; training loss against epochs (zotrain
records no test loss); test accuracy against forward passes; q per epoch, when any run's q
changed (a q schedule); the arena's bytes per bucket (parameters, activations, gradients,
optimizer state, workspace, ...) as one stacked bar per run, so Full BP, ElasticZO and Full ZO
stand side by side. Each run is labelled from its config (method, split, precision) and folder.
Needs Debian's python3-matplotlib (hence /usr/bin/python3).
"""
import argparse
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

FIELDS = ("epoch", "train_acc", "test_acc", "train_loss", "forward_passes")


def fail(msg):
    sys.exit(f"plot: {msg}")


def read_run(folder):
    path = folder / "metrics.jsonl"
    if not path.is_file():
        fail(f"{folder}: no metrics.jsonl (not a zotrain train --out folder?)")
    lines = []
    for n, text in enumerate(path.read_text().splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError as e:
            fail(f"{path}:{n}: not a JSON line ({e.msg})")
        if not isinstance(line, dict):
            fail(f"{path}:{n}: not a JSON object")
        for key in FIELDS:
            if key not in line:
                fail(f"{path}:{n}: no field '{key}'")
        lines.append(line)
    if not lines:
        fail(f"{path}: no epochs yet")
    summary = None
    if (folder / "summary.json").is_file():
        try:
            summary = json.loads((folder / "summary.json").read_text())
        except json.JSONDecodeError as e:
            fail(f"{folder / 'summary.json'}: not JSON ({e.msg})")
    return lines, summary


def label_of(folder, summary):
    # A seed's folder (runs/repro/NAME/s0) is named by its parent too.
    name = f"{folder.parent.name}/{folder.name}" if folder.name[:1] == "s" and folder.name[1:].isdigit() else folder.name
    if not summary or "config" not in summary:
        return name
    c = summary["config"]
    method = {"bp": "Full BP", "zo": "Full ZO", "elastic": "ElasticZO"}.get(c.get("method"), "?")
    if c.get("method") == "elastic":
        method += f" ({summary.get('bp_layers', c.get('bp_layers'))} BP layers)"
    return f"{method}, {c.get('precision', 'f32')}: {name}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="run folders")
    ap.add_argument("-o", "--out", required=True, help="the PNG to write")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    runs = []
    for r in a.runs:
        folder = Path(r)
        lines, summary = read_run(folder)
        runs.append((label_of(folder, summary), lines, summary))
    show_q = any(len({l.get("q", 1) for l in lines}) > 1 for _, lines, _ in runs)
    show_memory = any(s and "arena_bytes_by_bucket" in s for _, _, s in runs)
    panels = 3 + show_q + show_memory
    cols = 2 if panels > 2 else panels
    rows = (panels + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.2 * cols, 3.9 * rows), dpi=100, squeeze=False)
    axes = list(axes.flat)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]

    ax = axes[0]
    for i, (label, lines, _) in enumerate(runs):
        ep = [l["epoch"] for l in lines]
        c = colors[i % len(colors)]
        ax.plot(ep, [100 * l["test_acc"] for l in lines], color=c, label=label + ", test")
        ax.plot(ep, [100 * l["train_acc"] for l in lines], color=c, linestyle="--",
                label=label + ", train")
    ax.set(title="Accuracy", xlabel="epoch", ylabel="accuracy (%)")

    ax = axes[1]
    for i, (label, lines, _) in enumerate(runs):
        ax.plot([l["epoch"] for l in lines], [l["train_loss"] for l in lines],
                color=colors[i % len(colors)], label=label)
    ax.set(title="Training loss", xlabel="epoch", ylabel="cross-entropy (nats)")

    ax = axes[2]
    for i, (label, lines, _) in enumerate(runs):
        ax.plot([l["forward_passes"] for l in lines], [100 * l["test_acc"] for l in lines],
                color=colors[i % len(colors)], marker=".", label=label)
    ax.set(title="Test accuracy per forward pass", xlabel="forward passes",
           ylabel="test accuracy (%)")
    ax.ticklabel_format(axis="x", style="sci", scilimits=(3, 3))

    k = 3
    if show_q:
        ax = axes[k]
        k += 1
        for i, (label, lines, _) in enumerate(runs):
            ax.step([l["epoch"] for l in lines], [l.get("q", 1) for l in lines], where="post",
                    color=colors[i % len(colors)], label=label)
        ax.set(title="ZO samples per step", xlabel="epoch", ylabel="q")
        ax.set_yscale("log", base=2)

    if show_memory:
        ax = axes[k]
        k += 1
        buckets = []
        for _, _, s in runs:
            for b in (s or {}).get("arena_bytes_by_bucket", {}):
                if b not in buckets:
                    buckets.append(b)
        bottom = [0.0] * len(runs)
        for j, b in enumerate(buckets):
            mib = [((s or {}).get("arena_bytes_by_bucket", {}).get(b, 0)) / 2**20
                   for _, _, s in runs]
            if not any(mib):
                continue
            ax.bar(range(len(runs)), mib, bottom=bottom, label=b,
                   color=colors[j % len(colors)])
            bottom = [x + y for x, y in zip(bottom, mib)]
        ax.set_xticks(range(len(runs)), [label for label, _, _ in runs], rotation=15,
                     ha="right", fontsize=7)
        ax.set(title="Memory (planned arena, by bucket)", ylabel="MiB")
        ax.legend(fontsize=7)

    for ax in axes[:3] + ([axes[3]] if show_q else []):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes[k:]:
        ax.axis("off")
    if a.title:
        fig.suptitle(a.title)
    fig.tight_layout()
    fig.savefig(a.out)


main()
