# Session 17: the int8 rows evaluated on the weights' integer average against the same rows
# without it (the same training bits); prints the markdown rows of docs/reproduction.md.
import json, statistics as st
def load(d, s):
    return [json.loads(l) for l in open(f"{d}/s{s}/metrics.jsonl")]
R = "runs/repro/"
rows = [("LeNet-5 INT8\\* Fashion Cls1 cyclic", R + "lenet5-fashion-cls1-int8star-cyclic", R + "lenet5-fashion-cls1-int8star-cyclic-ema0.999", (10, 20, 50, 100)),
        ("LeNet-5 INT8\\* Fashion Cls2 cyclic", R + "lenet5-fashion-cls2-int8star-cyclic", R + "lenet5-fashion-cls2-int8star-cyclic-ema0.999", (10, 20, 50, 100)),
        ("PointNet INT8 Full BP", R + "pointnet-standin-bp-int8", R + "pointnet-standin-bp-int8-ema", (5, 10, 15)),
        ("PointNet INT8\\* Cls1", R + "pointnet-standin-cls1-int8star", R + "pointnet-standin-cls1-int8star-ema", (5, 10, 15)),
        ("PointNet INT8\\* Cls2", R + "pointnet-standin-cls2-int8star", R + "pointnet-standin-cls2-int8star-ema", (5, 10, 15))]
for name, a, b, epochs in rows:
    try:
        A = [load(a, s) for s in range(3)]; B = [load(b, s) for s in range(3)]
    except FileNotFoundError as e:
        print(name, "missing", e.filename); continue
    if any(len(x) < epochs[-1] for x in A + B): print(name, "incomplete"); continue
    same = all(x[i]["train_loss"] == y[i]["train_loss"] for x, y in zip(A, B) for i in range(len(x)))
    def f(R, e, k): return [100 * r[e - 1][k] for r in R]
    for e in epochs:
        ta, tb, va, vb = f(A, e, "test_acc"), f(B, e, "test_acc"), f(B, e, "val_acc"), f(A, e, "val_acc")
        va, vb = f(A, e, "val_acc"), f(B, e, "val_acc")
        print(f"| {name} | {e} | " + " / ".join(f"{x:.2f}" for x in tb) + f" | {st.mean(tb):.2f} ± {st.stdev(tb):.2f} | {st.mean(vb):.2f} | {st.mean(ta):.2f} ± {st.stdev(ta):.2f}; {st.mean(va):.2f} |" + ("" if same else " TRAINING DIFFERS"))
