// RUN: nncc-opt %s -split-input-file -nncc-plan | nncc-translate -split-input-file --nncc-plan-to-c | FileCheck %s
// RUN: nncc-opt %S/Inputs/plan-parallel-invalid.mlir -split-input-file -nncc-plan | not nncc-translate -split-input-file --nncc-plan-to-c 2>&1 | FileCheck %s --check-prefix=ERR

// The parallel contract (docs/distributed.md) in the plan: the module's
// layout (nncc.parallel = [D, T]), a global sharded over the tensor group
// (nncc.shard = [axis, parts]: its type is one part, its value the whole
// tensor, stored whole as its weight), and each collective's group.

module attributes {nncc.parallel = array<i64: 2, 2>} {
  ml_program.global private mutable @w(dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]> : tensor<2x4xf32>) : tensor<2x2xf32> {nncc.shard = array<i64: 1, 2>}
  ml_program.global private mutable @b(dense<1.0> : tensor<3xf32>) : tensor<3xf32>
  func.func @step(%x: tensor<2x2xf32> {nn.name = "x"}) -> (tensor<2x2xf32> {nn.name = "t"}, tensor<2x2xf32> {nn.name = "d"}) {
    %w = ml_program.global_load @w : tensor<2x2xf32>
    %t = dist.all_reduce_step %w {group = "tensor", group_size = 2 : i64, reduction = "sum"} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %d = dist.all_reduce_step %x {group = "data", group_size = 2 : i64, reduction = "mean"} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    return %t, %d : tensor<2x2xf32>, tensor<2x2xf32>
  }
}

// CHECK: e0_s0_i[] = {{.*}}[NNCC_COLLECTIVE_REDUCTION] = NNCC_REDUCTION_SUM, {{.*}}[NNCC_COLLECTIVE_GROUP_SIZE] = 2, [NNCC_COLLECTIVE_GROUP] = NNCC_GROUP_TENSOR, [NNCC_COLLECTIVE_PEER] = -1};
// CHECK: e0_s1_i[] = {{.*}}[NNCC_COLLECTIVE_REDUCTION] = NNCC_REDUCTION_MEAN, {{.*}}[NNCC_COLLECTIVE_GROUP_SIZE] = 2, [NNCC_COLLECTIVE_GROUP] = NNCC_GROUP_DATA, [NNCC_COLLECTIVE_PEER] = -1};
// The weight of the sharded state is the whole tensor (32 bytes), the state one part (16).
// CHECK: static const nncc_weight weights[] = {
// CHECK-NEXT: {.name = "w", .offset = 0, .bytes = 32},
// CHECK-NEXT: {.name = "b", .offset = 64, .bytes = 12},
// CHECK: static const int64_t state0_dims[] = {2, 2};
// CHECK: {.name = "w", .dtype = NNCC_DTYPE_F32, .rank = 2, .dims = state0_dims, .bytes = 16, .init_weight = 0, .shard_parts = 2, .shard_axis = 1, .shard_blocks = 0, .pipeline_stage = 0},
// CHECK-NEXT: {.name = "b", .dtype = NNCC_DTYPE_F32, .rank = 1, .dims = state1_dims, .bytes = 12, .init_weight = 1, .shard_parts = 0, .shard_axis = 0, .shard_blocks = 0, .pipeline_stage = 0},
// CHECK: .data_parallel = 2,
// CHECK-NEXT: .tensor_parallel = 2,

// -----

// Tensor parallelism alone: the layout 1 x 4.
module attributes {nncc.parallel = array<i64: 1, 4>} {
  func.func @f(%x: tensor<4xf32> {nn.name = "x"}) -> (tensor<4xf32> {nn.name = "y"}) {
    %y = dist.all_reduce_step %x {group = "tensor", group_size = 4 : i64, reduction = "sum"} : (tensor<4xf32>) -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
// CHECK: [NNCC_COLLECTIVE_GROUP_SIZE] = 4, [NNCC_COLLECTIVE_GROUP] = NNCC_GROUP_TENSOR, [NNCC_COLLECTIVE_PEER] = -1};
// CHECK: .data_parallel = 1,
// CHECK-NEXT: .tensor_parallel = 4,

// -----

// A fused weight cut in blocks (nncc.shard = [axis, parts, blocks]): the
// state one part (2 of each of the 3 blocks of 4), the weight whole.
module attributes {nncc.parallel = array<i64: 1, 2>} {
  ml_program.global private mutable @qkv(dense<1.0> : tensor<2x12xf32>) : tensor<2x6xf32> {nncc.shard = array<i64: 1, 2, 3>}
  func.func @f(%x: tensor<2x6xf32> {nn.name = "x"}) -> (tensor<2x6xf32> {nn.name = "y"}) {
    %w = ml_program.global_load @qkv : tensor<2x6xf32>
    %y = dist.all_reduce_step %w {group = "tensor", group_size = 2 : i64, reduction = "sum"} : (tensor<2x6xf32>) -> tensor<2x6xf32>
    return %y : tensor<2x6xf32>
  }
}
// CHECK: {.name = "qkv", .offset = 0, .bytes = 96},
// CHECK: {.name = "qkv", .dtype = NNCC_DTYPE_F32, .rank = 2, .dims = state0_dims, .bytes = 48, .init_weight = 0, .shard_parts = 2, .shard_axis = 1, .shard_blocks = 3, .pipeline_stage = 0},

// -----

// Pipeline stages (nncc.parallel = [D, T, P]): each variant of an entry
// named without its .stage<s> suffix and marked with its stage; a send and
// a receive over the pipeline group, peer and group size in their iparams;
// a global's stage in its state.
module attributes {nncc.parallel = array<i64: 1, 1, 2>} {
  ml_program.global private mutable @w(dense<1.0> : tensor<4xf32>) : tensor<4xf32> {nncc.pipeline_stage = 1 : i64}
  ml_program.global private mutable @step(dense<0.0> : tensor<f32>) : tensor<f32> {nncc.pipeline_stage = -1 : i64}
  func.func @f.stage0(%x: tensor<4xf32> {nn.name = "x"}) -> (tensor<4xf32> {nn.name = "y"}) attributes {nncc.pipeline_stage = 0 : i64} {
    dist.send %x {group_size = 2 : i64, peer = 1 : i64} : tensor<4xf32>
    %y = dist.recv {group_size = 2 : i64, peer = 1 : i64} : tensor<4xf32>
    return %y : tensor<4xf32>
  }
  func.func @f.stage1(%x: tensor<4xf32> {nn.name = "x"}) -> (tensor<4xf32> {nn.name = "y"}) attributes {nncc.pipeline_stage = 1 : i64} {
    %y = dist.recv {group_size = 2 : i64, peer = 0 : i64} : tensor<4xf32>
    dist.send %y {group_size = 2 : i64, peer = 0 : i64} : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
// CHECK: e0_s0_i[] = {[NNCC_COLLECTIVE_OP] = NNCC_COLLECTIVE_SEND, [NNCC_COLLECTIVE_REDUCTION] = 0, [NNCC_COLLECTIVE_DTYPE] = 0, [NNCC_COLLECTIVE_GROUP_SIZE] = 2, [NNCC_COLLECTIVE_GROUP] = NNCC_GROUP_PIPELINE, [NNCC_COLLECTIVE_PEER] = 1};
// CHECK: e0_s1_i[] = {[NNCC_COLLECTIVE_OP] = NNCC_COLLECTIVE_RECV, {{.*}}[NNCC_COLLECTIVE_PEER] = 1};
// CHECK: e1_s0_i[] = {[NNCC_COLLECTIVE_OP] = NNCC_COLLECTIVE_RECV, {{.*}}[NNCC_COLLECTIVE_PEER] = 0};
// CHECK: {.name = "f",
// CHECK: .pipeline_stage = 0},
// CHECK: {.name = "f",
// CHECK: .pipeline_stage = 1},
// CHECK: {.name = "w", {{.*}}, .pipeline_stage = 1},
// CHECK-NEXT: {.name = "step", {{.*}}, .pipeline_stage = -1},
// CHECK: .pipeline_parallel = 2,

// Inconsistent contracts (Inputs/plan-parallel-invalid.mlir), each named:
// ERR: error: the module's nncc.parallel must be array<i64: D, T[, P]> with D, T, P >= 1 (data-, tensor- and pipeline-parallel ranks)
// ERR: error: global 'w': nncc.shard = [1, 3, 1] needs 0 <= axis < 2, parts == the module's tensor-parallel size 2 and blocks dividing the part's axis
// ERR: error: global 'w': its initial value is not the whole tensor of its 2 part(s)
// ERR: error: 'dist.all_reduce_step' at {{.*}}: group_size 4 is not the module's tensor-parallel size 2 (nncc.parallel)
// ERR: error: entry 'f' has no nncc.pipeline_stage in a module of pipeline stages
// ERR: error: entry 'f.stage2': nncc.pipeline_stage = 2 needs a stage below the module's 2 and the name '<entry>.stage2'
// ERR: error: 'dist.send' at {{.*}}: group_size 3 is not the module's pipeline-parallel size 2 (nncc.parallel)
// ERR: error: global 'w': nncc.pipeline_stage = 2 is no stage of the module's 2 (or -1)
