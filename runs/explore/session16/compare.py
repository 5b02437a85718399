import json, statistics as st, sys
def load(d, s):
    return [json.loads(l) for l in open(f"{d}/s{s}/metrics.jsonl")]
rows = [("Fashion Cls1 cyclic + head wd", "runs/explore/head-tuning/lenet5-fashion-cls1-fp32-cyclic-wd5e-4", "runs/repro/lenet5-fashion-cls1-fp32-cyclic-wd5e-4-ema"),
        ("Fashion Cls2 cyclic", "runs/repro/lenet5-fashion-cls2-fp32-cyclic", "runs/repro/lenet5-fashion-cls2-fp32-cyclic-ema"),
        ("MNIST Cls1 cyclic + head wd", "runs/repro/lenet5-mnist-cls1-fp32-cyclic-wd5e-4", "runs/repro/lenet5-mnist-cls1-fp32-cyclic-wd5e-4-ema"),
        ("MNIST Cls2 cyclic + head wd", "runs/repro/lenet5-mnist-cls2-fp32-cyclic-wd5e-4", "runs/repro/lenet5-mnist-cls2-fp32-cyclic-wd5e-4-ema")]
for name, a, b in rows:
    try:
        A = [load(a, s) for s in range(3)]; B = [load(b, s) for s in range(3)]
    except FileNotFoundError as e:
        print(name, "missing", e.filename); continue
    if any(len(x) < 100 for x in A + B): print(name, "incomplete"); continue
    def f(R, e, k): return [100 * r[e - 1][k] for r in R]
    for e in (10, 20, 50, 100):
        ta, tb, va, vb = f(A, e, "test_acc"), f(B, e, "test_acc"), f(A, e, "val_acc"), f(B, e, "val_acc")
        print(f"{name} | {e} | " + " / ".join(f"{x:.2f}" for x in tb) + f" | {st.mean(tb):.2f} ± {st.stdev(tb):.2f} | {st.mean(vb):.2f} | {st.mean(ta):.2f} ± {st.stdev(ta):.2f}; {st.mean(va):.2f} |")
