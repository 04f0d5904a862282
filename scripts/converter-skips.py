#!/usr/bin/python3
"""Counts the backend test models below opset 13 that import without ONNX's
version converter: those whose every node (subgraphs included) is a
default-domain op with a handler at the model's own opset, per the table
`nncc --list-ops` prints.

    scripts/converter-skips.py build/bin/nncc [SUITE ...]
"""
import glob
import subprocess
import sys

import onnx

DATA = "/usr/share/libonnx-testdata/data"


def supported(nncc):
    """op -> list of (first, last) opset ranges from `nncc --list-ops`."""
    table = {}
    rows = subprocess.run([nncc, "--list-ops"], check=True, capture_output=True, text=True).stdout
    for line in rows.splitlines()[2:]:
        op, ranges, _ = [c.strip() for c in line.strip("|").split("|")]
        table[op] = [tuple(int(v) for v in r.split("-")) for r in ranges.split(", ")]
    return table


def handled(graph, opset, table):
    for node in graph.node:
        if node.domain not in ("", "ai.onnx"):
            return False
        if not any(lo <= opset <= hi for lo, hi in table.get(node.op_type, [])):
            return False
        for attr in node.attribute:
            subgraphs = list(attr.graphs) + ([attr.g] if attr.HasField("g") else [])
            if not all(handled(g, opset, table) for g in subgraphs):
                return False
    return True


def main():
    table = supported(sys.argv[1])
    for suite in sys.argv[2:] or ["node", "pytorch-converted", "pytorch-operator", "simple"]:
        old = skipped = 0
        for path in sorted(glob.glob(f"{DATA}/{suite}/*/model.onnx")):
            model = onnx.load(path, load_external_data=False)
            opsets = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
            if not opsets or opsets[0] >= 13:
                continue
            old += 1
            skipped += handled(model.graph, opsets[0], table)
        print(f"{suite}: {skipped} of {old} models below opset 13 import without the converter")


if __name__ == "__main__":
    main()
