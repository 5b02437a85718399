# Session 30 (issue 17): Fashion-MNIST Cls2 with q = 1, 8, 16 and 32 directions a step, and q
# growing on stalls with the step growing with it. Prints the markdown rows of
# docs/reproduction.md (last epoch: test, validation, passes) and the last five epochs.
import sys

sys.path.insert(0, "scripts")
from seed_rows import print_rows, print_spans

cls2 = [("Fashion Cls2 cyclic, q = 1 (the row)", "lenet5-fashion-cls2-fp32-cyclic"),
        ("Fashion Cls2 cyclic, q = 8, 4× the ZO step (`-q8-zolr6e-3`)", "lenet5-fashion-cls2-fp32-cyclic-q8-zolr6e-3"),
        ("Fashion Cls2 cyclic, **q = 16, 5.7× the ZO step** (`-q16-zolr8.5e-3`)", "lenet5-fashion-cls2-fp32-cyclic-q16-zolr8.5e-3"),
        ("Fashion Cls2 cyclic, q = 32, 8.9× the ZO step (`-q32-zolr1.3e-2`)", "lenet5-fashion-cls2-fp32-cyclic-q32-zolr1.3e-2"),
        ("Fashion Cls2 cyclic, q doubling 1 → 16 on 5 stalled epochs, step × q^0.63 (`-qsched16-lrexp0.63`)", "lenet5-fashion-cls2-fp32-cyclic-qsched16-lrexp0.63")]
print_rows([(f"LeNet-5 FP32 {label}", d) for label, d in cls2])
print()
print_spans(cls2)
