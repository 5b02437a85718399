# Session 32 (issue 17): Fashion-MNIST Cls2 with the layer in turn's step scaled by its size, and
# q = 16 over 300 epochs with the average. Prints the markdown rows of docs/reproduction.md
# (last epoch: test, validation, passes) and the last five epochs.
import sys

sys.path.insert(0, "scripts")
from seed_rows import print_rows, print_spans

cls2 = [("Fashion Cls2 cyclic, q = 1, steps unscaled (the row)", "lenet5-fashion-cls2-fp32-cyclic"),
        ("Fashion Cls2 cyclic, steps × (d̄/d_l)^0.5 (`-scale0.5`)", "lenet5-fashion-cls2-fp32-cyclic-scale0.5"),
        ("Fashion Cls2 cyclic, steps × d̄/d_l (`-scale1`)", "lenet5-fashion-cls2-fp32-cyclic-scale1"),
        ("Fashion Cls2 cyclic, q = 16, 200 epochs, with the average (`-q16-zolr8.5e-3-e200-ema`)", "lenet5-fashion-cls2-fp32-cyclic-q16-zolr8.5e-3-e200-ema"),
        ("Fashion Cls2 cyclic, **q = 16, 300 epochs, with the average** (`-q16-zolr8.5e-3-e300-ema`)", "lenet5-fashion-cls2-fp32-cyclic-q16-zolr8.5e-3-e300-ema")]
print_rows([(f"LeNet-5 FP32 {label}", d) for label, d in cls2])
print()
print_spans(cls2)
