// RUN: nncc-opt %s | nncc-opt | FileCheck %s

// The single-value collectives and their plan steps print and parse back.
// CHECK-LABEL: func.func @graph
// CHECK: dist.all_gather %{{.*}} {axis = 1 : i64, group = "tensor", group_size = 2 : i64} : (tensor<3x4xf32>) -> tensor<3x8xf32>
// CHECK: dist.reduce_scatter %{{.*}} {axis = 0 : i64, group_size = 4 : i64, reduction = "mean"} : (tensor<8x2xf32>) -> tensor<2x2xf32>
// CHECK: dist.broadcast %{{.*}} {group = "pipeline", group_size = 2 : i64, root = 1 : i64} : (tensor<5xi32>) -> tensor<5xi32>
func.func @graph(%a: tensor<3x4xf32>, %b: tensor<8x2xf32>, %c: tensor<5xi32>) -> (tensor<3x8xf32>, tensor<2x2xf32>, tensor<5xi32>) {
  %g = dist.all_gather %a {axis = 1 : i64, group = "tensor", group_size = 2 : i64} : (tensor<3x4xf32>) -> tensor<3x8xf32>
  %s = dist.reduce_scatter %b {axis = 0 : i64, group_size = 4 : i64, reduction = "mean"} : (tensor<8x2xf32>) -> tensor<2x2xf32>
  %r = dist.broadcast %c {group = "pipeline", group_size = 2 : i64, root = 1 : i64} : (tensor<5xi32>) -> tensor<5xi32>
  return %g, %s, %r : tensor<3x8xf32>, tensor<2x2xf32>, tensor<5xi32>
}

// CHECK-LABEL: func.func @steps
// CHECK: dist.all_gather_step %{{.*}} {axis = 1 : i64, group_size = 2 : i64} : (tensor<1x4xf16>) -> tensor<1x8xf16>
// CHECK: dist.reduce_scatter_step %{{.*}} {axis = 0 : i64, group_size = 4 : i64, reduction = "sum"} : (tensor<8x2xf32>) -> tensor<2x2xf32>
// CHECK: dist.broadcast_step %{{.*}} {group_size = 2 : i64, root = 0 : i64} : (tensor<5xi32>) -> tensor<5xi32>
func.func @steps(%a: tensor<1x4xf16>, %b: tensor<8x2xf32>, %c: tensor<5xi32>) -> (tensor<1x8xf16>, tensor<2x2xf32>, tensor<5xi32>) {
  %g = dist.all_gather_step %a {axis = 1 : i64, group_size = 2 : i64} : (tensor<1x4xf16>) -> tensor<1x8xf16>
  %s = dist.reduce_scatter_step %b {axis = 0 : i64, group_size = 4 : i64, reduction = "sum"} : (tensor<8x2xf32>) -> tensor<2x2xf32>
  %r = dist.broadcast_step %c {group_size = 2 : i64, root = 0 : i64} : (tensor<5xi32>) -> tensor<5xi32>
  return %g, %s, %r : tensor<1x8xf16>, tensor<2x2xf32>, tensor<5xi32>
}
