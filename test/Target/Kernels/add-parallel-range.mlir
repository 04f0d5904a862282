// RUN: nncc-opt %s -nncc-add-parallel-range -split-input-file | FileCheck %s

// 128 rows of 256 elements: the rows split into [begin, end) ranges.
// CHECK-LABEL: func.func private @rows
// CHECK-SAME: (%{{.*}}: memref<128x256xf32>, %[[BEGIN:.*]]: index, %[[END:.*]]: index)
// CHECK-SAME: nncc.parallel_extent = 128 : i64
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%[[BEGIN]], %{{.*}}) to (%[[END]], %{{.*}})
func.func private @rows(%a: memref<128x256xf32>) attributes {nncc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %f = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c128, %c256) step (%c1, %c1) {
    memref.store %f, %a[%i, %j] : memref<128x256xf32>
  }
  return
}

// -----

// Too little work to split: the range arguments come, the loop stays whole.
// CHECK-LABEL: func.func private @small
// CHECK-SAME: (%{{.*}}: memref<64xf32>, %{{.*}}: index, %{{.*}}: index)
// CHECK-SAME: nncc.parallel_extent = 0 : i64
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c64)
func.func private @small(%a: memref<64xf32>) attributes {nncc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %f = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %f, %a[%i] : memref<64xf32>
  }
  return
}
