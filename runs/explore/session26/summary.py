# Session 26 (issue 17): PointNet INT8* with the fixed batch-norm divisor: Full ZO over 45
# epochs, and Cls1 with a smaller integer body step (zo_move 0.1) against the same seeds of the
# session-25 row and its frozen-body control; prints the markdown rows of docs/reproduction.md
# (last epoch: test per seed, mean ± std, mean validation, passes) and each seed's last five
# epochs (min-max).
import sys

sys.path.insert(0, "scripts")
from seed_rows import print_rows, print_spans

zo = [("Full ZO, 15 epochs, fixed divisor (session 25)", "pointnet-standin-zo-int8star-bnfixed"),
      ("Full ZO, **45 epochs**, fixed divisor (`-zo-int8star-e45-bnfixed`)", "pointnet-standin-zo-int8star-e45-bnfixed")]
cls1 = [("Cls1 + average, 45 epochs, fixed divisor (session 25)", "pointnet-standin-cls1-int8star-ema-e45-bnfixed"),
        ("Cls1 + average, 45 epochs, fixed divisor, **zo_move 0.1** (`-e45-bnfixed-move0.1`)", "pointnet-standin-cls1-int8star-ema-e45-bnfixed-move0.1"),
        ("Cls1 body frozen (control), 45 epochs, fixed divisor (session 25)", "pointnet-standin-cls1-int8star-ema-e45-frozen-bnfixed")]
for label, d in zo:
    print_rows([(f"PointNet INT8\\* {label}", d)], seeds=range(3))
for label, d in cls1:
    print_rows([(f"PointNet INT8\\* {label}", d)], seeds=range(2))
print_spans(zo + cls1, seeds=range(2))
