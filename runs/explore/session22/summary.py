# Session 22 (issue 17): the MNIST Cls2 row over 1600 epochs beside its 400- and 800-epoch rows;
# prints the markdown rows of docs/reproduction.md (last epoch, seeds 0-2: test per seed, mean ±
# std, mean validation, forward passes of a run).
import sys

sys.path.insert(0, "scripts")
from seed_rows import print_rows

print_rows([
    ("LeNet-5 FP32 MNIST Cls2 cyclic + head wd + average, 400 epochs (session 18)", "lenet5-mnist-cls2-fp32-cyclic-wd5e-4-e400-ema"),
    ("LeNet-5 FP32 MNIST Cls2 cyclic + head wd + average, 800 epochs (session 20)", "lenet5-mnist-cls2-fp32-cyclic-wd5e-4-e800-ema"),
    ("LeNet-5 FP32 MNIST Cls2 cyclic + head wd + average, **1600 epochs** (`-e1600-ema`)", "lenet5-mnist-cls2-fp32-cyclic-wd5e-4-e1600-ema"),
])
