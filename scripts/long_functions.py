#!/usr/bin/env python3
"""Functions in src/ and include/ longer than a limit (default 80 lines), by brace matching: a
line at namespace depth that ends in '{' and is not a class, struct, enum or namespace opens a
function, which ends where the depth returns. The count docs/design.md reports.

    scripts/long_functions.py [LIMIT]
"""
import glob
import re
import sys

OPENS_TYPE = re.compile(r"^\s*(struct|class|enum|union)\b")
OPENS_NAMESPACE = re.compile(r"^\s*namespace\b[^;]*\{$")


def long_functions(path, limit):
    lines = open(path, encoding="utf-8").read().split("\n")
    depth = namespaces = 0
    start = None
    for i, line in enumerate(lines):
        code = line.split("//")[0].rstrip()
        if OPENS_NAMESPACE.match(code):
            namespaces += 1
            depth += 1
            continue
        if (depth == namespaces and start is None and code.endswith("{")
                and not OPENS_TYPE.match(code) and not code.lstrip().startswith(("}", "="))
                and ("(" in code or ")" in code or "const" in code)):
            start = i
            while start > 0 and lines[start - 1].strip() and not lines[start - 1].strip().endswith(
                    (";", "}", "{")) and not lines[start - 1].strip().startswith(("//", "#")):
                start -= 1
            first = i
        depth += code.count("{") - code.count("}")
        namespaces = min(namespaces, depth)
        if start is not None and depth == namespaces:
            if i - first + 1 > limit:
                yield i - first + 1, lines[start].strip()
            start = None


def main():
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 80
    files = sorted(glob.glob("src/**/*.[ch]pp", recursive=True) + glob.glob("src/**/*.h", recursive=True)
                   + glob.glob("include/**/*.h", recursive=True))
    found = [(n, f, name) for f in files for n, name in long_functions(f, limit)]
    for n, f, name in sorted(found, reverse=True):
        print(f"{n:4d}  {f}  {name[:70]}")
    print(f"{len(found)} functions over {limit} lines")


if __name__ == "__main__":
    main()
