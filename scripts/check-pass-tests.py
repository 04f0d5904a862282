#!/usr/bin/python3
"""Fails naming every nncc pass or pass pipeline that no lit test runs alone.

The passes and pipelines are those `nncc-opt --help` lists with an `nncc-`
prefix, so a pass added anywhere is checked without touching this script. A
test runs pass P alone when one of its RUN lines invokes nncc-opt with P and
no other nncc pass (upstream passes such as -canonicalize may accompany it;
`nncc-opt -nncc-a | nncc-opt -nncc-b` runs each alone). Test files are those
lit runs: *.mlir and *.test outside Inputs/ folders.

usage: check-pass-tests.py NNCC_OPT TEST_DIR
"""
import os
import re
import subprocess
import sys

SECTIONS = ("    Passes:", "    Pass Pipelines:")
# Passes and pipelines sit 6 spaces in, their options deeper (and an option's
# values 4 spaces in, as "=value"); any other line 4 or fewer spaces in ends
# the section.
SECTION_END = re.compile(r"^(?: {0,3}\S| {4}[^\s=])")
ENTRY = re.compile(r"^ {6}--(nncc-[a-z0-9-]+)\b")
# The longest nncc-name at a position, so nncc-plan-buffers is not nncc-plan.
NAME = re.compile(r"nncc-[a-z0-9]+(?:-[a-z0-9]+)*")
RUN = re.compile(r"\bRUN:(.*)$")
COMMAND_SEPARATORS = re.compile(r"\|\||&&|[|;]")


def registered_passes(nncc_opt):
    help_text = subprocess.run([nncc_opt, "--help"], check=True, capture_output=True,
                               text=True).stdout
    passes, in_section = set(), False
    for line in help_text.splitlines():
        if line in SECTIONS:
            in_section = True
        elif SECTION_END.match(line):
            in_section = False
        elif in_section and (m := ENTRY.match(line)):
            passes.add(m.group(1))
    return passes


def run_lines(path):
    """The RUN commands of a lit test, continuation lines joined."""
    commands, pending = [], ""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = RUN.search(line)
            if not m:
                continue
            text = m.group(1).rstrip()
            if text.endswith("\\"):
                pending += text[:-1] + " "
                continue
            commands.append(pending + text)
            pending = ""
    return commands


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    nncc_opt, test_dir = sys.argv[1:]
    passes = registered_passes(nncc_opt)
    if not passes:
        sys.exit(f"error: `{nncc_opt} --help` lists no nncc- pass: has its format changed?")
    tested = {}
    for root, dirs, files in os.walk(test_dir):
        dirs[:] = sorted(d for d in dirs if d != "Inputs")
        for name in sorted(files):
            if not name.endswith((".mlir", ".test")):
                continue
            path = os.path.join(root, name)
            for command in run_lines(path):
                for segment in COMMAND_SEPARATORS.split(command):
                    if "nncc-opt" not in segment.split():
                        continue
                    named = set(NAME.findall(segment)) & passes
                    if len(named) == 1:
                        tested.setdefault(named.pop(), os.path.relpath(path, test_dir))
    untested = sorted(passes - tested.keys())
    for p in untested:
        print(f"error: no test under {test_dir} runs nncc-opt with --{p} alone "
              "(add a .mlir lit test that does)")
    if untested:
        return 1
    for p in sorted(tested):
        print(f"{p}: {tested[p]}")
    print(f"every one of the {len(passes)} nncc passes and pipelines has a lit test")
    return 0


if __name__ == "__main__":
    sys.exit(main())
