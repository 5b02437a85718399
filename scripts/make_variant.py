#!/usr/bin/env python3
"""Writes a config that is BASE with some keys set: the variants of an experiment.

    scripts/make_variant.py BASE.toml OUT.toml "why" key=value ...

Values are TOML as written (strings quoted: zo_mask='"magnitude"'); a key of BASE is replaced
in place, a new one appended. The header names the base and the changes, so each file says
what it is.
"""
import re
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    base, out, why, *pairs = sys.argv[1:]
    changes = dict(p.split("=", 1) for p in pairs)
    lines = [l for l in open(base).read().splitlines() if not l.startswith("#")]
    done = set()
    for i, line in enumerate(lines):
        m = re.match(r"\s*([a-z_0-9]+)\s*=", line)
        if m and m.group(1) in changes:
            lines[i] = f"{m.group(1)} = {changes[m.group(1)]}"
            done.add(m.group(1))
    lines += [f"{k} = {v}" for k, v in changes.items() if k not in done]
    header = [f"# {why}", f"# {base} with " + (", ".join(pairs) or "no change")]
    open(out, "w").write("\n".join(header + lines) + "\n")


main()
