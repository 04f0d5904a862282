#!/usr/bin/python3
"""Assembles an ONNX model from ONNX's textual syntax (onnx.parser) for tests.

    onnx-as.py MODEL.onnxtxt -o MODEL.onnx [--no-check] [--external-data]

--external-data moves every initializer of 16+ bytes into MODEL.onnx.data next
to the output (ONNX's external-data layout). Constant nodes whose name starts
with "init_" become initializers first, since the textual syntax of ONNX 1.12
has no initializer list.
"""
import argparse
import os

import onnx
import onnx.parser
from onnx import numpy_helper


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("input")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--no-check", action="store_true")
    parser.add_argument("--external-data", action="store_true")
    args = parser.parse_args()
    with open(args.input) as f:
        model = onnx.parser.parse_model(f.read())
    graph = model.graph
    for node in list(graph.node):
        if node.op_type == "Constant" and node.output[0].startswith("init_"):
            # Through numpy so the data is raw_data, which external data needs.
            array = numpy_helper.to_array(node.attribute[0].t)
            graph.initializer.append(numpy_helper.from_array(array, node.output[0]))
            graph.node.remove(node)
    if not args.no_check:
        onnx.checker.check_model(model)
    if args.external_data:
        onnx.save_model(model, args.output, save_as_external_data=True,
                        all_tensors_to_one_file=True,
                        location=os.path.basename(args.output) + ".data", size_threshold=16)
    else:
        onnx.save(model, args.output)


if __name__ == "__main__":
    main()
