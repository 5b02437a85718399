# Session 21 (issue 17): the PointNet INT8* hybrids over 45 epochs with q = 4 directions a step,
# beside the q = 1 rows and the frozen-body controls; prints the markdown rows of
# docs/reproduction.md (last epoch, seeds 0-2: test per seed, mean ± std, mean validation,
# forward passes of a run).
import sys

sys.path.insert(0, "scripts")
from seed_rows import print_rows

print_rows([
    ("PointNet INT8\\* Cls1 + average, 45 epochs, q = 1 (session 18)", "pointnet-standin-cls1-int8star-ema-e45"),
    ("PointNet INT8\\* Cls1 + average, 45 epochs, **q = 4** (`-e45-q4`)", "pointnet-standin-cls1-int8star-ema-e45-q4"),
    ("PointNet INT8\\* Cls1, 45 epochs, body frozen (control, session 19)", "pointnet-standin-cls1-int8star-ema-e45-frozen"),
    ("PointNet INT8\\* Cls2 + average, 45 epochs, q = 1 (session 18)", "pointnet-standin-cls2-int8star-ema-e45"),
    ("PointNet INT8\\* Cls2 + average, 45 epochs, **q = 4** (`-e45-q4`)", "pointnet-standin-cls2-int8star-ema-e45-q4"),
    ("PointNet INT8\\* Cls2, 45 epochs, ZO layers frozen (control, session 19)", "pointnet-standin-cls2-int8star-ema-e45-frozen"),
])
