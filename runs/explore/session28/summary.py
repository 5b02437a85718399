# Session 28 (issue 17): PointNet INT8* Full ZO over 180 epochs against 45 and 90 (seed 0).
# Prints the markdown rows of docs/reproduction.md (last epoch: test, validation, passes) and the
# last five epochs (min-max).
import sys

sys.path.insert(0, "scripts")
from seed_rows import print_rows, print_spans

zo = [("Full ZO, 45 epochs, fixed divisor (session 26)", "pointnet-standin-zo-int8star-e45-bnfixed"),
      ("Full ZO, 90 epochs, fixed divisor (session 27)", "pointnet-standin-zo-int8star-e90-bnfixed"),
      ("Full ZO, **180 epochs**, fixed divisor (`-zo-int8star-e180-bnfixed`)", "pointnet-standin-zo-int8star-e180-bnfixed")]
print_rows([(f"PointNet INT8\\* {label}", d) for label, d in zo], seeds=range(1))
print_spans(zo, seeds=range(1))
