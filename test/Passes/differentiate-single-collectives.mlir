// RUN: nncc-opt %s -split-input-file -nncc-differentiate | FileCheck %s

// The tensor group's loss is the same on every rank, so the cotangent of a
// replicated value is too (dist.all_reduce's convention). An all-gather's
// result is replicated: rank r's operand gets part r of its cotangent,
// which a reduce-scatter "mean" of that (replicated) cotangent takes.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>, %[[DY:.*]]: tensor<8x3xf32>
// CHECK: %[[D:.*]] = dist.reduce_scatter %[[DY]] {axis = 0 : i64, group = "tensor", group_size = 4 : i64, reduction = "mean"} : (tensor<8x3xf32>) -> tensor<2x3xf32>
// CHECK: return %[[D]]
func.func @forward(%x: tensor<2x3xf32>) -> tensor<8x3xf32> {
  %g = dist.all_gather %x {axis = 0 : i64, group = "tensor", group_size = 4 : i64} : (tensor<2x3xf32>) -> tensor<8x3xf32>
  return %g : tensor<8x3xf32>
}

// -----

// A reduce-scatter's operand is a partial of the whole sum, whose cotangent
// is every rank's part gathered.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[X:.*]]: tensor<3x4xf32>, %[[DY:.*]]: tensor<3x2xf32>
// CHECK: %[[D:.*]] = dist.all_gather %[[DY]] {axis = 1 : i64, group = "tensor", group_size = 2 : i64} : (tensor<3x2xf32>) -> tensor<3x4xf32>
// CHECK: return %[[D]]
func.func @forward(%x: tensor<3x4xf32>) -> tensor<3x2xf32> {
  %s = dist.reduce_scatter %x {axis = 1 : i64, group = "tensor", group_size = 2 : i64, reduction = "sum"} : (tensor<3x4xf32>) -> tensor<3x2xf32>
  return %s : tensor<3x2xf32>
}

// -----

// A broadcast's cotangent goes to root's operand alone: entry `root` (1)
// of a new leading axis of group_size (3) entries, zeros elsewhere, which
// a reduce-scatter "mean" hands out one entry per rank.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>, %[[DY:.*]]: tensor<4xf32>
// CHECK: %[[L:.*]] = nn.reshape %[[DY]] : (tensor<4xf32>) -> tensor<1x4xf32>
// CHECK: %[[P:.*]] = nn.pad %[[L]] {mode = "constant", pads = array<i64: 1, 0, 1, 0>} : (tensor<1x4xf32>) -> tensor<3x4xf32>
// CHECK: %[[S:.*]] = dist.reduce_scatter %[[P]] {axis = 0 : i64, group = "tensor", group_size = 3 : i64, reduction = "mean"} : (tensor<3x4xf32>) -> tensor<1x4xf32>
// CHECK: %[[D:.*]] = nn.reshape %[[S]] : (tensor<1x4xf32>) -> tensor<4xf32>
// CHECK: return %[[D]]
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %b = dist.broadcast %x {group = "tensor", group_size = 3 : i64, root = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
