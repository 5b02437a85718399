#!/usr/bin/env python3
"""The sign-agreement table (docs/reproduction.md) from runs/sign-agreement/b*-e*-f*/."""
import json
import re
import sys
from pathlib import Path

root = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/sign-agreement")
rows = {}
for d in sorted(root.glob("b*-e*-f*")):
    m = re.fullmatch(r"b(\d+)-e(\d+)-f(\d+)", d.name)
    metrics = d / "metrics.jsonl"
    if not m or not metrics.exists():
        continue
    line = json.loads(metrics.read_text().splitlines()[0])
    b, eps, f = map(int, m.groups())
    rows[(f, eps, b)] = (line["sign_agreement"], line.get("zero_sign_rate", 0.0))
batches = sorted({k[2] for k in rows})
for f in sorted({k[0] for k in rows}):
    print(f"\nInteger loss with {f} fraction bits" + (" (Eq. 12)" if f == 0 else " (ours)"))
    print("| eps | " + " | ".join(f"batch {b}" for b in batches) + " |")
    print("|---|" + "---|" * len(batches))
    for eps in sorted({k[1] for k in rows if k[0] == f}):
        cells = []
        for b in batches:
            if (f, eps, b) in rows:
                a, z = rows[(f, eps, b)]
                cells.append(f"{100 * a:.1f} % ({100 * z:.0f} % ties)")
            else:
                cells.append("–")
        print(f"| {eps} | " + " | ".join(cells) + " |")
