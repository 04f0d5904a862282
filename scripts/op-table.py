#!/usr/bin/python3
"""docs/compiler.md's op table is `nncc --list-ops` (the handler registry):
this script writes it between the op-table markers, or with --check fails
(showing the difference) when the file's table is not the registry's.

    scripts/op-table.py build/bin/nncc docs/compiler.md          # regenerate
    scripts/op-table.py --check build/bin/nncc docs/compiler.md  # ctest op-table
"""
import argparse
import difflib
import subprocess
import sys

BEGIN = "<!-- op-table begin: scripts/op-table.py build/bin/nncc docs/compiler.md -->"
END = "<!-- op-table end -->"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    parser.add_argument("nncc")
    parser.add_argument("doc")
    args = parser.parse_args()
    table = subprocess.run([args.nncc, "--list-ops"], check=True, capture_output=True,
                           text=True).stdout
    text = open(args.doc).read()
    if BEGIN not in text or END not in text:
        sys.exit(f"{args.doc}: the op-table markers are missing")
    head, rest = text.split(BEGIN, 1)
    old, tail = rest.split(END, 1)
    new = "\n" + table
    if not args.check:
        open(args.doc, "w").write(head + BEGIN + new + END + tail)
        return 0
    if old == new:
        return 0
    sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                               args.doc, "nncc --list-ops"))
    print(f"{args.doc}'s op table differs from `nncc --list-ops`; regenerate it with "
          f"scripts/op-table.py {args.nncc} {args.doc}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
