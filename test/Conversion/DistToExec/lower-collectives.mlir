// RUN: nncc-opt %s -split-input-file -nncc-lower-collectives | FileCheck %s

// An nn all-reduce becomes the exec collective step of the same bucket,
// reduction and group.
// CHECK-LABEL: func.func @bucket
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<f32>)
// CHECK: %[[R:.*]]:2 = dist.all_reduce_step %[[A]], %[[B]] {group_size = 4 : i64, reduction = "mean"} : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>)
// CHECK-NOT: dist.all_reduce
// CHECK: return %[[R]]#1, %[[R]]#0
func.func @bucket(%a: tensor<4xf32>, %b: tensor<f32>) -> (tensor<f32>, tensor<4xf32>) {
  %r:2 = dist.all_reduce %a, %b {group_size = 4 : i64, reduction = "mean"} : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>)
  return %r#1, %r#0 : tensor<f32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sum
// CHECK: dist.all_reduce_step %{{.*}} {group_size = 2 : i64, reduction = "sum"}
func.func @sum(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = dist.all_reduce %a {group_size = 2 : i64, reduction = "sum"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// All-gather, reduce-scatter and broadcast become their steps, with the same
// operand and attributes; a gather along an inner axis whose outer dims are
// 1 is contiguous, so it lowers too.
// CHECK-LABEL: func.func @single
// CHECK-SAME: (%[[A:.*]]: tensor<1x4xf32>, %[[B:.*]]: tensor<8x3xf32>)
// CHECK: %[[G:.*]] = dist.all_gather_step %[[A]] {axis = 1 : i64, group = "tensor", group_size = 2 : i64} : (tensor<1x4xf32>) -> tensor<1x8xf32>
// CHECK: %[[S:.*]] = dist.reduce_scatter_step %[[B]] {axis = 0 : i64, group_size = 4 : i64, reduction = "mean"} : (tensor<8x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[C:.*]] = dist.broadcast_step %[[B]] {group = "pipeline", group_size = 2 : i64, root = 1 : i64} : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK-NOT: dist.all_gather {
// CHECK: return %[[G]], %[[S]], %[[C]]
func.func @single(%a: tensor<1x4xf32>, %b: tensor<8x3xf32>) -> (tensor<1x8xf32>, tensor<2x3xf32>, tensor<8x3xf32>) {
  %g = dist.all_gather %a {axis = 1 : i64, group = "tensor", group_size = 2 : i64} : (tensor<1x4xf32>) -> tensor<1x8xf32>
  %s = dist.reduce_scatter %b {axis = 0 : i64, group_size = 4 : i64, reduction = "mean"} : (tensor<8x3xf32>) -> tensor<2x3xf32>
  %c = dist.broadcast %b {group = "pipeline", group_size = 2 : i64, root = 1 : i64} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  return %g, %s, %c : tensor<1x8xf32>, tensor<2x3xf32>, tensor<8x3xf32>
}
