# Session 18 (issue 17): the rows stretched further and INT8* Cls2 at q = 2; prints the markdown
# rows of docs/reproduction.md (last epoch, seeds 0-2: test per seed, mean ± std, mean
# validation, forward passes of a run).
import json, statistics as st
R = "runs/repro/"
ROWS = [
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
]
for name, d in ROWS:
    test, val, passes = [], [], None
    for s in range(3):
        try:
            j = json.load(open(f"{R}{d}/s{s}/summary.json"))
        except FileNotFoundError:
            continue
        m = [json.loads(l) for l in open(f"{R}{d}/s{s}/metrics.jsonl")]
        test.append(100 * j["final_test_acc"]); val.append(100 * j["final_val_acc"])
        passes = m[-1]["forward_passes"]
    if not test:
        print(f"| {name} | missing |"); continue
    sd = f" ± {st.stdev(test):.2f}" if len(test) > 1 else ""
    print(f"| {name} | {len(test)} | " + " / ".join(f"{x:.2f}" for x in test) +
          f" | {st.mean(test):.2f}{sd} | {st.mean(val):.2f} | {passes:,} |")
