# Session 20 (issue 17): the hybrids against Full BP at the same epochs on Fashion-MNIST, and MNIST
# Cls2 over 800 epochs; prints the markdown rows of docs/reproduction.md (last epoch, seeds 0-2:
# test per seed, mean ± std, mean validation, forward passes of a run).
import sys

sys.path.insert(0, "scripts")
from seed_rows import print_rows

print_rows([
    ("LeNet-5 FP32 Fashion Full BP, 100 epochs (`configs/paper/lenet5-fashion-bp-fp32.toml`)", "lenet5-fashion-bp-fp32"),
    ("LeNet-5 FP32 Fashion Full BP, 200 epochs (`-e200`)", "lenet5-fashion-bp-fp32-e200"),
    ("LeNet-5 FP32 Fashion Cls1 cyclic + head wd + average, 100 epochs (session 16)", "lenet5-fashion-cls1-fp32-cyclic-wd5e-4-ema"),
    ("LeNet-5 FP32 Fashion Cls1 cyclic + head wd + average, 200 epochs (`-e200-ema`)", "lenet5-fashion-cls1-fp32-cyclic-wd5e-4-e200-ema"),
    ("LeNet-5 FP32 MNIST Cls2 cyclic + head wd + average, 400 epochs (session 18)", "lenet5-mnist-cls2-fp32-cyclic-wd5e-4-e400-ema"),
    ("LeNet-5 FP32 MNIST Cls2 cyclic + head wd + average, **800 epochs** (`-e800-ema`)", "lenet5-mnist-cls2-fp32-cyclic-wd5e-4-e800-ema"),
])
