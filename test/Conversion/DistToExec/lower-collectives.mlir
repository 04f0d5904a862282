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
