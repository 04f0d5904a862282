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
