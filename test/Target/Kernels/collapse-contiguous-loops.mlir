// RUN: nncc-opt %s -nncc-collapse-contiguous-loops -split-input-file | FileCheck %s

#nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
#bias = affine_map<(n, c, h, w) -> (c, 0, 0)>
// A channel bias over a 5x7 plane: the unit dims of the bias go first, then
// h and w collapse into one loop of 35.
// CHECK-LABEL: func.func private @bias
// CHECK-DAG: memref.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : memref<2x3x5x7xf32> into memref<2x3x35xf32>
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
func.func private @bias(%x: memref<2x3x5x7xf32>, %b: memref<3x1x1xf32>, %y: memref<2x3x5x7xf32>) attributes {nncc.kernel} {
  linalg.generic {indexing_maps = [#nchw, #bias, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %b : memref<2x3x5x7xf32>, memref<3x1x1xf32>) outs(%y : memref<2x3x5x7xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#in = affine_map<(b, i) -> (b, i, i)>
#out = affine_map<(b, i) -> (b, i)>
// A diagonal read is no contiguous run: its loops stay.
// CHECK-LABEL: func.func private @diagonal
// CHECK-NOT: collapse_shape
// CHECK: iterator_types = ["parallel", "parallel"]
func.func private @diagonal(%x: memref<3x4x4xf32>, %y: memref<3x4xf32>) attributes {nncc.kernel} {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<3x4x4xf32>) outs(%y : memref<3x4xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
// A body reading linalg.index keeps its loops (collapsing would divide per
// element to recover the index).
// CHECK-LABEL: func.func private @indexed
// CHECK-NOT: collapse_shape
// CHECK: iterator_types = ["parallel", "parallel"]
func.func private @indexed(%y: memref<4x8xf32>) attributes {nncc.kernel} {
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%y : memref<4x8xf32>) {
  ^bb0(%out: f32):
    %j = linalg.index 1 : index
    %i = arith.index_cast %j : index to i32
    %f = arith.sitofp %i : i32 to f32
    linalg.yield %f : f32
  }
  return
}
