# Session 23 (issue 17): the PointNet INT8* hybrids over 45 epochs, seeds 0-2 (session 18), the new
# seeds 3-5, all six, and seed 3 with batch norm's statistics from every batch; prints the markdown
# rows of docs/reproduction.md (last epoch: test per seed, mean ± std, mean validation, passes).
import sys

sys.path.insert(0, "scripts")
from seed_rows import print_rows

for label, d in [("Cls1 + average", "pointnet-standin-cls1-int8star-ema-e45"),
                 ("Cls2 + average", "pointnet-standin-cls2-int8star-ema-e45")]:
    for seeds, which in [(range(3), "seeds 0-2 (session 18)"), (range(3, 6), "seeds 3-5"),
                         (range(6), "**seeds 0-5**")]:
        print_rows([(f"PointNet INT8\\* {label}, 45 epochs, {which}", d)], seeds=seeds)
print_rows([("PointNet INT8\\* Cls1 + average, 45 epochs, batch norm's statistics from all 111 "
             "batches of an epoch (`-e45-bn256`), seed 3",
             "pointnet-standin-cls1-int8star-ema-e45-bn256")], seeds=[3])
