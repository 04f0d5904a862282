// RUN: nncc-opt %s -nncc-add-optimizer="optimizer=adamw weight-decay=0.1" | FileCheck %s
// RUN: nncc-opt %s -nncc-add-optimizer="optimizer=momentum grad-clip=1.0" | FileCheck %s --check-prefix=MOMENTUM
// RUN: not nncc-opt %s -nncc-add-optimizer="optimizer=lion" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not nncc-opt %S/Inputs/no-weights.mlir -nncc-add-optimizer 2>&1 | FileCheck %s --check-prefix=NONE

// AdamW: zero-initialized moments and step count as optimizer state, the
// entry optimizer_step(lr, grad.w) -> step, the decoupled decay applied to
// the weight before the Adam update, every state stored.
// CHECK: ml_program.global private mutable @w.exp_avg : tensor<4xf32> {nncc.optimizer_state}
// CHECK: ml_program.global private mutable @w.exp_avg_sq : tensor<4xf32> {nncc.optimizer_state}
// CHECK: ml_program.global private mutable @optimizer.step : tensor<f32> {nncc.optimizer_state}
// CHECK-LABEL: func.func @optimizer_step(%{{.*}}: tensor<f32> {nn.name = "lr"}, %{{.*}}: tensor<4xf32> {nn.name = "grad.w"}) -> (tensor<f32> {nn.name = "step"})
// CHECK: ml_program.global_store @optimizer.step
// CHECK: nn.pow
// CHECK: %[[W:.*]] = ml_program.global_load @w
// CHECK: nn.mul %[[W]]
// CHECK-DAG: ml_program.global_store @w.exp_avg =
// CHECK-DAG: ml_program.global_store @w.exp_avg_sq =
// CHECK: nn.sqrt
// CHECK: ml_program.global_store @w =
// MOMENTUM: ml_program.global private mutable @w.momentum_buffer : tensor<4xf32> {nncc.optimizer_state}
// MOMENTUM-NOT: exp_avg
// MOMENTUM: nn.reduce_sum
// MOMENTUM: nn.min
// MOMENTUM: ml_program.global_store @w.momentum_buffer =
// NONE: error: nncc-add-optimizer: the module has no trainable weights (mutable f32 globals: compile with --mutable-weights)
// UNKNOWN: error: nncc-add-optimizer: unknown optimizer 'lion' (expected sgd, momentum, adam or adamw)
ml_program.global private mutable @w(dense<1.0> : tensor<4xf32>) : tensor<4xf32>
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = ml_program.global_load @w : tensor<4xf32>
  %y = nn.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

