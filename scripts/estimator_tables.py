#!/usr/bin/env python3
"""The tables of docs/reproduction.md's "Estimators at equal forward passes", from the runs:

    python3 scripts/estimator_tables.py [runs/estimators]

1. Each estimator at equal forward passes against plain SPSA run by the same build, 3 seeds:
   runs/estimators/lenet5-fashion-<row>-<variant>/s*/ (configs/estimators/<same name>.toml).
2. The tuning runs, seed 0 on validation: runs/estimators/tune/<row>-<change>/s0/
   (configs/estimators/tune/), against the same build's plain SPSA seed 0.
"""
import json
import statistics
import sys
from pathlib import Path

root = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/estimators")


def summaries(folder):
    return [json.loads(p.read_text()) for p in sorted(folder.glob("s*/summary.json"))]


def change_of(config):
    """What a variant config changes, from the second line of its header."""
    lines = Path(config).read_text().splitlines()
    return lines[1].split(" with ", 1)[1] if len(lines) > 1 and " with " in lines[1] else "?"


def mean_sd(values):
    return statistics.mean(values), statistics.stdev(values) if len(values) > 1 else 0.0


print("| row | estimator (change from plain SPSA) | seeds | test acc % | vs SPSA | final val % |")
print("|---|---|---|---|---|---|")
for prefix in ("lenet5-fashion-cls1", "lenet5-fashion-cls2", "lenet5-fashion-zo",
               "lenet5-fashion-int8s8-cls1", "lenet5-fashion-int8s8-cls2", "lenet5-fashion-int8s8-zo"):
    folders = sorted(p for p in root.glob(prefix + "-*") if p.is_dir()
                     and p.name[len(prefix) + 1:].count("-") == 0 and summaries(p))
    # The f32 baseline is re-run by the same build; the int8 rows' baseline is their Table 1 row
    # (ternary perturbations: unchanged by the f32 options).
    base = root / (prefix + "-spsa")
    if not base.exists():
        base = Path("runs/repro") / prefix
        if summaries(base):
            folders.insert(0, base)
    base_acc = [100 * s["final_test_acc"] for s in summaries(base)]
    for f in sorted(folders, key=lambda p: p != base):
        runs = summaries(f)
        acc, sd = mean_sd([100 * s["final_test_acc"] for s in runs])
        val, _ = mean_sd([100 * s["final_val_acc"] for s in runs])
        vs = f"{acc - statistics.mean(base_acc):+.2f}" if base_acc and f != base else "—"
        what = ("plain SPSA" if f.name.endswith("-spsa") else f"the row (`{f}`)") if f == base \
            else change_of(f"configs/estimators/{f.name}.toml")
        print(f"| {prefix[len('lenet5-fashion-'):]} | {what} | {len(runs)} | {acc:.2f} ± {sd:.2f} "
              f"| {vs} | {val:.2f} |")

print()
print("| tuning run (seed 0) | change | final val % | vs SPSA (val) | test % |")
print("|---|---|---|---|---|")
tune = root / "tune"
for row in ("cls1", "cls2", "zo"):
    base = summaries(root / f"lenet5-fashion-{row}-spsa")
    b = 100 * base[0]["final_val_acc"] if base else float("nan")
    runs = [(p.name, summaries(p)) for p in sorted(tune.glob(row + "-*")) if summaries(p)]
    for name, s in sorted(runs, key=lambda r: -r[1][0]["final_val_acc"]):
        v = 100 * s[0]["final_val_acc"]
        print(f"| {name} | `{change_of(f'configs/estimators/tune/{name}.toml')}` | {v:.2f} "
              f"| {v - b:+.2f} | {100 * s[0]['final_test_acc']:.2f} |")

print()
print("| INT8\\* row (seed 0, 10 epochs) | ε = 1 | 3 | 7 | 15 (the row) | 31 | 63 |")
print("|---|---|---|---|---|---|---|")
for row in ("cls1", "cls2", "zo"):
    cells = []
    for eps in (1, 3, 7, 15, 31, 63):
        folder = (Path("runs/repro") / f"lenet5-fashion-int8s8-{row}" if eps == 15
                  else root / "int8-eps" / f"lenet5-fashion-int8s8-{row}-eps{eps}")
        s = [r for r in summaries(folder)][:1]
        cells.append(f"{100 * s[0]['final_val_acc']:.2f}" if s else "—")
    print(f"| {row} (final val %) | " + " | ".join(cells) + " |")
