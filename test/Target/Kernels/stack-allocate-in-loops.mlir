// RUN: nncc-opt %s -nncc-stack-allocate-in-loops | FileCheck %s

// Allocations of at most 16 KiB inside a kernel's loops go on the stack and
// lose their deallocs; larger ones, and those at the top, stay on the heap.
// CHECK-LABEL: func.func private @rows
// CHECK: memref.alloc() : memref<8xf32>
// CHECK: scf.for
// CHECK: memref.alloca() : memref<4096xf32>
// CHECK: memref.alloc() : memref<4097xf32>
// CHECK: memref.dealloc %{{.*}} : memref<4097xf32>
// CHECK-NOT: memref.dealloc
func.func private @rows(%a: memref<8xf32>) attributes {nncc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 0.0 : f32
  %top = memref.alloc() : memref<8xf32>
  scf.for %i = %c0 to %c1 step %c1 {
    %small = memref.alloc() : memref<4096xf32>
    %large = memref.alloc() : memref<4097xf32>
    memref.store %f, %small[%c0] : memref<4096xf32>
    memref.store %f, %large[%c0] : memref<4097xf32>
    memref.dealloc %large : memref<4097xf32>
    memref.dealloc %small : memref<4096xf32>
  }
  return
}
