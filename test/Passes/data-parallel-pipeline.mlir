// RUN: nncc-opt %s -nncc-add-train-step="loss=mse optimizer=sgd" -nncc-data-parallel="world-size=4" -canonicalize | FileCheck %s
// RUN: nncc-opt %s -nncc-add-train-step="loss=mse optimizer=sgd" -canonicalize | FileCheck %s --check-prefix=SINGLE
// RUN: not nncc-opt %s -nncc-data-parallel="world-size=2" 2>&1 | FileCheck %s --check-prefix=NOSTEP

// After nncc-add-train-step: with 4 ranks, the weight gradient and the loss
// (48 + 4 bytes, one default bucket) are averaged by one all-reduce before
// the update; one process keeps none.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[R:.*]]:2 = dist.all_reduce %{{.*}}, %{{.*}} {group_size = 4 : i64, reduction = "mean"} : (tensor<f32>, tensor<3x4xf32>) -> (tensor<f32>, tensor<3x4xf32>)
// CHECK: nn.mul %{{.*}}, %[[R]]#1
// CHECK: return %[[R]]#0
// SINGLE-LABEL: func.func @train_step
// SINGLE-NOT: dist.all_reduce
// NOSTEP: error: nncc-data-parallel: the module has no entry 'train_step' (compile with --train)
ml_program.global private mutable @w(dense<0.5> : tensor<3x4xf32>) : tensor<3x4xf32>
func.func @forward(%x: tensor<2x3xf32> {nn.name = "x"}) -> (tensor<2x4xf32> {nn.name = "y"}) {
  %w = ml_program.global_load @w : tensor<3x4xf32>
  %y = nn.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
