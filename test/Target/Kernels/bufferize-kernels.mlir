// RUN: nncc-opt %s -nncc-bufferize-kernels | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
// A kernel on tensors in destination-passing style: its result becomes the
// init argument's buffer, the temporary a trailing scratch argument of 128
// bytes, and the two elementwise ops loops (each 4x8 nest one loop of 32).
// CHECK-LABEL: func.func private @k(
// CHECK-SAME: %[[X:.*]]: memref<4x8xf32>, %[[OUT:.*]]: memref<4x8xf32>, %[[TMP:.*]]: memref<4x8xf32>)
// CHECK-SAME: nncc.scratch_bytes = array<i64: 128>
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c32) step (%c1)
// CHECK: math.exp
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c32) step (%c1)
// CHECK: arith.addf
// CHECK: return
// CHECK-NOT: memref.alloc
func.func private @k(%x: tensor<4x8xf32>, %init: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {nncc.kernel} {
  %tmp = tensor.empty() : tensor<4x8xf32>
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%tmp : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
