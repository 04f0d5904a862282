// RUN: nncc-opt %s -nncc-plan | FileCheck %s --check-prefix=IR
// RUN: nncc-opt %s -nncc-plan | nncc-translate --nncc-plan-to-c | FileCheck %s

// All-gather, reduce-scatter and broadcast are one NNCC_STEP_COLLECTIVE
// each: args the input then the output, each in a buffer the planner places
// like any step's: the gathered result (twice the input) and the scattered
// one (half) take bytes freed by dead values, never their own input's. A reduction
// makes an f32 step; a gather or broadcast moves bytes (reduction and dtype
// 0); the broadcast's root is its peer, the others' peer -1.

module attributes {nncc.parallel = array<i64: 1, 2>} {
  func.func private @scale(%a: tensor<8xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
    return %init : tensor<8xf32>
  }
  func.func private @half(%a: tensor<16xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
    return %init : tensor<8xf32>
  }
  // IR-LABEL: func.func @step
  // IR: exec.launch @scale{{.*}}nncc.buffers = [#exec.arena<64>]
  // IR: dist.all_gather_step {{.*}}nncc.buffers = [#exec.arena<0>]
  // IR: exec.launch @half{{.*}}nncc.buffers = [#exec.arena<64>]
  // IR: dist.reduce_scatter_step {{.*}}nncc.buffers = [#exec.arena<0>]
  // IR: dist.broadcast_step {{.*}}nncc.buffers = [#exec.output<0>]
  func.func @step(%x: tensor<8xf32> {nn.name = "x"}) -> (tensor<4xf32> {nn.name = "y"}) {
    %a = exec.launch @scale(%x) {nodes = "a"} : (tensor<8xf32>) -> tensor<8xf32>
    %g = dist.all_gather_step %a {axis = 0 : i64, group = "tensor", group_size = 2 : i64} : (tensor<8xf32>) -> tensor<16xf32>
    %h = exec.launch @half(%g) {nodes = "h"} : (tensor<16xf32>) -> tensor<8xf32>
    %s = dist.reduce_scatter_step %h {axis = 0 : i64, group = "tensor", group_size = 2 : i64, reduction = "mean"} : (tensor<8xf32>) -> tensor<4xf32>
    %b = dist.broadcast_step %s {group = "tensor", group_size = 2 : i64, root = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
    return %b : tensor<4xf32>
  }
}

// CHECK: static const nncc_buffer_ref e0_s1_args[] = {{[{][{]}}.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = 64, .bytes = 32}, {.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = 0, .bytes = 64}, };
// CHECK: static const int64_t e0_s1_i[] = {[NNCC_COLLECTIVE_OP] = NNCC_COLLECTIVE_ALL_GATHER, [NNCC_COLLECTIVE_REDUCTION] = 0, [NNCC_COLLECTIVE_DTYPE] = 0, [NNCC_COLLECTIVE_GROUP_SIZE] = 2, [NNCC_COLLECTIVE_GROUP] = NNCC_GROUP_TENSOR, [NNCC_COLLECTIVE_PEER] = -1};
// CHECK: static const nncc_buffer_ref e0_s3_args[] = {{[{][{]}}.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = 64, .bytes = 32}, {.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = 0, .bytes = 16}, };
// CHECK: static const int64_t e0_s3_i[] = {[NNCC_COLLECTIVE_OP] = NNCC_COLLECTIVE_REDUCE_SCATTER, [NNCC_COLLECTIVE_REDUCTION] = NNCC_REDUCTION_MEAN, [NNCC_COLLECTIVE_DTYPE] = NNCC_DTYPE_F32, [NNCC_COLLECTIVE_GROUP_SIZE] = 2, [NNCC_COLLECTIVE_GROUP] = NNCC_GROUP_TENSOR, [NNCC_COLLECTIVE_PEER] = -1};
// CHECK: static const nncc_buffer_ref e0_s4_args[] = {{[{][{]}}.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = 0, .bytes = 16}, {.kind = NNCC_BUFFER_OUTPUT, .index = 0, .offset = 0, .bytes = 16}, };
// CHECK: static const int64_t e0_s4_i[] = {[NNCC_COLLECTIVE_OP] = NNCC_COLLECTIVE_BROADCAST, [NNCC_COLLECTIVE_REDUCTION] = 0, [NNCC_COLLECTIVE_DTYPE] = 0, [NNCC_COLLECTIVE_GROUP_SIZE] = 2, [NNCC_COLLECTIVE_GROUP] = NNCC_GROUP_TENSOR, [NNCC_COLLECTIVE_PEER] = 1};
// CHECK: e0_steps[] = {
// CHECK-NEXT: .name = "a"
// CHECK-NEXT: .name = "all-gather"
// CHECK-NEXT: .name = "h"
// CHECK-NEXT: .name = "reduce-scatter"
// CHECK-NEXT: .name = "broadcast"
// CHECK-NEXT: };
