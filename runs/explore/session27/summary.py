# Session 27 (issue 17): PointNet INT8* Cls1 with smaller integer body steps (zo_move 0.03 and
# 0.01) and with the head learning from a clean pass (head_grad clean) against session 26's 0.1,
# the full move and the frozen body on the same seeds; Full ZO over 90 epochs against 45. Prints the markdown rows of docs/reproduction.md (last epoch: test
# per seed, mean ± std, mean validation, passes) and each seed's last five epochs (min-max).
import sys

sys.path.insert(0, "scripts")
from seed_rows import print_rows, print_spans

cls1 = [("Cls1 + average, 45 epochs, fixed divisor, full move (session 25)", "pointnet-standin-cls1-int8star-ema-e45-bnfixed"),
        ("Cls1 + average, 45 epochs, fixed divisor, zo_move 0.1 (session 26)", "pointnet-standin-cls1-int8star-ema-e45-bnfixed-move0.1"),
        ("Cls1 + average, 45 epochs, fixed divisor, **zo_move 0.03** (`-e45-bnfixed-move0.03`)", "pointnet-standin-cls1-int8star-ema-e45-bnfixed-move0.03"),
        ("Cls1 + average, 45 epochs, fixed divisor, **zo_move 0.01** (`-e45-bnfixed-move0.01`)", "pointnet-standin-cls1-int8star-ema-e45-bnfixed-move0.01"),
        ("Cls1 + average, 45 epochs, fixed divisor, zo_move 0.1, **head from a clean pass** (`-e45-bnfixed-move0.1-clean`)", "pointnet-standin-cls1-int8star-ema-e45-bnfixed-move0.1-clean"),
        ("Cls1 body frozen (control), 45 epochs, fixed divisor (session 25)", "pointnet-standin-cls1-int8star-ema-e45-frozen-bnfixed")]
zo = [("Full ZO, 45 epochs, fixed divisor (session 26)", "pointnet-standin-zo-int8star-e45-bnfixed"),
      ("Full ZO, **90 epochs**, fixed divisor (`-zo-int8star-e90-bnfixed`)", "pointnet-standin-zo-int8star-e90-bnfixed")]
print_rows([(f"PointNet INT8\\* {label}", d) for label, d in cls1], seeds=range(2))
print_rows([(f"PointNet INT8\\* {label}", d) for label, d in zo], seeds=range(1))
print_spans(cls1 + zo, seeds=range(2))
