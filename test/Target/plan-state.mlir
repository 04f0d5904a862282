// RUN: nncc-opt %s -nncc-plan | FileCheck %s --check-prefix=IR
// RUN: nncc-opt %s -nncc-plan | nncc-translate --nncc-plan-to-c | FileCheck %s

// Module state: every ml_program.global is a state (initial value from the
// weight blob, or zeros), a global_load reads the state buffer in place,
// and a global_store is a copy into it after every other step, so each
// step reads the value loaded before the update. The updated value stays
// live to the end (it is not reused by the last kernel).

ml_program.global private mutable @w(dense<1.0> : tensor<8xf32>) : tensor<8xf32>
ml_program.global private mutable @moment : tensor<8xf32>
func.func private @axpy(%a: tensor<8xf32>, %b: tensor<8xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  return %init : tensor<8xf32>
}
// IR-LABEL: func.func @update
// IR: exec.launch @axpy{{.*}}nncc.buffers = [#exec.arena<0>]
// IR: exec.launch @axpy{{.*}}nncc.buffers = [#exec.arena<64>]
// IR: exec.launch @axpy{{.*}}nncc.buffers = [#exec.output<0>]
func.func @update(%g: tensor<8xf32> {nn.name = "g"}) -> (tensor<8xf32> {nn.name = "old"}) {
  %w = ml_program.global_load @w : tensor<8xf32>
  %m = ml_program.global_load @moment : tensor<8xf32>
  %m2 = exec.launch @axpy(%m, %g) {nodes = "moment"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  ml_program.global_store @moment = %m2 : tensor<8xf32>
  %w2 = exec.launch @axpy(%w, %m2) {nodes = "step"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  ml_program.global_store @w = %w2 : tensor<8xf32>
  %o = exec.launch @axpy(%w, %g) {nodes = "old"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// CHECK: static const nncc_buffer_ref e0_s0_args[] = {{[{][{]}}.kind = NNCC_BUFFER_STATE, .index = 1, .offset = 0, .bytes = 32}, {.kind = NNCC_BUFFER_INPUT, .index = 0, {{.*}}{.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = 0, .bytes = 32}, };
// CHECK: static const nncc_buffer_ref e0_s1_args[] = {{[{][{]}}.kind = NNCC_BUFFER_STATE, .index = 0, .offset = 0, .bytes = 32}, {.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = 0, .bytes = 32}, {.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = 64, .bytes = 32}, };
// CHECK: static const nncc_buffer_ref e0_s2_args[] = {{[{][{]}}.kind = NNCC_BUFFER_STATE, .index = 0, {{.*}}{.kind = NNCC_BUFFER_OUTPUT, .index = 0,
// The updates, after the last step reading the old weight.
// CHECK: static const nncc_buffer_ref e0_s3_args[] = {{[{][{]}}.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = 0, .bytes = 32}, {.kind = NNCC_BUFFER_STATE, .index = 1, .offset = 0, .bytes = 32}, };
// CHECK: static const nncc_buffer_ref e0_s4_args[] = {{[{][{]}}.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = 64, .bytes = 32}, {.kind = NNCC_BUFFER_STATE, .index = 0, .offset = 0, .bytes = 32}, };
// CHECK: e0_steps[] = {
// CHECK-NEXT: .name = "moment"
// CHECK-NEXT: .name = "step"
// CHECK-NEXT: .name = "old"
// CHECK-NEXT: {.kind = NNCC_STEP_COPY, {{.*}}.name = "state update"},
// CHECK-NEXT: {.kind = NNCC_STEP_COPY, {{.*}}.name = "state update"},
// CHECK-NEXT: };
// CHECK: static const nncc_state states[] = {
// CHECK-NEXT: {.name = "w", .dtype = NNCC_DTYPE_F32, .rank = 1, .dims = state0_dims, .bytes = 32, .init_weight = 0, .shard_parts = 0, .shard_axis = 0, .shard_blocks = 0, .pipeline_stage = 0},
// CHECK-NEXT: {.name = "moment", .dtype = NNCC_DTYPE_F32, .rank = 1, .dims = state1_dims, .bytes = 32, .init_weight = -1, .shard_parts = 0, .shard_axis = 0, .shard_blocks = 0, .pipeline_stage = 0},
// CHECK: .num_states = 2,
// CHECK-NEXT: .states = states,
