#!/usr/bin/env python3
"""The tables of docs/distributed.md from bench/distributed.sh's results.

    bench/distributed_table.py docs/data/distributed-2026-12-03.jsonl

Per case: bytes each rank sends per step (N = 2) against data-parallel backprop's ring
all-reduce of the same model (4 bytes x parameters x 2(N-1)/N); ms per step of 1 rank on 1 and
2 threads and of 2 ranks on 1 thread each (medians over the rounds); and the step-time model
T(N) = R + S * share(N) + m * alpha * log2(N) fitted to the 1-rank and 2-rank times (R: the part
every rank repeats, S: the part the ranks share; share(N) = ceil(B/N)/B of a batch of B rows in
data mode, ceil(q/N)/q of q samples in directions mode), and the speed-up it predicts over one
rank for N = 4, 16 and 64 ranks whose collectives take alpha = 50 us (a fleet's Ethernet).
"""
import json
import math
import re
import statistics
import sys
from collections import defaultdict

ALPHA = 50e-6  # an MPI collective's latency on a fleet's Ethernet
RANKS = (4, 16, 64)


def flag(flags, name, default):
    m = re.search(r"--" + name + r" (\S+)", flags)
    return m.group(1) if m else default


def main(path):
    runs = defaultdict(list)
    for line in open(path):
        if line.strip():
            r = json.loads(line)
            runs[(r["case"], r["mode"])].append(r)
    print("| case | mode | parameters | bytes/step/rank, ZO (2 ranks) | backprop all-reduce | ratio |")
    print("|---|---|---|---|---|---|")
    for (case, mode), rs in runs.items():
        zo = next(r for r in rs if r["ranks"] == 2)
        bp = 4 * zo["num_parameters"] * 2 * (2 - 1) / 2
        b = zo["bytes_sent_per_step"]
        ratio = f"{bp / b:,.0f}× less" if bp >= b else f"{b / bp:.1f}× more"
        print(f"| {case} | {mode} | {zo['num_parameters']:,} | {b:,.0f} | {bp:,.0f} | {ratio} |")
    print()
    print("| case | mode | ms/step, 1 rank × 1 thread | 1 rank × 2 threads | 2 ranks × 1 thread |"
          " 2 ranks vs 1 thread | vs 2 threads | R, S (ms) | model: speed-up at N = "
          + ", ".join(str(n) for n in RANKS) + " | bound (R+S)/R |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (case, mode), rs in runs.items():
        flags = rs[0]["flags"]
        q = int(flag(flags, "q", "1"))
        passes = 2 * q
        steps = rs[0]["forward_passes"] / passes

        def ms(ranks, threads):
            t = [r["train_seconds"] for r in rs if r["ranks"] == ranks and r["threads"] == threads]
            return 1000 * statistics.median(t) / steps

        t1, t1t2, t2 = ms(1, 1), ms(1, 2), ms(2, 1)
        s = 2 * (t1 - t2)
        r = t1 - s
        batch = int(flag(flags, "batch", "64"))
        units = batch if mode == "data" else q

        def model(n):
            # Collectives per step: an all-gather per pass (data), per round of n samples
            # (directions); NITI int8 by rows adds a range per requantized tensor (LeNet-5: 6
            # a pass) and the sums of the losses and of the head's gradient.
            m = passes if mode == "data" else math.ceil(q / n)
            if mode == "data" and "--precision int8 " in flags + " ":
                m = passes * 6 + 2
            return r + s * math.ceil(units / n) / units + m * ALPHA * 1e3 * math.log2(n)

        ups = ", ".join(f"{t1 / model(n):.1f}×" for n in RANKS)
        bound = f"{(r + s) / r:.1f}×" if r > 0 else "—"
        print(f"| {case} | {mode} | {t1:.2f} | {t1t2:.2f} | {t2:.2f} | {t1 / t2:.2f}× | "
              f"{t1t2 / t2:.2f}× | {r:.2f}, {s:.2f} | {ups} | {bound} |")


if __name__ == "__main__":
    main(sys.argv[1])
