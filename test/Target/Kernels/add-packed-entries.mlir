// RUN: nncc-opt %s -nncc-add-packed-entries -split-input-file -verify-diagnostics | FileCheck %s

// Kernel pointers become noalias; nncc_k loads the buffers from its packed
// argument array and passes the range on.
// CHECK-LABEL: llvm.func @k(
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: i64, %{{.*}}: i64)
// CHECK-LABEL: llvm.func @nncc_k(
// CHECK-SAME: %[[ARGS:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i64, %[[END:.*]]: i64)
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call @k(%[[P0]], %[[P1]], %[[BEGIN]], %[[END]])
llvm.func @k(%a: !llvm.ptr, %b: !llvm.ptr, %begin: i64, %end: i64) attributes {nncc.kernel} {
  llvm.return
}

// -----

// A kernel without the range of nncc-add-parallel-range cannot be called.
// expected-error @+1 {{kernel 'no_range' has no trailing (begin, end) range}}
llvm.func @no_range(%a: !llvm.ptr) attributes {nncc.kernel} {
  llvm.return
}
