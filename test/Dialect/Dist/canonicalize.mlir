// RUN: nncc-opt %s -canonicalize -split-input-file | FileCheck %s

// A group of one rank: the all-reduce is the identity and folds away.
// CHECK-LABEL: func.func @group_of_one
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<f32>)
// CHECK-NOT: dist.all_reduce
// CHECK: return %[[B]], %[[A]]
func.func @group_of_one(%a: tensor<4xf32>, %b: tensor<f32>) -> (tensor<f32>, tensor<4xf32>) {
  %r:2 = dist.all_reduce %a, %b {group_size = 1 : i64, reduction = "mean"} : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>)
  return %r#1, %r#0 : tensor<f32>, tensor<4xf32>
}

// -----

// A group of two stays.
// CHECK-LABEL: func.func @group_of_two
// CHECK: dist.all_reduce %{{.*}} {group_size = 2 : i64, reduction = "sum"}
func.func @group_of_two(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = dist.all_reduce %a {group_size = 2 : i64, reduction = "sum"} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A group of one rank: all-gather, reduce-scatter and broadcast are the
// identity and fold away.
// CHECK-LABEL: func.func @single_of_one
// CHECK-SAME: (%[[A:.*]]: tensor<4x2xf32>)
// CHECK-NOT: dist.
// CHECK: return %[[A]], %[[A]], %[[A]]
func.func @single_of_one(%a: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>) {
  %g = dist.all_gather %a {axis = 1 : i64, group_size = 1 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %s = dist.reduce_scatter %a {axis = 0 : i64, group_size = 1 : i64, reduction = "mean"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %b = dist.broadcast %a {group_size = 1 : i64, root = 0 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %g, %s, %b : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Groups of two stay.
// CHECK-LABEL: func.func @single_of_two
// CHECK: dist.all_gather
// CHECK: dist.reduce_scatter
// CHECK: dist.broadcast
func.func @single_of_two(%a: tensor<4x2xf32>) -> (tensor<8x2xf32>, tensor<2x2xf32>, tensor<4x2xf32>) {
  %g = dist.all_gather %a {axis = 0 : i64, group_size = 2 : i64} : (tensor<4x2xf32>) -> tensor<8x2xf32>
  %s = dist.reduce_scatter %a {axis = 0 : i64, group_size = 2 : i64, reduction = "sum"} : (tensor<4x2xf32>) -> tensor<2x2xf32>
  %b = dist.broadcast %a {group_size = 2 : i64, root = 1 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %g, %s, %b : tensor<8x2xf32>, tensor<2x2xf32>, tensor<4x2xf32>
}
