# Session 24 (issue 17): the PointNet INT8* hybrids over 45 epochs with a longer integer average of
# the weights (ema_warmup 3, ema_decay 0.9995), six seeds, beside the twenty-third session's rows;
# prints the markdown rows of docs/reproduction.md (last epoch: test per seed, mean ± std, mean
# validation, passes), then each seed's test accuracy over its last five epochs (min-max).
import json
import sys

sys.path.insert(0, "scripts")
from seed_rows import print_rows

rows = [("Cls1 + average", "pointnet-standin-cls1-int8star-ema-e45"),
        ("Cls1 + longer average (`-e45-long`)", "pointnet-standin-cls1-int8star-ema-e45-long"),
        ("Cls2 + average", "pointnet-standin-cls2-int8star-ema-e45"),
        ("Cls2 + longer average (`-e45-long`)", "pointnet-standin-cls2-int8star-ema-e45-long")]
for label, d in rows:
    print_rows([(f"PointNet INT8\\* {label}, 45 epochs", d)], seeds=range(6))
for label, d in rows:
    spans = []
    for s in range(6):
        try:
            lines = open(f"runs/repro/{d}/s{s}/metrics.jsonl").read().split("\n")
        except OSError:
            continue
        test = [json.loads(l)["test_acc"] for l in lines if l.strip()][-5:]
        spans.append(f"{100 * min(test):.1f}-{100 * max(test):.1f}")
    print(f"{label}: last five epochs' test % per seed: {' / '.join(spans)}")
