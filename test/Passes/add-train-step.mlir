// RUN: nncc-opt %s -nncc-add-train-step="loss=mse optimizer=sgd" | FileCheck %s
// RUN: nncc-opt %s -nncc-add-train-step="loss=mse optimizer=adam" | FileCheck %s --check-prefix=ADAM

// train_step(x, labels, lr) -> loss: forward and the loss, the backward of
// the loss with respect to the weight (read once from its global), and the
// update stored back; eval_step beside it; no helper function is left.
// CHECK-LABEL: func.func @eval_step
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3xf32> {nn.name = "x"}, %{{[^:]*}}: tensor<2x4xf32> {nn.name = "labels"}, %[[LR:[^:]*]]: tensor<f32> {nn.name = "lr"}) -> (tensor<f32> {nn.name = "loss"})
// CHECK: %[[W:.*]] = ml_program.global_load @w : tensor<3x4xf32>
// CHECK: nn.matmul %[[X]], %[[W]]
// CHECK: nn.reduce_mean
// The weight's gradient: x^T dy; then the update of the weight as loaded
// (loads are the state buffer itself: no copy).
// CHECK: %[[XT:.*]] = nn.transpose %[[X]]
// CHECK: %[[G0:.*]] = nn.matmul %[[XT]]
// The gradient and the loss pass through an all-reduce over a group of one
// (the identity; nncc-data-parallel's synchronization points).
// CHECK: %[[G:.*]] = dist.all_reduce %[[G0]] {group_size = 1 : i64, reduction = "mean"}
// CHECK: dist.all_reduce %{{.*}} {group_size = 1 : i64, reduction = "mean"} : (tensor<f32>) -> tensor<f32>
// CHECK: ml_program.global_store @optimizer.step
// CHECK: %[[W2:.*]] = ml_program.global_load @w
// CHECK: %[[STEP:.*]] = nn.mul %[[LR]], %[[G]]
// CHECK: %[[NEW:.*]] = nn.sub %[[W2]], %[[STEP]]
// CHECK: ml_program.global_store @w = %[[NEW]]
// CHECK-NOT: func.func @"train_step.
// ADAM: ml_program.global private mutable @w.exp_avg : tensor<3x4xf32> {nncc.optimizer_state}
// ADAM: ml_program.global_store @w.exp_avg_sq
ml_program.global private mutable @w(dense<0.5> : tensor<3x4xf32>) : tensor<3x4xf32>
func.func @forward(%x: tensor<2x3xf32> {nn.name = "x"}) -> (tensor<2x4xf32> {nn.name = "y"}) {
  %w = ml_program.global_load @w : tensor<3x4xf32>
  %y = nn.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
