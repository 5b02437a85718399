# Session 19 (issue 17): PointNet INT8* Cls1 over 45 epochs, three variants and the frozen-body
# control; prints the rows of docs/reproduction.md (scripts/seed_rows.py's columns).
import sys

sys.path.insert(0, "scripts")
from seed_rows import print_rows

print_rows([
    ("PointNet INT8\\* Cls1 + average, 45 epochs (session 18)", "pointnet-standin-cls1-int8star-ema-e45"),
    ("PointNet INT8\\* Cls1, 45 epochs, `zo_move = 0.25` (`-e45-move0.25`)", "pointnet-standin-cls1-int8star-ema-e45-move0.25"),
    ("PointNet INT8\\* Cls1, 45 epochs, `zo_move = 0.1` (`-e45-move0.1`)", "pointnet-standin-cls1-int8star-ema-e45-move0.1"),
    ("PointNet INT8\\* Cls1, 45 epochs, `ema_decay = 0.9995` (`ema9995-e45`)", "pointnet-standin-cls1-int8star-ema9995-e45"),
    ("PointNet INT8\\* Cls1, 45 epochs, sparsity 0.5 from epoch 15 on (`-e45-sp05`)", "pointnet-standin-cls1-int8star-ema-e45-sp05"),
    ("PointNet INT8\\* Cls1, 45 epochs, body frozen (control: sparsity 0.99999, `-e45-frozen`)", "pointnet-standin-cls1-int8star-ema-e45-frozen"),
    ("PointNet INT8\\* Cls2 + average, 45 epochs (session 18)", "pointnet-standin-cls2-int8star-ema-e45"),
    ("PointNet INT8\\* Cls2, 45 epochs, ZO layers frozen (control, `-e45-frozen`)", "pointnet-standin-cls2-int8star-ema-e45-frozen"),
])
