# Session 18 (issue 17): the rows stretched further and INT8* Cls2 at q = 2; prints the markdown
# rows of docs/reproduction.md (last epoch, seeds 0-2: test per seed, mean ± std, mean
# validation, forward passes of a run).
import sys

sys.path.insert(0, "scripts")
from seed_rows import print_rows

print_rows([
    ("LeNet-5 INT8\\* Fashion Cls2, bits5432, 300 epochs (session 17)", "lenet5-fashion-cls2-int8star-cyclic-ema-bits5432-e300"),
    ("LeNet-5 INT8\\* Fashion Cls2, bits5432, **400 epochs** (`-e400`)", "lenet5-fashion-cls2-int8star-cyclic-ema-bits5432-e400"),
    ("LeNet-5 INT8\\* Fashion Cls2, bits5432, 200 epochs at q = 2 (`-e200-q2`)", "lenet5-fashion-cls2-int8star-cyclic-ema-bits5432-e200-q2"),
    ("LeNet-5 FP32 MNIST Cls2 cyclic + head wd + average, 100 epochs (session 16)", "lenet5-mnist-cls2-fp32-cyclic-wd5e-4-ema"),
    ("LeNet-5 FP32 MNIST Cls2 cyclic + head wd + average, 200 epochs (`-e200-ema`)", "lenet5-mnist-cls2-fp32-cyclic-wd5e-4-e200-ema"),
    ("LeNet-5 FP32 MNIST Cls2 cyclic + head wd + average, 400 epochs (`-e400-ema`)", "lenet5-mnist-cls2-fp32-cyclic-wd5e-4-e400-ema"),
    ("PointNet INT8\\* Cls1 + average, 15 epochs (session 17)", "pointnet-standin-cls1-int8star-ema"),
    ("PointNet INT8\\* Cls1 + average, 45 epochs (`-e45`)", "pointnet-standin-cls1-int8star-ema-e45"),
    ("PointNet INT8\\* Cls1 + average, 90 epochs (`-e90`)", "pointnet-standin-cls1-int8star-ema-e90"),
    ("PointNet INT8\\* Cls2 + average, 15 epochs (session 17)", "pointnet-standin-cls2-int8star-ema"),
    ("PointNet INT8\\* Cls2 + average, 45 epochs (`-e45`)", "pointnet-standin-cls2-int8star-ema-e45"),
    ("PointNet INT8\\* Cls2 + average, 90 epochs (`-e90`)", "pointnet-standin-cls2-int8star-ema-e90"),
])
