# Session 31 (issue 17): Fashion-MNIST Cls2 with the layers' turns weighted by their sizes, and
# q = 16 over 200 epochs with the average. Prints the markdown rows of docs/reproduction.md
# (last epoch: test, validation, passes) and the last five epochs.
import sys

sys.path.insert(0, "scripts")
from seed_rows import print_rows, print_spans

cls2 = [("Fashion Cls2 cyclic, q = 1, layers in turn (the row)", "lenet5-fashion-cls2-fp32-cyclic"),
        ("Fashion Cls2 cyclic, turns ∝ d_l^-0.5 (`-pow-0.5`)", "lenet5-fashion-cls2-fp32-cyclic-pow-0.5"),
        ("Fashion Cls2 cyclic, turns ∝ d_l^0.5 (`-pow0.5`)", "lenet5-fashion-cls2-fp32-cyclic-pow0.5"),
        ("Fashion Cls2 cyclic, turns ∝ d_l (`-pow1`)", "lenet5-fashion-cls2-fp32-cyclic-pow1"),
        ("Fashion Cls2 cyclic, q = 16, 5.7× the ZO step, 100 epochs (`-q16-zolr8.5e-3`)", "lenet5-fashion-cls2-fp32-cyclic-q16-zolr8.5e-3"),
        ("Fashion Cls2 cyclic, **q = 16, 200 epochs, with the average** (`-q16-zolr8.5e-3-e200-ema`)", "lenet5-fashion-cls2-fp32-cyclic-q16-zolr8.5e-3-e200-ema")]
print_rows([(f"LeNet-5 FP32 {label}", d) for label, d in cls2])
print()
print_spans(cls2)
