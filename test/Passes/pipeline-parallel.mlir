// RUN: nncc-opt %s -nncc-pipeline-parallel="stages=2 micro-batches=2" | FileCheck %s
// RUN: nncc-opt %s -nncc-pipeline-parallel="stages=2 micro-batches=2 train=true loss=mse" | FileCheck %s --check-prefix=TRAIN
// RUN: nncc-opt %s -nncc-pipeline-parallel="stages=2 micro-batches=2 train=true loss=mse grad-clip=1.0" | FileCheck %s --check-prefix=CLIP

// Two layers of equal cost: the cut falls between them (the relu between
// is as close to the middle on either side: the first wins). Each stage's
// forward takes the whole batch (2 micro-batches of 2), slices it; stage 0
// sends the hidden activation of each micro-batch to stage 1, which
// concatenates the outputs and sends them back, so both return them.
// CHECK: module attributes {nncc.parallel = array<i64: 1, 1, 2>}
// CHECK-LABEL: func.func @forward.stage0
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32> {nn.name = "x"}) -> (tensor<4x8xf32> {nn.name = "y"})
// CHECK-SAME: nncc.pipeline_stage = 0 : i64
// CHECK: %[[X0:.*]] = nn.slice %[[X]] {ends = array<i64: 2, 8>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>}
// CHECK: %[[H0:.*]] = nn.matmul %[[X0]]
// CHECK: dist.send %[[H0]] {group_size = 2 : i64, peer = 1 : i64} : tensor<2x8xf32>
// CHECK: nn.slice %[[X]] {ends = array<i64: 4, 8>, starts = array<i64: 2, 0>
// CHECK: dist.send %{{.*}} {group_size = 2 : i64, peer = 1 : i64}
// CHECK: %[[Y:.*]] = dist.recv {group_size = 2 : i64, peer = 1 : i64} : tensor<4x8xf32>
// CHECK: return %[[Y]]
// CHECK-LABEL: func.func @forward.stage1
// CHECK-SAME: nncc.pipeline_stage = 1 : i64
// CHECK: %[[A0:.*]] = dist.recv {group_size = 2 : i64, peer = 0 : i64} : tensor<2x8xf32>
// CHECK: %[[R0:.*]] = nn.relu %[[A0]]
// CHECK: %[[Y0:.*]] = nn.matmul %[[R0]]
// CHECK: %[[A1:.*]] = dist.recv {group_size = 2 : i64, peer = 0 : i64} : tensor<2x8xf32>
// CHECK: %[[R1:.*]] = nn.relu %[[A1]]
// CHECK: %[[Y1:.*]] = nn.matmul %[[R1]]
// CHECK: %[[YS:.*]] = nn.concat %[[Y0]], %[[Y1]] {axis = 0 : i64}
// CHECK: dist.send %[[YS]] {group_size = 2 : i64, peer = 0 : i64} : tensor<4x8xf32>
// CHECK: return %[[YS]]
// CHECK-NOT: func.func @forward(

// Training: each weight belongs to the stage of its layer; 1F1B on stage 0
// is F0 F1 B0 B1 (a warm-up of one forward), on stage 1 F0 B0 F1 B1. The
// loss of each micro-batch is seeded with 1/2; stage 1 sends the cotangent
// of the activation back; each stage sums its weight's gradients and
// updates it; the loss goes from the last stage to the first.
// TRAIN-DAG: ml_program.global private mutable @w1({{.*}}) : tensor<8x8xf32> {nncc.pipeline_stage = 0 : i64}
// TRAIN-DAG: ml_program.global private mutable @w2({{.*}}) : tensor<8x8xf32> {nncc.pipeline_stage = 1 : i64}
// TRAIN-LABEL: func.func @eval_step.stage0
// TRAIN-LABEL: func.func @train_step.stage0
// TRAIN-SAME: (%{{.*}}: tensor<4x8xf32> {nn.name = "x"}, %{{.*}}: tensor<4x8xf32> {nn.name = "labels"}, %[[LR:.*]]: tensor<f32> {nn.name = "lr"}) -> (tensor<f32> {nn.name = "loss"})
// TRAIN: dist.send {{.*}} peer = 1 : i64
// TRAIN: dist.send {{.*}} peer = 1 : i64
// TRAIN: %[[D0:.*]] = dist.recv {group_size = 2 : i64, peer = 1 : i64} : tensor<2x8xf32>
// TRAIN: %[[D1:.*]] = dist.recv {group_size = 2 : i64, peer = 1 : i64} : tensor<2x8xf32>
// TRAIN: %[[G:.*]] = nn.add
// TRAIN: dist.all_reduce %[[G]] {group_size = 1 : i64, reduction = "mean"}
// TRAIN: ml_program.global_store @w1
// TRAIN-NOT: ml_program.global_store @w2
// TRAIN: %[[L:.*]] = dist.recv {group_size = 2 : i64, peer = 1 : i64} : tensor<f32>
// TRAIN: return %[[L]]
// TRAIN-LABEL: func.func @train_step.stage1
// TRAIN: dist.recv {{.*}} peer = 0 : i64
// TRAIN: nn.constant dense<5.000000e-01> : tensor<f32>
// TRAIN: dist.send {{.*}} peer = 0 : i64
// TRAIN: dist.recv {{.*}} peer = 0 : i64
// TRAIN: dist.send {{.*}} peer = 0 : i64
// TRAIN: %[[LOSS:.*]] = dist.all_reduce {{.*}} : (tensor<f32>) -> tensor<f32>
// TRAIN-NOT: ml_program.global_store @w1
// TRAIN: ml_program.global_store @w2
// TRAIN: dist.send %[[LOSS]] {group_size = 2 : i64, peer = 0 : i64} : tensor<f32>
// TRAIN: return %[[LOSS]]
// TRAIN-NOT: func.func @"train_step.fn"
// --grad-clip: each stage's sum of squared gradients is summed over the
// pipeline group before the norm scales its own gradients.
// CLIP-LABEL: func.func @train_step.stage0
// CLIP: %[[S0:.*]] = dist.all_reduce %{{.*}} {group = "pipeline", group_size = 2 : i64, reduction = "sum"} : (tensor<f32>) -> tensor<f32>
// CLIP: nn.sqrt %[[S0]]
// CLIP: ml_program.global_store @w1
// CLIP-LABEL: func.func @train_step.stage1
// CLIP: %[[S1:.*]] = dist.all_reduce %{{.*}} {group = "pipeline", group_size = 2 : i64, reduction = "sum"} : (tensor<f32>) -> tensor<f32>
// CLIP: nn.sqrt %[[S1]]
// CLIP: ml_program.global_store @w2
ml_program.global private mutable @w1(dense<0.5> : tensor<8x8xf32>) : tensor<8x8xf32>
ml_program.global private mutable @w2(dense<0.25> : tensor<8x8xf32>) : tensor<8x8xf32>
func.func @forward(%x: tensor<2x8xf32> {nn.name = "x"}) -> (tensor<2x8xf32> {nn.name = "y"}) {
  %w1 = ml_program.global_load @w1 : tensor<8x8xf32>
  %h = nn.matmul %x, %w1 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %a = nn.relu %h : tensor<2x8xf32>
  %w2 = ml_program.global_load @w2 : tensor<8x8xf32>
  %y = nn.matmul %a, %w2 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

