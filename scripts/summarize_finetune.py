#!/usr/bin/env python3
"""The fine-tuning table (docs/reproduction.md) from runs/finetune/<data>/s<seed>/: mean ± std of
the final test accuracy over seeds, per method, and the upright model's accuracy on the rotated
test set without fine-tuning."""
import json
import re
import statistics
import sys
from pathlib import Path

root = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/finetune")
runs = ["f32-bp", "f32-cls1", "f32-cls2", "f32-zo", "int8-bp", "int8s8-cls1", "int8s8-cls2",
        "int8s8-zo"]


def fmt(values):
    if not values:
        return "–"
    mean = statistics.mean(values)
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean:.2f} ± {std:.2f} ({len(values)})"


for data in sorted(p for p in root.iterdir() if p.is_dir()):
    seeds = sorted(data.glob("s*"))
    base = []
    for s in seeds:
        txt = (s / "no-finetune.txt")
        if txt.exists():
            m = re.search(r"accuracy ([0-9.]+)%", txt.read_text())
            if m:
                base.append(float(m.group(1)))
    print(f"\n{data.name}: no fine-tuning {fmt(base)}")
    for r in runs:
        acc = [100 * json.loads((s / r / "summary.json").read_text())["final_test_acc"]
               for s in seeds if (s / r / "summary.json").exists()]
        print(f"  {r}: {fmt(acc)}")
