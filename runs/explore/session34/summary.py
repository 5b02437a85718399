# Session 34 (issue 17): prints the markdown rows of docs/reproduction.md's "Thirty-fourth
# session's runs": the main job's 10 epochs with and without output turns, then the rows.
import sys

sys.path.insert(0, "scripts")
import seed_rows

seed_rows.RUNS = "runs/explore/session34/main-job-10ep/"
steps = [("off", "weights (the default)")] + [
    (f"act{lr}", f"fc by outputs at {lr}") for lr in ("2e-3", "1e-3", "5e-4", "2.5e-4")]
for bp, name in ((2, "Cls1"), (1, "Cls2")):
    seed_rows.print_rows([(f"main job {name}, {label}", f"bp{bp}-{v}") for v, label in steps])
seed_rows.print_rows([(f"main job Full ZO, {label}", f"zo-{v}") for v, label in (
    ("off", "the zo f32 defaults"), ("alr8e-3", "fc by outputs, steps by output count at 8e-3"),
    ("alr1.6e-2", "the same at 1.6e-2"))])
print()
seed_rows.RUNS = "runs/repro/"
rows = [("Fashion Cls2 cyclic, q = 16, 200 epochs, with the average (the row)", "lenet5-fashion-cls2-fp32-cyclic-q16-zolr8.5e-3-e200-ema"),
        ("Fashion Cls2 cyclic, q = 16, 200 epochs, average, **fc1, fc2 by their outputs at 8e-3**", "lenet5-fashion-cls2-fp32-cyclic-q16-e200-ema-activity8e-3"),
        ("Fashion Full BP, 300 epochs (`bp-fp32-e300`)", "lenet5-fashion-bp-fp32-e300"),
        ("Fashion Full BP, 200 epochs", "lenet5-fashion-bp-fp32-e200"),
        ("Fashion Full ZO, `dim` 4e-4, ×0.9, q = 1 (the best q = 1 row)", "lenet5-fashion-zo-fp32-dim-lr4e-4-decay0.9"),
        ("Fashion Full ZO cyclic, fc1-fc3 by their outputs (`zo-fp32-cyclic-activity`)", "lenet5-fashion-zo-fp32-cyclic-activity"),
        ("Fashion Full ZO cyclic, fc1-fc3 by their outputs, **steps by output count** (`-activity-scaled`)", "lenet5-fashion-zo-fp32-cyclic-activity-scaled")]
S = "lenet5-fashion-zo-fp32-cyclic-activity-scaled"
rows += [("Fashion Full ZO, steps by output count, outputs at 8e-3 (`-scaled-alr8e-3`)", S + "-alr8e-3"),
         ("Fashion Full ZO, steps by output count, outputs at 1.6e-2 (`-scaled-alr1.6e-2`)", S + "-alr1.6e-2"),
         ("Fashion Full ZO, steps by output count, outputs at 1.6e-2, convolutions at 3e-3", S + "-alr1.6e-2-zolr3e-3")]
seed_rows.print_rows([(f"LeNet-5 FP32 {label}", d) for label, d in rows])
print()
print("Full ZO step sweep, seed 0 (validation / test %):")
for v in ("", "-alr5e-4", "-alr2e-3", "-alr4e-3", "-alr8e-3", "-alr1.6e-2", "-alr3.2e-2",
          "-zolr7.5e-4", "-zolr3e-3", "-alr8e-3-zolr3e-3", "-alr1.6e-2-zolr3e-3"):
    try:
        j = seed_rows.json.load(open(f"runs/repro/{S}{v}/s0/summary.json"))
        print(f"  {v or '(1e-3)'}: {100 * j['final_val_acc']:.2f} / {100 * j['final_test_acc']:.2f}")
    except FileNotFoundError:
        print(f"  {v}: missing")
print()
seed_rows.print_spans(rows)
