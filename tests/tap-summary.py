#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Counts the TAP points of meson test logs and prints `N passed, N failed` last.

meson counts whole test programs; this counts every check inside them, so a
run that executed nothing (or skipped everything) is visible.
"""
import json
import re
import sys

POINT = re.compile(r"^(not ok|ok)\b[^#]*(#\s*(SKIP|TODO)\b.*)?", re.IGNORECASE)


def summarize(path):
    passed = failed = skipped = 0
    lines = []
    with open(path, encoding="utf-8") as log:
        for raw in log:
            entry = json.loads(raw)
            p = f = s = 0
            for line in (entry.get("stdout") or "").splitlines():
                m = POINT.match(line.strip())
                if not m:
                    continue
                if m.group(3):
                    s += 1
                elif m.group(1).lower() == "ok":
                    p += 1
                else:
                    f += 1
            if p + f + s == 0:
                # Not a TAP program: the program's own verdict is one check.
                if entry["result"] in ("OK", "EXPECTEDFAIL"):
                    p = 1
                elif entry["result"] == "SKIP":
                    s = 1
                else:
                    f = 1
            elif entry["result"] not in ("OK", "EXPECTEDFAIL", "SKIP") and f == 0:
                f = 1  # crashed or timed out after its last point
            passed, failed, skipped = passed + p, failed + f, skipped + s
            lines.append(f"  {entry['name']:<28} {p:5d} passed {f:4d} failed {s:4d} skipped  [{entry['result']}]")
    return passed, failed, skipped, lines


def main():
    total_p = total_f = total_s = 0
    for path in sys.argv[1:]:
        p, f, s, lines = summarize(path)
        print(f"{path}:")
        print("\n".join(lines))
        total_p, total_f, total_s = total_p + p, total_f + f, total_s + s
    if total_s:
        print(f"({total_s} skipped)")
    print(f"{total_p} passed, {total_f} failed")
    return 1 if total_f or total_p == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
