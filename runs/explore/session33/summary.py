# Session 33 (issue 17): activity perturbation (zo_activity) on LeNet-5 Fashion-MNIST against the
# rows at equal forward passes, and Full BP over 300 epochs. Prints the markdown rows of
# docs/reproduction.md (last epoch: test, validation, passes) and the last five epochs.
import sys

sys.path.insert(0, "scripts")
from seed_rows import print_rows, print_spans

rows = [("Fashion Cls2 cyclic, q = 1 (the row)", "lenet5-fashion-cls2-fp32-cyclic"),
        ("Fashion Cls2 cyclic, **fc1, fc2 by their outputs** (`-activity`)", "lenet5-fashion-cls2-fp32-cyclic-activity"),
        ("Fashion Cls1 cyclic, q = 1 (the row)", "lenet5-fashion-cls1-fp32-cyclic"),
        ("Fashion Cls1 cyclic, **fc1 by its outputs** (`-activity`)", "lenet5-fashion-cls1-fp32-cyclic-activity"),
        ("Fashion Full ZO, `dim` 4e-4, ×0.9, q = 1 (the best q = 1 row)", "lenet5-fashion-zo-fp32-dim-lr4e-4-decay0.9"),
        ("Fashion Full ZO cyclic, **fc1-fc3 by their outputs** (`zo-fp32-cyclic-activity`)", "lenet5-fashion-zo-fp32-cyclic-activity"),
        ("Fashion Cls2 cyclic, q = 16, 200 epochs, with the average (the row)", "lenet5-fashion-cls2-fp32-cyclic-q16-zolr8.5e-3-e200-ema"),
        ("Fashion Cls2 cyclic, q = 16, 200 epochs, average, outputs at 4e-3", "lenet5-fashion-cls2-fp32-cyclic-q16-e200-ema-activity4e-3"),
        ("Fashion Cls2 cyclic, q = 16, 200 epochs, average, outputs at 8e-3", "lenet5-fashion-cls2-fp32-cyclic-q16-e200-ema-activity8e-3"),
        ("Fashion Full BP, 300 epochs (`bp-fp32-e300`)", "lenet5-fashion-bp-fp32-e300")]
print_rows([(f"LeNet-5 FP32 {label}", d) for label, d in rows])
print()
print_spans(rows)
