// RUN: nncc-opt %s -split-input-file -nncc-lower-contractions | FileCheck %s
// RUN: nncc-opt %s -split-input-file -nncc-lower-contractions=cpu-only | FileCheck %s --check-prefix=CPU

// A MatMul is one GEMM call.
// CHECK-LABEL: func.func @matmul
// CHECK-NEXT: exec.gemm %arg0, %arg1 {alpha = 1.000000e+00 : f64, beta = 0.000000e+00 : f64, nodes = "mm", trans_a = false, trans_b = false} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>

func.func @matmul(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32> loc("mm")
  return %0 : tensor<2x3xf32>
}

// -----

// A Gemm's C of another shape is broadcast by an expand kernel, then
// accumulated with beta.
// CHECK-LABEL: func.func @gemm_broadcast_c
// CHECK: %[[C:.*]] = exec.launch @k0_expand(%arg2) {nodes = "g"} : (tensor<1x3xf32>) -> tensor<2x3xf32>
// CHECK: exec.gemm %arg0, %arg1 acc %[[C]] {alpha = 1.000000e+00 : f64, beta = 5.000000e-01 : f64, nodes = "g", trans_a = false, trans_b = true}
// CHECK: func.func private @k0_expand

func.func @gemm_broadcast_c(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>, %c: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.5 : f64, trans_a = false, trans_b = true} : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<1x3xf32>) -> tensor<2x3xf32> loc("g")
  return %0 : tensor<2x3xf32>
}

// -----

// A convolution: im2col kernel, one batched GEMM over views, bias kernel.
// With cpu-only, im2col reads a zero-padded copy of the input.
// CHECK-LABEL: func.func @conv
// CHECK: %[[COL:.*]] = exec.launch @k0_im2col(%arg0) {nodes = "conv"} : (tensor<1x2x8x8xf32>) -> tensor<1x2x3x3x8x8xf32>
// CHECK: %[[B:.*]] = exec.view %[[COL]] : tensor<1x2x3x3x8x8xf32> -> tensor<1x18x64xf32>
// CHECK: %[[A:.*]] = exec.view %arg1 : tensor<3x2x3x3xf32> -> tensor<3x18xf32>
// CHECK: %[[G:.*]] = exec.gemm %[[A]], %[[B]] {{.*}} -> tensor<1x3x64xf32>
// CHECK: %[[V:.*]] = exec.view %[[G]] : tensor<1x3x64xf32> -> tensor<1x3x8x8xf32>
// CHECK: exec.launch @k0_bias(%[[V]], %arg2) {inplace_operands = array<i64: 0>, nodes = "conv"}
// CHECK: func.func private @k0_im2col
// CHECK-NOT: tensor.pad
// CHECK: func.func private @k0_bias
// CPU-LABEL: func.func @conv
// CPU: func.func private @k0_im2col
// CPU: tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]

func.func @conv(%x: tensor<1x2x8x8xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x3x8x8xf32> {
  %0 = nn.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x8x8xf32> loc("conv")
  return %0 : tensor<1x3x8x8xf32>
}

// -----

// Small images in a batch: one GEMM over the columns of all images, then a
// transpose kernel back to [n, M, P].
// CHECK-LABEL: func.func @whole_batch
// CHECK: exec.launch @k0_im2col(%arg0) {{.*}} -> tensor<2x3x3x2x4x4xf32>
// CHECK: exec.gemm {{.*}} : (tensor<3x18xf32>, tensor<18x32xf32>) -> tensor<3x32xf32>
// CHECK: exec.launch @k0_transpose({{.*}}) {nodes = "conv"} : (tensor<3x2x16xf32>) -> tensor<2x3x16xf32>

func.func @whole_batch(%x: tensor<2x2x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<2x3x4x4xf32> {
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<2x3x4x4xf32> loc("conv")
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// A 1x1 convolution reads its input as the GEMM's columns (no im2col); a
// grouped one is left to nncc-outline-kernels.
// CHECK-LABEL: func.func @pointwise_and_grouped
// CHECK: %[[X:.*]] = exec.view %arg0 : tensor<1x4x4x4xf32> -> tensor<1x4x16xf32>
// CHECK: %[[W:.*]] = exec.view %arg1 : tensor<2x4x1x1xf32> -> tensor<2x4xf32>
// CHECK: exec.gemm %[[W]], %[[X]]
// CHECK-NOT: exec.launch
// CHECK: nn.conv %arg0, %arg2 {{.*}}group = 4

func.func @pointwise_and_grouped(%x: tensor<1x4x4x4xf32>, %w: tensor<2x4x1x1xf32>, %dw: tensor<4x1x3x3xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x4x4x4xf32>) {
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x4x4xf32> loc("pw")
  %1 = nn.conv %x, %dw {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32> loc("dw")
  return %0, %1 : tensor<1x2x4x4xf32>, tensor<1x4x4x4xf32>
}

// -----

// A matrix transpose feeding a MatMul is the GEMM's trans flag, not a
// transpose kernel (the backward of every MatMul reads x^T and W^T); one the
// product does not consume whole (a batch-axis permutation) stays.
// CHECK-LABEL: func.func @transposed_operands
// CHECK-NOT: nn.transpose
// CHECK: exec.gemm %arg0, %arg1 {{.*}}trans_a = true, trans_b = true
func.func @transposed_operands(%x: tensor<8x4xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %xt = nn.transpose %x {perm = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
  %wt = nn.transpose %w {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %y = nn.matmul %xt, %wt : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
// CHECK-LABEL: func.func @batch_permutation
// CHECK: nn.transpose
// CHECK: exec.gemm {{.*}}trans_a = false, trans_b = false
func.func @batch_permutation(%x: tensor<2x3x4x5xf32>, %w: tensor<3x2x5x6xf32>) -> tensor<2x3x4x6xf32> {
  %wt = nn.transpose %w {perm = array<i64: 1, 0, 2, 3>} : (tensor<3x2x5x6xf32>) -> tensor<2x3x5x6xf32>
  %y = nn.matmul %x, %wt : (tensor<2x3x4x5xf32>, tensor<2x3x5x6xf32>) -> tensor<2x3x4x6xf32>
  return %y : tensor<2x3x4x6xf32>
}

// -----

// An ungrouped f32 transposed convolution: one GEMM with the weights read
// transposed ([M*K, C] x [C, P_in] per image), then a col2im kernel that
// gathers the taps of each output element onto its bias.
// CHECK-LABEL: func.func @conv_transpose
// CHECK: %[[X:.*]] = exec.view %arg0 : tensor<2x4x8x8xf32> -> tensor<2x4x64xf32>
// CHECK: %[[W:.*]] = exec.view %arg1 : tensor<4x3x3x3xf32> -> tensor<4x27xf32>
// CHECK: %[[G:.*]] = exec.gemm %[[W]], %[[X]] {{{.*}}trans_a = true, trans_b = false} : (tensor<4x27xf32>, tensor<2x4x64xf32>) -> tensor<2x27x64xf32>
// CHECK: %[[COL:.*]] = exec.view %[[G]] : tensor<2x27x64xf32> -> tensor<2x3x3x3x8x8xf32>
// CHECK: exec.launch @k0_col2im(%[[COL]], %arg2) {nodes = "up"} : (tensor<2x3x3x3x8x8xf32>, tensor<3xf32>) -> tensor<2x3x16x16xf32>
// CHECK: func.func private @k0_col2im
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel", "parallel"]

func.func @conv_transpose(%x: tensor<2x4x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<2x3x16x16xf32> {
  %0 = nn.conv_transpose %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<2x3x16x16xf32> loc("up")
  return %0 : tensor<2x3x16x16xf32>
}

// -----

// Stride = kernel without padding (2x2 stride-2 upsampling): each output
// element has exactly one tap, so col2im is one copy of col into the output
// seen as [n, m, i0, k0, i1, k1] plus the bias, all loops parallel, no tap
// reduction.
// CHECK-LABEL: func.func @conv_transpose_taps_tile_the_output
// CHECK: exec.launch @k0_col2im({{.*}}) {nodes = "up2"} : (tensor<2x3x2x2x8x8xf32>, tensor<3xf32>) -> tensor<2x3x16x16xf32>
// CHECK: func.func private @k0_col2im
// CHECK: tensor.expand_shape {{.*}} output_shape [2, 3, 8, 2, 8, 2] : tensor<2x3x16x16xf32> into tensor<2x3x8x2x8x2xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %arg1 : tensor<2x3x2x2x8x8xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<2x3x8x2x8x2xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK: tensor.collapse_shape
// CHECK-NOT: reduction

func.func @conv_transpose_taps_tile_the_output(%x: tensor<2x4x8x8xf32>, %w: tensor<4x3x2x2xf32>, %b: tensor<3xf32>) -> tensor<2x3x16x16xf32> {
  %0 = nn.conv_transpose %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x4x8x8xf32>, tensor<4x3x2x2xf32>, tensor<3xf32>) -> tensor<2x3x16x16xf32> loc("up2")
  return %0 : tensor<2x3x16x16xf32>
}

// -----

// A grouped transposed convolution of one image: one GEMM batched over the
// groups (group g's [C/g, M/g*K] weights against its [C/g, P_in] channels),
// whose results, group after group, are the output channels in order.
// CHECK-LABEL: func.func @conv_transpose_grouped
// CHECK: %[[X:.*]] = exec.view %arg0 : tensor<1x4x8x8xf32> -> tensor<2x2x64xf32>
// CHECK: %[[W:.*]] = exec.view %arg1 : tensor<4x1x3x3xf32> -> tensor<2x2x9xf32>
// CHECK: %[[G:.*]] = exec.gemm %[[W]], %[[X]] {{{.*}}trans_a = true, trans_b = false} : (tensor<2x2x9xf32>, tensor<2x2x64xf32>) -> tensor<2x9x64xf32>
// CHECK: %[[COL:.*]] = exec.view %[[G]] : tensor<2x9x64xf32> -> tensor<1x2x3x3x8x8xf32>
// CHECK: exec.launch @k0_col2im(%[[COL]])

func.func @conv_transpose_grouped(%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x2x10x10xf32> {
  %0 = nn.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x2x10x10xf32>
  return %0 : tensor<1x2x10x10xf32>
}

// -----

// Grouped ones of several images stay loop kernels: one GEMM step's single
// batch stride cannot walk images x groups.
// CHECK-LABEL: func.func @conv_transpose_grouped_batch
// CHECK-NEXT: nn.conv_transpose

func.func @conv_transpose_grouped_batch(%x: tensor<2x4x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<2x2x10x10xf32> {
  %0 = nn.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<2x2x10x10xf32>
  return %0 : tensor<2x2x10x10xf32>
}

// -----

// f16: the GEMM accumulates into f32 and col2im sums the taps and the bias in
// f32, rounding once to the f16 result.
// CHECK-LABEL: func.func @conv_transpose_f16
// CHECK: exec.gemm {{.*}} : (tensor<4x27xf16>, tensor<1x4x64xf16>) -> tensor<1x27x64xf32>
// CHECK: exec.launch @k0_col2im({{.*}}) {nodes = "up16"} : (tensor<1x3x3x3x8x8xf32>, tensor<3xf16>) -> tensor<1x3x16x16xf16>
// CHECK: func.func private @k0_col2im
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.truncf {{.*}} : f32 to f16

func.func @conv_transpose_f16(%x: tensor<1x4x8x8xf16>, %w: tensor<4x3x3x3xf16>, %b: tensor<3xf16>) -> tensor<1x3x16x16xf16> {
  %0 = nn.conv_transpose %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf16>, tensor<4x3x3x3xf16>, tensor<3xf16>) -> tensor<1x3x16x16xf16> loc("up16")
  return %0 : tensor<1x3x16x16xf16>
}
