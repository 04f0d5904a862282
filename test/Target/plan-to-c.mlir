// RUN: nncc-opt %s -nncc-plan | nncc-translate --nncc-plan-to-c | FileCheck %s
// RUN: not nncc-translate --nncc-plan-to-c %s 2>&1 | FileCheck %s --check-prefix=UNPLANNED

// The plan C source is a translation of the annotated exec IR: one step per
// op in order, a copy before a GEMM whose accumulator keeps its own buffer,
// a copy for an output no step writes, the kernel's scratch after its
// operands and results, and the kernel facts (host parallel extent, GPU
// launches) from its attributes.

func.func private @bias(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %init: tensor<4x8xf32>) -> tensor<4x8xf32>
    attributes {nncc.scratch_bytes = array<i64: 96>, nncc.parallel_extent = 4 : i64,
                nncc.gpu_launches = [{name = "bias_0", grid = 1 : i64, block = 32 : i64}]} {
  return %init : tensor<4x8xf32>
}
func.func @forward(%x: tensor<4x16xf32> {nn.name = "x"}, %r: tensor<4x8xf32> {nn.name = "r"})
    -> (tensor<4x8xf32> {nn.name = "y"}, tensor<4x16xf32> {nn.name = "same"}) {
  %w = nn.constant dense<1.0> : tensor<16x8xf32>
  %b = nn.constant dense<2.0> : tensor<8xf32>
  %g = exec.gemm %x, %w acc %r {alpha = 1.0 : f64, beta = 1.0 : f64, nodes = "MatMul_1", trans_a = false, trans_b = false} : (tensor<4x16xf32>, tensor<16x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = exec.launch @bias(%g, %b) {nodes = "Add_2"} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y, %x : tensor<4x8xf32>, tensor<4x16xf32>
}

// CHECK: extern void nncc_bias(void **, int64_t, int64_t);
// CHECK: {.name = "x", .dtype = NNCC_DTYPE_F32, .rank = 2, .dims = e0_in0_dims},
// CHECK: {.name = "same", .dtype = NNCC_DTYPE_F32, .rank = 2, .dims = e0_out1_dims},
// The input accumulator r is copied into the GEMM's arena output first.
// CHECK: e0_s0_args[] = {{[{][{]}}.kind = NNCC_BUFFER_INPUT, .index = 1, .offset = 0, .bytes = 128}, {.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = [[G:[0-9]+]], .bytes = 128}, };
// CHECK: e0_s1_args[] = {{[{][{]}}.kind = NNCC_BUFFER_INPUT, .index = 0, {{.*}}{.kind = NNCC_BUFFER_WEIGHT, .index = 0, .offset = 0, .bytes = 512}, {.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = [[G]], .bytes = 128}, };
// CHECK: [NNCC_GEMM_M] = 4, [NNCC_GEMM_N] = 8, [NNCC_GEMM_K] = 16,
// CHECK: [NNCC_GEMM_BETA] = 1.00000000000000000e+00
// The launch writes the output in place; its scratch lies in the arena.
// CHECK: e0_s2_args[] = {{[{][{]}}.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = [[G]], .bytes = 128}, {.kind = NNCC_BUFFER_WEIGHT, .index = 1, .offset = 0, .bytes = 32}, {.kind = NNCC_BUFFER_OUTPUT, .index = 0, .offset = 0, .bytes = 128}, {.kind = NNCC_BUFFER_ARENA, .index = 0, .offset = {{[0-9]+}}, .bytes = 96}, };
// CHECK: e0_s3_args[] = {{[{][{]}}.kind = NNCC_BUFFER_INPUT, .index = 0, .offset = 0, .bytes = 256}, {.kind = NNCC_BUFFER_OUTPUT, .index = 1, .offset = 0, .bytes = 256}, };
// CHECK: e0_steps[] = {
// CHECK-NEXT: {.kind = NNCC_STEP_COPY, {{.*}}.name = "MatMul_1"},
// CHECK-NEXT: {.kind = NNCC_STEP_GEMM, {{.*}}.name = "MatMul_1"},
// CHECK-NEXT: {.kind = NNCC_STEP_KERNEL, .kernel = 0, .num_args = 4, {{.*}}.parallel_extent = 4, .name = "Add_2"},
// CHECK-NEXT: {.kind = NNCC_STEP_COPY, {{.*}}.name = "output copy"},
// CHECK-NEXT: };
// CHECK: .arena_bytes = 256, .num_steps = 4
// CHECK: {.function = "bias_0", .grid = {1, 1, 1}, .block = {32, 1, 1}, .shared_bytes = 0},
// CHECK: {.name = "bias", .cpu = nncc_bias, .num_gpu_launches = 1, .gpu_launches = k0_launches},
// CHECK: .weights_bytes = 544,

// UNPLANNED: error: entry 'forward' has no arena sizes (run the plan pipeline, nncc-plan, first)
