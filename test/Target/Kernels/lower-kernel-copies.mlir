// RUN: nncc-opt %s -nncc-lower-kernel-copies -split-input-file | FileCheck %s

// A copy between differently laid out views becomes linalg.copy (loops,
// later): memref.copy of a strided view would call MLIR's C runner library.
// CHECK-LABEL: func.func private @strided
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%{{.*}} : memref<4x4xf32, strided<[8, 1]>>) outs(%{{.*}} : memref<4x4xf32>)
func.func private @strided(%a: memref<4x8xf32>, %b: memref<4x4xf32>) attributes {nncc.kernel} {
  %v = memref.subview %a[0, 0] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1]>>
  memref.copy %v, %b : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32>
  return
}

// -----

// A value computed in place through a slice leaves a copy of a subview onto
// an identical subview: dropped.
// CHECK-LABEL: func.func private @same_view
// CHECK-NOT: copy
// CHECK: return
func.func private @same_view(%a: memref<4x8xf32>) attributes {nncc.kernel} {
  %v = memref.subview %a[0, 4] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  %w = memref.subview %a[0, 4] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  memref.copy %v, %w : memref<4x4xf32, strided<[8, 1], offset: 4>> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  return
}

// -----

// Only functions marked nncc.kernel are kernels.
// CHECK-LABEL: func.func private @not_a_kernel
// CHECK: memref.copy
func.func private @not_a_kernel(%a: memref<4xf32>, %b: memref<4xf32>) {
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  return
}
