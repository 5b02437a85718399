#!/usr/bin/env python3
"""Prints markdown rows of the last epoch over seeds 0-2 (or others) of runs/repro/<dir>/s<seed>/:
test accuracy per seed, mean ± std, mean validation accuracy, forward passes of a run.

    scripts/seed_rows.py "LABEL=DIR" ...     (the rows' tables in docs/reproduction.md)"""
import json
import statistics
import sys

RUNS = "runs/repro/"


def print_rows(rows, seeds=range(3)):
    for label, d in rows:
        test, val, passes = [], [], None
        for s in seeds:
            try:
                j = json.load(open(f"{RUNS}{d}/s{s}/summary.json"))
            except FileNotFoundError:
                continue
            m = [json.loads(line) for line in open(f"{RUNS}{d}/s{s}/metrics.jsonl")]
            test.append(100 * j["final_test_acc"])
            val.append(100 * j["final_val_acc"])
            passes = m[-1]["forward_passes"]
        if not test:
            print(f"| {label} | missing |")
            continue
        sd = f" ± {statistics.stdev(test):.2f}" if len(test) > 1 else ""
        print(f"| {label} | {len(test)} | " + " / ".join(f"{x:.2f}" for x in test) +
              f" | {statistics.mean(test):.2f}{sd} | {statistics.mean(val):.2f} | {passes:,} |")


def print_spans(rows, seeds=range(3), last=5):
    """Per row, each seed's test accuracy over its last `last` epochs as min-max."""
    for label, d in rows:
        spans = []
        for s in seeds:
            try:
                lines = open(f"{RUNS}{d}/s{s}/metrics.jsonl").read().split("\n")
            except OSError:
                continue
            test = [json.loads(l)["test_acc"] for l in lines if l.strip()][-last:]
            spans.append(f"{100 * min(test):.1f}-{100 * max(test):.1f}")
        print(f"{label}: last {last} epochs' test % per seed: {' / '.join(spans)}")


if __name__ == "__main__":
    print_rows([arg.split("=", 1) for arg in sys.argv[1:]])
