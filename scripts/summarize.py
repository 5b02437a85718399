#!/usr/bin/env python3
"""Summarizes runs/repro/<config>/s<seed>/summary.json into a markdown table: final test
accuracy mean ± std over seeds, best and final validation accuracy, passes, time and memory.

    scripts/summarize.py [RUNS_DIR]"""
import json
import statistics
import sys
from pathlib import Path

root = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/repro")
print("| config | seeds | final test acc (%) | best val acc (%) | final val acc (%) | forward passes | backward passes | train s/run | arena bytes |")
print("|---|---|---|---|---|---|---|---|---|")
for cfg in sorted(p for p in root.iterdir() if p.is_dir()):
    runs = [json.loads(s.read_text()) for s in sorted(cfg.glob("s*/summary.json"))]
    if not runs:
        continue
    acc = [100 * r["final_test_acc"] for r in runs]
    val = [100 * r["best_val_acc"] for r in runs]
    final_val = [100 * r["final_val_acc"] for r in runs]
    sd = statistics.stdev(acc) if len(acc) > 1 else 0.0
    r0 = runs[0]
    print(f"| {cfg.name} | {len(runs)} | {statistics.mean(acc):.2f} ± {sd:.2f} | "
          f"{statistics.mean(val):.2f} | {statistics.mean(final_val):.2f} | {r0['forward_passes']} | {r0['backward_passes']} | "
          f"{statistics.mean(r['train_seconds'] for r in runs):.0f} | {r0['arena_bytes']} |")
