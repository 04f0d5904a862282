// RUN: nncc-opt %s -nncc-host-codegen | FileCheck %s

// A bufferized kernel in the LLVM dialect: bare noalias pointers, the rows
// split into the trailing [begin, end) range, and the packed entry the
// runtime calls.
// CHECK-LABEL: llvm.func @rows(
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: i64, %{{.*}}: i64)
// CHECK-SAME: nncc.parallel_extent = 128 : i64
// CHECK-LABEL: llvm.func @nncc_rows(
// CHECK: llvm.call @rows(
func.func private @rows(%a: memref<128x256xf32>) attributes {nncc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c128, %c256) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<128x256xf32>
    %y = math.tanh %x : f32
    memref.store %y, %a[%i, %j] : memref<128x256xf32>
  }
  return
}
