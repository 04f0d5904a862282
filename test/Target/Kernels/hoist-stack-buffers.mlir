// RUN: nncc-opt %s -nncc-hoist-stack-buffers | FileCheck %s

// A stack buffer allocated in a kernel's loop moves to the kernel's entry:
// one buffer per call instead of new stack space per iteration.
// CHECK-LABEL: func.func private @rows
// CHECK-NEXT: memref.alloca() : memref<64xf32>
// CHECK: scf.for
// CHECK-NOT: memref.alloca
func.func private @rows(%a: memref<8xf32>) attributes {nncc.kernel} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %row = memref.alloca() : memref<64xf32>
    memref.store %f, %row[%c0] : memref<64xf32>
  }
  return
}
