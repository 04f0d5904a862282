#!/bin/sh
# Fails when a binary's dynamic dependencies mention MLIR, LLVM, a BLAS, CUDA,
# NCCL, MPI, protobuf or ONNX: the runtime loads those at run time or not at all.
status=0
for bin in "$@"; do
  deps=$(ldd "$bin") || { echo "ldd failed on $bin"; exit 1; }
  # Library names only (left of "=>"), so a build path cannot match.
  bad=$(echo "$deps" | awk '{print $1}' | grep -i -E 'mlir|llvm|blas|cuda|nccl|mpi|protobuf|onnx')
  if [ -n "$bad" ]; then
    echo "$bin links libraries it must load at run time or not at all:"
    echo "$bad"
    status=1
  else
    echo "$bin: ok"
    echo "$deps"
  fi
done
exit $status
