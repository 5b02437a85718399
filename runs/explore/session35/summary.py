# Session 35 (issue 17): prints the rows of docs/reproduction.md's "Thirty-fifth session's runs":
# PointNet Full ZO f32 on the stand-in over 10 epochs, the new defaults against the old ones.
import sys

sys.path.insert(0, "scripts")
import seed_rows

seed_rows.RUNS = "runs/explore/session35/pointnet-zo-10ep/"
seed_rows.print_rows([
    ("PointNet Full ZO f32, the zo f32 defaults until 2026-12-07 (dim, zo_lr 2e-4)", "old-defaults"),
    ("PointNet Full ZO f32, the new defaults without output turns (`--zo-activity 0`)", "cyclic-only"),
    ("PointNet Full ZO f32, the new defaults (cyclic, last layer by its outputs)", "new-defaults"),
])
