#!/usr/bin/env python3
"""Memory of every PointNet Table 2 configuration (zotrain memory, planned bytes) at batch 32
and 256, FP32 and INT8, for the stand-in runs' inputs (128 points, 10 classes) and for the
paper's (1024 points, ModelNet40's 40 classes). Prints a Markdown table for docs/reproduction.md.

    scripts/pointnet_memory.py [path/to/zotrain]
"""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build" / "zotrain")
# (row label, FP32 config, INT8 config)
METHODS = [("Full BP", "bp", "int8-bp"), ("ZO-Feat-Cls2", "cls2", "int8s8-cls2"),
           ("ZO-Feat-Cls1", "cls1", "int8s8-cls1"), ("Full ZO", "zo", "int8s8-zo")]
INPUTS = [("128 points, 10 classes", "3,1,128", 10), ("1024 points, 40 classes", "3,1,1024", 40)]


def plan(config, item, classes, batch):
    out = subprocess.run([BIN, "memory", "--config", str(ROOT / "configs/pointnet" / config),
                          "--input", item, "--classes", str(classes), "--batch", str(batch),
                          "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def mb(n):
    return f"{n / 1e6:.2f}"


def main():
    print("| input | batch | method | FP32 MB | over Full ZO | activations | INT8 MB | FP32/INT8 |")
    print("|---|---|---|---|---|---|---|---|")
    for label, item, classes in INPUTS:
        for batch in (32, 256):
            for name, f32, int8 in METHODS:
                p = plan(f"pointnet-standin-{f32}.toml", item, classes, batch)
                q = plan(f"pointnet-standin-{int8}.toml", item, classes, batch)
                total = sum(p["buckets"].values())
                acts = p["buckets"]["forward"] + p["buckets"]["activations"]
                qtotal = sum(q["buckets"].values())
                print(f"| {label} | {batch} | {name} | {mb(total)} | "
                      f"{p['percent_over_full_zo']:+.3f} % | {100 * acts / total:.1f} % | "
                      f"{mb(qtotal)} | {total / qtotal:.2f}× |")


if __name__ == "__main__":
    main()
