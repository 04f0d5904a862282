// RUN: nncc-opt %s -nncc-hoist-scratch -split-input-file | FileCheck %s

// Static temporaries at the top of a kernel become trailing arguments (arena
// scratch), their bytes recorded in argument order; an allocation inside a
// loop stays.
// CHECK-LABEL: func.func private @k
// CHECK-SAME: (%{{.*}}: memref<8xf32>, %[[S:.*]]: memref<16xf32>, %[[T:.*]]: memref<4xbf16>)
// CHECK-SAME: nncc.scratch_bytes = array<i64: 64, 8>
// CHECK: memref.store %{{.*}}, %[[S]]
// CHECK: memref.store %{{.*}}, %[[T]]
// CHECK: scf.for
// CHECK: memref.alloc() : memref<2xf32>
func.func private @k(%a: memref<8xf32>) attributes {nncc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 0.0 : f32
  %h = arith.constant 0.0 : bf16
  %s = memref.alloc() : memref<16xf32>
  %t = memref.alloc() : memref<4xbf16>
  memref.store %f, %s[%c0] : memref<16xf32>
  memref.store %h, %t[%c0] : memref<4xbf16>
  scf.for %i = %c0 to %c1 step %c1 {
    %r = memref.alloc() : memref<2xf32>
    memref.store %f, %r[%c0] : memref<2xf32>
  }
  return
}

// -----

// A kernel without temporaries records nothing; other functions keep theirs.
// CHECK-LABEL: func.func private @none
// CHECK-NOT: nncc.scratch_bytes
// CHECK-LABEL: func.func private @not_a_kernel
// CHECK: memref.alloc
func.func private @none(%a: memref<8xf32>) attributes {nncc.kernel} {
  return
}
func.func private @not_a_kernel(%a: memref<8xf32>) {
  %s = memref.alloc() : memref<16xf32>
  return
}
