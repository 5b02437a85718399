#!/usr/bin/env python3
"""Memory of LeNet-5's ElasticZO configurations (zotrain memory, planned bytes) at batch 64 and
256, per bucket. Prints the Markdown table of docs/reproduction.md's "Memory" section.

    scripts/lenet5_memory.py [path/to/zotrain]
"""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build" / "zotrain")
# The paper's configurations: no parameter average (elastic f32 evaluates one by default since
# 2026-12-04: the last row, one more f32 copy of the parameters).
CONFIGS = [("Full BP", ["--method", "bp"]), ("Full ZO", ["--method", "zo"]),
           ("ZO-Feat-Cls2 (1 BP layer)", ["--method", "elastic", "--bp-layers", "1",
                                          "--ema-decay", "0"]),
           ("ZO-Feat-Cls1 (2 BP layers)", ["--method", "elastic", "--bp-layers", "2",
                                           "--ema-decay", "0"]),
           ("ZO-Feat-Cls1, default (parameters' average)", ["--method", "elastic",
                                                            "--bp-layers", "2"])]


def plan(args, batch):
    out = subprocess.run([BIN, "memory", "--model", "lenet5", "--batch", str(batch), "--json",
                          *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    print("| batch | configuration | total bytes | parameters | input | activations | gradients "
          "| optimizer | workspace | vs Full ZO | saved vs Full BP |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for batch in (64, 256):
        # Against the table's own Full ZO and Full BP rows (the report's yardsticks would carry
        # the average too).
        plans = [(name, plan(args, batch)) for name, args in CONFIGS]
        totals = {name: sum(p["buckets"].values()) for name, p in plans}
        for name, p in plans:
            b = p["buckets"]
            total = totals[name]
            acts = b["forward"] + b["activations"] + b["loss"]
            cells = [total, b["parameters"], b["input"], acts, b["gradients"], b["optimizer"],
                     b["workspace"]]
            print(f"| {batch} | {name} | " + " | ".join(f"{c:,}" for c in cells) +
                  f" | {100 * (total / totals['Full ZO'] - 1):+.2f} %"
                  f" | {100 * (1 - total / totals['Full BP']):.1f} % |")


if __name__ == "__main__":
    main()
