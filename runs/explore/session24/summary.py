# Session 24 (issue 17): the PointNet INT8* hybrids over 45 epochs with a longer integer average of
# the weights (ema_warmup 3, ema_decay 0.9995), six seeds, beside the twenty-third session's rows;
# prints the markdown rows of docs/reproduction.md (last epoch: test per seed, mean ± std, mean
# validation, passes), then each seed's test accuracy over its last five epochs (min-max).
import sys

sys.path.insert(0, "scripts")
from seed_rows import print_rows, print_spans

rows = [("Cls1 + average", "pointnet-standin-cls1-int8star-ema-e45"),
        ("Cls1 + longer average (`-e45-long`)", "pointnet-standin-cls1-int8star-ema-e45-long"),
        ("Cls2 + average", "pointnet-standin-cls2-int8star-ema-e45"),
        ("Cls2 + longer average (`-e45-long`)", "pointnet-standin-cls2-int8star-ema-e45-long")]
for label, d in rows:
    print_rows([(f"PointNet INT8\\* {label}, 45 epochs", d)], seeds=range(6))
print_spans(rows, seeds=range(6))
