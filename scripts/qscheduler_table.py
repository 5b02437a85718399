#!/usr/bin/env python3
"""The QScheduler tables of docs/reproduction.md from runs/repro/<config>/s<seed>/: final test
accuracy mean ± std over seeds, forward passes (mean, and the range when seeds differ), the
final q of each seed and seed 0's q trajectory (q x epochs).

    python3 scripts/qscheduler_table.py [--root DIR] CONFIG_NAME...   (e.g. resnet18-npu-q8)

--root reads DIR/<name>/s<seed>/ instead (an exploration's folder).
"""
import json
import statistics
import sys
from pathlib import Path

args = sys.argv[1:]
root = Path("runs/repro")
if args[:1] == ["--root"]:
    root, args = Path(args[1]), args[2:]
print("| config | seeds | final test acc (%) | forward passes | final q per seed | q trajectory, seed 0 |")
print("|---|---|---|---|---|---|")
for name in args:
    seeds = sorted((root / name).glob("s*/summary.json"))
    if not seeds:
        print(f"| {name} | 0 | not run | | | |")
        continue
    acc, passes, last_q, trajectory = [], [], [], ""
    for i, s in enumerate(seeds):
        summary = json.loads(s.read_text())
        acc.append(100 * summary["final_test_acc"])
        passes.append(summary["forward_passes"])
        qs = [json.loads(l)["q"] for l in (s.parent / "metrics.jsonl").read_text().splitlines() if l]
        last_q.append(str(qs[-1]))
        if i == 0:
            runs = []
            for q in qs:
                if runs and runs[-1][0] == q:
                    runs[-1][1] += 1
                else:
                    runs.append([q, 1])
            trajectory = ", ".join(f"{q}×{n}" for q, n in runs)
    sd = statistics.stdev(acc) if len(acc) > 1 else 0.0
    p = f"{statistics.mean(passes):,.0f}"
    if min(passes) != max(passes):
        p += f" ({min(passes):,}–{max(passes):,})"
    print(f"| {name} | {len(seeds)} | {statistics.mean(acc):.2f} ± {sd:.2f} | {p} | "
          f"{' / '.join(last_q)} | {trajectory} |")
