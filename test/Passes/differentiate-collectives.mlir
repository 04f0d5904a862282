// RUN: nncc-opt %s -nncc-differentiate | FileCheck %s

// Megatron's conjugate pair: dist.replicate (f) is the identity forward and
// sums its cotangent over the tensor group backward; a sum over the tensor
// group (g) passes the cotangent of its replicated result through.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>, %[[DY:.*]]: tensor<4xf32>
// CHECK: nn.mul %[[DY]], %{{.*}}
// CHECK: %[[D:.*]] = nn.add
// CHECK: %[[S:.*]] = dist.all_reduce %[[D]] {group = "tensor", group_size = 2 : i64, reduction = "sum"}
// CHECK: return %[[S]]
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = dist.replicate %x {group_size = 2 : i64} : tensor<4xf32>
  %y = nn.mul %r, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = dist.all_reduce %y {group = "tensor", group_size = 2 : i64, reduction = "sum"} : (tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}
