# Session 29 (issue 17): LeNet-5 Full ZO and Cls2 with more directions a step. Prints the markdown
# rows of docs/reproduction.md (last epoch: test, validation, passes) and the last five epochs.
import sys

sys.path.insert(0, "scripts")
from seed_rows import print_rows, print_spans

zo = [("Fashion Full ZO, `dim` 4e-4, ×0.9, q = 1 (the row, session 14)", "lenet5-fashion-zo-fp32-dim-lr4e-4-decay0.9"),
      ("Fashion Full ZO, q = 8 at the same step (`-q8`)", "lenet5-fashion-zo-fp32-dim-lr4e-4-decay0.9-q8"),
      ("Fashion Full ZO, q doubling 1 → 16 on 5 stalled epochs (`-qsched16`)", "lenet5-fashion-zo-fp32-dim-lr4e-4-decay0.9-qsched16"),
      ("Fashion Full ZO, **q = 8, 4× the step** (`-dim-lr1.6e-3-decay0.9-q8`)", "lenet5-fashion-zo-fp32-dim-lr1.6e-3-decay0.9-q8")]
cls2 = [("Fashion Cls2 cyclic, q = 1 (the row)", "lenet5-fashion-cls2-fp32-cyclic"),
        ("Fashion Cls2 cyclic, **q = 8, 4× the ZO step** (`-q8-zolr6e-3`)", "lenet5-fashion-cls2-fp32-cyclic-q8-zolr6e-3"),
        ("MNIST Cls2 cyclic + head wd + average, q = 1 (the row)", "lenet5-mnist-cls2-fp32-cyclic-wd5e-4-ema"),
        ("MNIST Cls2 cyclic + head wd + average, **q = 8, 4× the ZO step** (`-q8-zolr6e-3`)", "lenet5-mnist-cls2-fp32-cyclic-wd5e-4-ema-q8-zolr6e-3")]
print_rows([(f"LeNet-5 FP32 {label}", d) for label, d in zo + cls2])
print()
print_spans(zo + cls2)
