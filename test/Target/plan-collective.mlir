// RUN: nncc-opt %s -nncc-plan | FileCheck %s --check-prefix=IR
// RUN: nncc-opt %s -nncc-plan | nncc-translate --nncc-plan-to-c | FileCheck %s

// A collective is one plan step (NNCC_STEP_COLLECTIVE): a bucket's inputs,
// then its outputs, each in a buffer the planner places like any step's
// result (the bucket's results do not reuse its inputs' buffers: other
// ranks' values arrive into them while the inputs are read). A result that
// is an output of the entry is written in place. (The step is named after
// its location, which the text between nncc-opt and nncc-translate drops.)
// Without `group` the collective is over the data-parallel group.

func.func private @scale(%a: tensor<16xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  return %init : tensor<16xf32>
}
func.func private @loss(%a: tensor<16xf32>, %init: tensor<f32>) -> tensor<f32> {
  return %init : tensor<f32>
}
// IR-LABEL: func.func @step
// IR: exec.launch @scale{{.*}}nncc.buffers = [#exec.arena<0>]
// IR: exec.launch @scale{{.*}}nncc.buffers = [#exec.arena<64>]
// IR: exec.launch @loss{{.*}}nncc.buffers = [#exec.arena<256>]
// IR: dist.all_reduce_step {{.*}}group_size = 2 : i64, {{.*}}nncc.buffers = [#exec.arena<128>, #exec.arena<192>, #exec.output<0>], reduction = "mean"}
// IR: exec.launch @scale{{.*}}nncc.buffers = [#exec.output<1>]
func.func @step(%x: tensor<16xf32> {nn.name = "x"}) -> (tensor<f32> {nn.name = "loss"}, tensor<16xf32> {nn.name = "y"}) {
  %g0 = exec.launch @scale(%x) {nodes = "g0"} : (tensor<16xf32>) -> tensor<16xf32>
  %g1 = exec.launch @scale(%g0) {nodes = "g1"} : (tensor<16xf32>) -> tensor<16xf32>
  %l = exec.launch @loss(%g1) {nodes = "l"} : (tensor<16xf32>) -> tensor<f32>
  %r:3 = dist.all_reduce_step %g0, %g1, %l {group_size = 2 : i64, reduction = "mean"} : (tensor<16xf32>, tensor<16xf32>, tensor<f32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<f32>) loc("all-reduce bucket 0")
  %y = exec.launch @scale(%r#1) {nodes = "y"} : (tensor<16xf32>) -> tensor<16xf32>
  return %r#2, %y : tensor<f32>, tensor<16xf32>
}

// CHECK: static const nncc_buffer_ref e0_s3_args[] = {{[{][{]}}.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = 0, .bytes = 64}, {.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = 64, .bytes = 64}, {.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = 256, .bytes = 4}, {.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = 128, .bytes = 64}, {.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = 192, .bytes = 64}, {.kind = NNCC_BUFFER_OUTPUT, .index = 0, .offset = 0, .bytes = 4}, };
// CHECK: static const int64_t e0_s3_i[] = {[NNCC_COLLECTIVE_OP] = NNCC_COLLECTIVE_ALL_REDUCE, [NNCC_COLLECTIVE_REDUCTION] = NNCC_REDUCTION_MEAN, [NNCC_COLLECTIVE_DTYPE] = NNCC_DTYPE_F32, [NNCC_COLLECTIVE_GROUP_SIZE] = 2, [NNCC_COLLECTIVE_GROUP] = NNCC_GROUP_DATA, [NNCC_COLLECTIVE_PEER] = -1};
// CHECK: e0_steps[] = {
// CHECK-NEXT: .name = "g0"
// CHECK-NEXT: .name = "g1"
// CHECK-NEXT: .name = "l"
// CHECK-NEXT: {.kind = NNCC_STEP_COLLECTIVE, .kernel = -1, .num_args = 6, .args = e0_s3_args, .num_iparams = 6, .iparams = e0_s3_i, {{.*}}.name = "all-reduce"},
// CHECK-NEXT: .name = "y"
// CHECK-NEXT: };
// A module without nncc.parallel is laid out as its collectives' groups say.
// CHECK: .data_parallel = 2,
// CHECK-NEXT: .tensor_parallel = 1,
