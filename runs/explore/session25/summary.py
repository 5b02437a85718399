# Session 25 (issue 17): integer batch norm dividing by the deviation in fixed point
# (int_bn_divisor = "fixed") against the power of two nearest it, on the PointNet int8 rows;
# prints the markdown rows of docs/reproduction.md (last epoch: test per seed, mean ± std, mean
# validation, passes), then each seed's test accuracy over its last five epochs (min-max).
import sys

sys.path.insert(0, "scripts")
from seed_rows import print_rows, print_spans

six = [("Cls1 + average, 45 epochs, power of two (sessions 18, 23)", "pointnet-standin-cls1-int8star-ema-e45"),
       ("Cls1 + average, 45 epochs, **fixed divisor**", "pointnet-standin-cls1-int8star-ema-e45-bnfixed"),
       ("Cls2 + average, 45 epochs, power of two (sessions 18, 23)", "pointnet-standin-cls2-int8star-ema-e45"),
       ("Cls2 + average, 45 epochs, **fixed divisor**", "pointnet-standin-cls2-int8star-ema-e45-bnfixed")]
three = [("Cls1 body frozen (control), 45 epochs, power of two (session 19)", "pointnet-standin-cls1-int8star-ema-e45-frozen"),
         ("Cls1 body frozen (control), 45 epochs, fixed divisor", "pointnet-standin-cls1-int8star-ema-e45-frozen-bnfixed"),
         ("Cls2 ZO layers frozen (control), 45 epochs, power of two (session 19)", "pointnet-standin-cls2-int8star-ema-e45-frozen"),
         ("Cls2 ZO layers frozen (control), 45 epochs, fixed divisor", "pointnet-standin-cls2-int8star-ema-e45-frozen-bnfixed"),
         ("INT8 Full BP, 15 epochs, fixed divisor (`-bp-int8-bnfixed`)", "pointnet-standin-bp-int8-bnfixed"),
         ("Cls1, 15 epochs, fixed divisor (`-cls1-int8star-bnfixed`)", "pointnet-standin-cls1-int8star-bnfixed"),
         ("Cls2, 15 epochs, fixed divisor (`-cls2-int8star-bnfixed`)", "pointnet-standin-cls2-int8star-bnfixed"),
         ("Full ZO, 15 epochs, fixed divisor (`-zo-int8star-bnfixed`)", "pointnet-standin-zo-int8star-bnfixed")]
for label, d in six:
    print_rows([(f"PointNet INT8\\* {label}", d)], seeds=range(6))
for label, d in three:
    print_rows([(f"PointNet {label}", d)])
print_spans(six, seeds=range(6))
