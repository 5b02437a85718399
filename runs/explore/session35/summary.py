# Session 35 (issue 17): prints the rows of docs/reproduction.md's "Thirty-fifth session's runs":
# PointNet Full ZO f32 on the stand-in over 10 epochs, the new defaults against the old ones;
# then MNIST Full ZO with the new defaults' output turns over the paper's 100 epochs.
import sys

sys.path.insert(0, "scripts")
import seed_rows

seed_rows.RUNS = "runs/explore/session35/pointnet-zo-10ep/"
seed_rows.print_rows([
    ("PointNet Full ZO f32, the zo f32 defaults until 2026-12-07 (dim, zo_lr 2e-4)", "old-defaults"),
    ("PointNet Full ZO f32, the new defaults without output turns (`--zo-activity 0`)", "cyclic-only"),
    ("PointNet Full ZO f32, the new defaults (cyclic, last layer by its outputs)", "new-defaults"),
])
print()
seed_rows.RUNS = "runs/repro/"
seed_rows.print_rows([
    ("LeNet-5 FP32 MNIST Full ZO, `dim`, ×0.9, 150 epochs (the best Full ZO row so far)",
     "lenet5-mnist-zo-fp32-dim-decay0.9-e150"),
    ("LeNet-5 FP32 MNIST Full ZO, the new defaults' output turns, 100 epochs (`-cyclic-activity-scaled-alr8e-3`)",
     "lenet5-mnist-zo-fp32-cyclic-activity-scaled-alr8e-3"),
    ("LeNet-5 FP32 MNIST Full ZO, the same at 1.6e-2 (`-cyclic-activity-scaled-alr1.6e-2`)",
     "lenet5-mnist-zo-fp32-cyclic-activity-scaled-alr1.6e-2"),
])
print()
seed_rows.print_rows([
    ("PointNet FP32 Full ZO, Table 2's row (15 epochs)", "pointnet-standin-zo"),
    ("PointNet FP32 Full ZO, Table 2's row with the new defaults", "pointnet-standin-zo-defaults"),
])
