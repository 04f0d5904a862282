// RUN: nncc-opt %s -split-input-file -nncc-data-parallel="world-size=2 bucket-bytes=64" | FileCheck %s
// RUN: nncc-opt %s -split-input-file -nncc-data-parallel="world-size=1" | FileCheck %s --check-prefix=ONE

// The values train_step synchronizes (each behind an all-reduce over a
// group of one, as nncc-add-train-step leaves them) go into buckets of at
// most 64 bytes in the order they are computed: the loss (4 bytes, ready
// first), then %g2 (64 bytes: a bucket of its own), then %g0 and %g1 (32
// bytes each). Each bucket's all-reduce sits right after its last value.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[L:.*]] = nn.neg %{{.*}} : tensor<f32>
// CHECK-NEXT: %[[RL:.*]] = dist.all_reduce %[[L]] {group_size = 2 : i64, reduction = "mean"}
// CHECK-NEXT: %[[G2:.*]] = nn.mul
// CHECK-NEXT: %[[R2:.*]] = dist.all_reduce %[[G2]] {group_size = 2 : i64, reduction = "mean"}
// CHECK-NEXT: %[[G0:.*]] = nn.neg
// CHECK-NEXT: nn.exp
// CHECK-NEXT: %[[G1:.*]] = nn.neg
// CHECK-NEXT: %[[R01:.*]]:2 = dist.all_reduce %[[G0]], %[[G1]] {group_size = 2 : i64, reduction = "mean"} : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
// CHECK-NOT: group_size = 1
// CHECK: return %[[RL]], %[[R01]]#0, %[[R01]]#1, %[[R2]]
// ONE-LABEL: func.func @train_step
// ONE-COUNT-4: group_size = 1
func.func @train_step(%s: tensor<f32>, %a: tensor<8xf32>, %b: tensor<16xf32>) -> (tensor<f32>, tensor<8xf32>, tensor<8xf32>, tensor<16xf32>) {
  %l = nn.neg %s : tensor<f32>
  %g2 = nn.mul %b, %b : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %g0 = nn.neg %a : tensor<8xf32>
  %e = nn.exp %a : tensor<8xf32>
  %g1 = nn.neg %e : tensor<8xf32>
  %r0 = dist.all_reduce %g0 {group_size = 1 : i64, reduction = "mean"} : (tensor<8xf32>) -> tensor<8xf32>
  %r1 = dist.all_reduce %g1 {group_size = 1 : i64, reduction = "mean"} : (tensor<8xf32>) -> tensor<8xf32>
  %r2 = dist.all_reduce %g2 {group_size = 1 : i64, reduction = "mean"} : (tensor<16xf32>) -> tensor<16xf32>
  %rl = dist.all_reduce %l {group_size = 1 : i64, reduction = "mean"} : (tensor<f32>) -> tensor<f32>
  return %rl, %r0, %r1, %r2 : tensor<f32>, tensor<8xf32>, tensor<8xf32>, tensor<16xf32>
}
