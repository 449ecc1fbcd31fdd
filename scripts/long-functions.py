#!/usr/bin/env python3
"""Lists the functions longer than a limit in the crates' `src/` (tests excluded), longest first.

Usage: scripts/long-functions.py [LIMIT] [PATH...]   (default 80 lines, crates/*/src)

A function runs from its `fn` line to the closing brace at the same indentation; inline
`#[cfg(test)] mod tests` blocks are skipped. Prints `lines path:line name` per function and a
count; exit status 0 always (it measures, it does not judge).
"""
import glob
import re
import sys

FN = re.compile(r"^(\s*)(?:pub(?:\([a-z]+\))? )?(?:const )?(?:async )?(?:unsafe )?fn (\w+)")


def functions(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    in_tests = None
    for i, line in enumerate(lines):
        if in_tests is not None:
            if line == in_tests + "}":
                in_tests = None
            continue
        if re.match(r"^\s*#\[cfg\(test\)\]", line):
            j = i + 1
            while j < len(lines) and lines[j].lstrip().startswith("#["):
                j += 1
            if j < len(lines) and re.match(r"^\s*mod tests", lines[j]):
                in_tests = re.match(r"^(\s*)", lines[j]).group(1)
            continue
        m = FN.match(line)
        if not m or line.rstrip().endswith(";"):
            continue
        indent = m.group(1)
        for j in range(i, len(lines)):
            if lines[j] == indent + "}":
                yield (j - i + 1, f"{path}:{i + 1}", m.group(2))
                break


def main():
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 80
    paths = sys.argv[2:] or sorted(glob.glob("crates/*/src/**/*.rs", recursive=True))
    found = [f for p in paths for f in functions(p) if f[0] > limit]
    for n, where, name in sorted(found, reverse=True):
        print(f"{n:5} {where} {name}")
    print(f"{len(found)} function(s) over {limit} lines")


if __name__ == "__main__":
    main()
