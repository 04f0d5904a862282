// RUN: nncc-opt %s -split-input-file -verify-diagnostics
// One case per verifier error path of the nn ops.

func.func @constant_type_mismatch() -> tensor<3xf32> {
  // expected-error @+1 {{failed to verify that all of {value, output} have same type}}
  %0 = "nn.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @clip_non_scalar_bounds(%x: tensor<4xf32>, %lo: tensor<1xf32>, %hi: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{min and max must be 0-d tensors}}
  %0 = nn.clip %x, %lo, %hi : (tensor<4xf32>, tensor<1xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @clip_bound_type(%x: tensor<4xf32>, %lo: tensor<f16>, %hi: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{min and max must have the input's element type}}
  %0 = nn.clip %x, %lo, %hi : (tensor<4xf32>, tensor<f16>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @clip_result_type(%x: tensor<4xf32>, %b: tensor<f32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{result type must equal the input type}}
  %0 = nn.clip %x, %b, %b : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @broadcast_mismatch(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{operand shapes are not broadcast-compatible}}
  %0 = nn.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @broadcast_result(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{result shape 'tensor<3x3xf32>' is not the broadcast of the operand shapes}}
  %0 = nn.mul %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @broadcast_result_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<1x2x3xf32> {
  // expected-error @+1 {{is not the broadcast of the operand shapes}}
  %0 = nn.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<1x2x3xf32>
  return %0 : tensor<1x2x3xf32>
}

// -----

func.func @binary_element_types(%a: tensor<3xi32>, %b: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error @+1 {{operands must have the same element type}}
  %0 = nn.add %a, %b : (tensor<3xi32>, tensor<3xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @binary_result_element_type(%a: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{result element type must be the operands'}}
  %0 = nn.div %a, %a : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @compare_element_types(%a: tensor<3xf32>, %b: tensor<3xf16>) -> tensor<3xi1> {
  // expected-error @+1 {{operands must have the same element type}}
  %0 = nn.less %a, %b : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

func.func @compare_result_type(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = nn.equal %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @where_broadcast(%c: tensor<2xi1>, %a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{operand shapes are not broadcast-compatible}}
  %0 = nn.where %c, %a, %a : (tensor<2xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @where_element_types(%c: tensor<3xi1>, %a: tensor<3xf32>, %b: tensor<3xi32>) -> tensor<3xf32> {
  // expected-error @+1 {{operands must have the same element type}}
  %0 = nn.where %c, %a, %b : (tensor<3xi1>, tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @matmul_k(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{contraction dims differ: 3 vs 4}}
  %0 = nn.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @matmul_vector_k(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{contraction dims differ: 3 vs 4}}
  %0 = nn.matmul %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operands must have rank >= 1}}
  %0 = nn.matmul %a, %b : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gemm_rank(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{A and B must be 2-d}}
  %0 = nn.gemm %a, %b {alpha = 1.0 : f64, beta = 1.0 : f64, trans_a = false, trans_b = false} : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @gemm_k_transposed(%a: tensor<3x2xf32>, %b: tensor<3x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{contraction dims differ: 3 vs 5}}
  %0 = nn.gemm %a, %b {alpha = 1.0 : f64, beta = 1.0 : f64, trans_a = true, trans_b = true} : (tensor<3x2xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @gemm_result_rank(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) -> tensor<10xf32> {
  // expected-error @+1 {{result must be 2-d}}
  %0 = nn.gemm %a, %b {alpha = 1.0 : f64, beta = 1.0 : f64, trans_a = false, trans_b = false} : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// -----

func.func @gemm_c_rank(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>, %c: tensor<1x2x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{C must have rank <= 2}}
  %0 = nn.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 1.0 : f64, trans_a = false, trans_b = false} : (tensor<2x3xf32>, tensor<3x5xf32>, tensor<1x2x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @conv_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{input channels 4 != weight channels 3 x group 1}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_group_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{input channels 4 != weight channels 4 x group 2}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_group_zero(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{group must be positive}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 0 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

// A negative group must not pass as a huge unsigned one.
func.func @conv_group_negative(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{group must be positive}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = -1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_rank(%x: tensor<1x4x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x6xf32> {
  // expected-error @+1 {{input and weight must have the same rank >= 3}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1>, group = 1 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x4x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6xf32>
  return %0 : tensor<1x6x6xf32>
}

// -----

func.func @conv_pads_count(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32> {
  // expected-error @+1 {{expects 4 pads, got 2}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32>
  return %0 : tensor<1x6x8x8xf32>
}

// -----

func.func @conv_strides_count(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{expects 2 strides, got 1}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_dilations_count(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{expects 2 dilations, got 3}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_zero_stride(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{strides must be positive}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 0>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_zero_dilation(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{dilations must be positive}}
  %0 = nn.conv %x, %w {dilations = array<i64: 0, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_negative_pad(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{pads must be non-negative}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, -1, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_transpose_output_padding(%x: tensor<1x4x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x16x16xf32> {
  // expected-error @+1 {{expects one output_padding per spatial axis}}
  %0 = nn.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x16x16xf32>
  return %0 : tensor<1x3x16x16xf32>
}

// -----

func.func @conv_transpose_group(%x: tensor<1x4x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x16x16xf32> {
  // expected-error @+1 {{group must be positive}}
  %0 = nn.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = -2 : i64, output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x16x16xf32>
  return %0 : tensor<1x3x16x16xf32>
}

// -----

func.func @einsum_implicit(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{equation must be explicit (contain '->')}}
  %0 = nn.einsum %a, %b {equation = "ij,jk"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @einsum_term_count(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{equation has 3 input terms for 2 inputs}}
  %0 = nn.einsum %a, %b {equation = "ij,jk,kl->il"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @einsum_term_rank(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{term 'ijk' does not match rank 2}}
  %0 = nn.einsum %a, %b {equation = "ijk,jk->ik"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @max_pool_kernel(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  // expected-error @+1 {{expects one kernel dim per spatial axis}}
  %0 = nn.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

func.func @average_pool_pads(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  // expected-error @+1 {{expects 4 pads, got 3}}
  %0 = nn.average_pool %x {ceil_mode = false, count_include_pad = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

func.func @batch_norm_channels(%x: tensor<1x4x8x8xf32>, %c: tensor<4xf32>, %d: tensor<3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{per-channel operands must be 1-d of size 4}}
  %0 = nn.batch_norm %x, %c, %c, %d, %c {epsilon = 1.0e-05 : f64} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

func.func @batch_norm_result(%x: tensor<1x4x8x8xf32>, %c: tensor<4xf32>) -> tensor<1x4x64xf32> {
  // expected-error @+1 {{result type must equal the input type}}
  %0 = nn.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-05 : f64} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x64xf32>
  return %0 : tensor<1x4x64xf32>
}

// -----

func.func @instance_norm_rank(%x: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{input must have rank >= 2}}
  %0 = nn.instance_norm %x, %c, %c {epsilon = 1.0e-05 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @layer_norm_axis(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = nn.layer_norm %x, %s {axis = -3 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @layer_norm_result(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{result type must equal the input type}}
  %0 = nn.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @softmax_axis(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = nn.softmax %x {axis = 2 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @log_softmax_axis(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = nn.log_softmax %x {axis = -3 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @reduce_axis_out_of_range(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = nn.reduce_sum %x {axes = array<i64: 2>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// The attribute holds normalized (non-negative) axes.
func.func @reduce_axis_negative(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{axis -1 is out of range for rank 2}}
  %0 = nn.reduce_mean %x {axes = array<i64: -1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @reduce_axis_repeated(%x: tensor<2x3xf32>) -> tensor<1x3xf32> {
  // expected-error @+1 {{axis 0 is repeated}}
  %0 = nn.reduce_max %x {axes = array<i64: 0, 0>, keepdims = true} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

func.func @reduce_axes_both(%x: tensor<2x3xf32>, %a: tensor<1xi64>) -> tensor<1x3xf32> {
  // expected-error @+1 {{needs exactly one of the 'axes' attribute and operand}}
  %0 = nn.reduce_min %x, %a {axes = array<i64: 0>, keepdims = true} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

func.func @reduce_axes_neither(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{needs exactly one of the 'axes' attribute and operand}}
  %0 = nn.reduce_prod %x {keepdims = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @reduce_result_rank(%x: tensor<2x3xf32>) -> tensor<1x3xf32> {
  // expected-error @+1 {{result rank 2 should be 1}}
  %0 = nn.reduce_l2 %x {axes = array<i64: 0>, keepdims = false} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

func.func @arg_max_axis(%x: tensor<2x3xf32>) -> tensor<2xi64> {
  // expected-error @+1 {{axis 5 is out of range for rank 2}}
  %0 = nn.arg_max %x {axis = 5 : i64, keepdims = false, select_last_index = false} : (tensor<2x3xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @arg_min_axis(%x: tensor<2x3xf32>) -> tensor<2xi64> {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = nn.arg_min %x {axis = -3 : i64, keepdims = false, select_last_index = false} : (tensor<2x3xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @cumsum_both(%x: tensor<2x3xf32>, %a: tensor<i64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{needs exactly one of the 'axis' attribute and operand}}
  %0 = nn.cumsum %x, %a {axis = 0 : i64, exclusive = false, reverse = false} : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @cumsum_neither(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{needs exactly one of the 'axis' attribute and operand}}
  %0 = nn.cumsum %x {exclusive = false, reverse = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @cumsum_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = nn.cumsum %x {axis = 2 : i64, exclusive = false, reverse = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @top_k_shapes(%x: tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x4xi64>) {
  // expected-error @+1 {{values and indices must have the same shape}}
  %0:2 = nn.top_k %x {axis = 1 : i64, largest = true, sorted = true} : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x4xi64>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x4xi64>
}

// -----

func.func @top_k_missing_k(%x: tensor<2x8xf32>) -> (tensor<2x?xf32>, tensor<2x?xi64>) {
  // expected-error @+1 {{needs the 'k' operand while its result shape is dynamic}}
  %0:2 = nn.top_k %x {axis = 1 : i64, largest = true, sorted = true} : (tensor<2x8xf32>) -> (tensor<2x?xf32>, tensor<2x?xi64>)
  return %0#0, %0#1 : tensor<2x?xf32>, tensor<2x?xi64>
}

// -----

func.func @reshape_element_count(%x: tensor<2x3xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{changes the element count from 6 to 8}}
  %0 = nn.reshape %x : (tensor<2x3xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @reshape_missing_shape(%x: tensor<2x3xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{needs the 'shape' operand while its result shape is dynamic}}
  %0 = nn.reshape %x : (tensor<2x3xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @expand_not_broadcast(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{result is not a broadcast of the input}}
  %0 = nn.expand %x : (tensor<2x3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @expand_missing_shape(%x: tensor<2x1xf32>) -> tensor<2x?xf32> {
  // expected-error @+1 {{needs the 'shape' operand while its result shape is dynamic}}
  %0 = nn.expand %x : (tensor<2x1xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

func.func @tile_rank(%x: tensor<2x3xf32>) -> tensor<4x3x1xf32> {
  // expected-error @+1 {{result rank must equal the input rank}}
  %0 = nn.tile %x : (tensor<2x3xf32>) -> tensor<4x3x1xf32>
  return %0 : tensor<4x3x1xf32>
}

// -----

func.func @tile_missing_repeats(%x: tensor<2x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{needs the 'repeats' operand while its result shape is dynamic}}
  %0 = nn.tile %x : (tensor<2x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

func.func @squeeze_missing_axes(%x: tensor<?x1xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{needs the 'axes' operand while its result shape is dynamic}}
  %0 = nn.squeeze %x : (tensor<?x1xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @squeeze_element_count(%x: tensor<2x1x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{changes the element count from 6 to 4}}
  %0 = nn.squeeze %x : (tensor<2x1x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @unsqueeze_element_count(%x: tensor<2x3xf32>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{changes the element count from 6 to 8}}
  %0 = nn.unsqueeze %x : (tensor<2x3xf32>) -> tensor<1x2x4xf32>
  return %0 : tensor<1x2x4xf32>
}

// -----

func.func @unsqueeze_missing_axes(%x: tensor<?xf32>) -> tensor<1x?xf32> {
  // expected-error @+1 {{needs the 'axes' operand while its result shape is dynamic}}
  %0 = nn.unsqueeze %x : (tensor<?xf32>) -> tensor<1x?xf32>
  return %0 : tensor<1x?xf32>
}

// -----

func.func @split_sizes(%x: tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>) {
  // expected-error @+1 {{result sizes along the axis sum to 5, not 6}}
  %0:2 = nn.split %x {axis = 1 : i64} : (tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>)
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x3xf32>
}

// -----

func.func @split_axis(%x: tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0:2 = nn.split %x {axis = 2 : i64} : (tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

func.func @split_result_rank(%x: tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<6xf32>) {
  // expected-error @+1 {{results must have the input's rank}}
  %0:2 = nn.split %x {axis = 1 : i64} : (tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<6xf32>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<6xf32>
}

// -----

func.func @split_missing_sizes(%x: tensor<2x6xf32>) -> (tensor<2x?xf32>, tensor<2x?xf32>) {
  // expected-error @+1 {{needs the 'split' operand while its result shape is dynamic}}
  %0:2 = nn.split %x {axis = 1 : i64} : (tensor<2x6xf32>) -> (tensor<2x?xf32>, tensor<2x?xf32>)
  return %0#0, %0#1 : tensor<2x?xf32>, tensor<2x?xf32>
}

// -----

func.func @constant_of_shape_value(%s: tensor<2xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{value must hold exactly one element}}
  %0 = nn.constant_of_shape %s {value = dense<0.0> : tensor<2xf32>} : (tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @constant_of_shape_type(%s: tensor<2xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{value element type differs from the result's}}
  %0 = nn.constant_of_shape %s {value = dense<0> : tensor<1xi32>} : (tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @constant_of_shape_missing_shape() -> tensor<?x3xf32> {
  // expected-error @+1 {{needs the 'shape' operand while its result shape is dynamic}}
  %0 = nn.constant_of_shape {value = dense<0.0> : tensor<1xf32>} : () -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

func.func @transpose_perm_size(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  // expected-error @+1 {{perm has 2 entries for rank 3}}
  %0 = nn.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  return %0 : tensor<3x2x4xf32>
}

// -----

func.func @transpose_perm_repeat(%x: tensor<2x3x4xf32>) -> tensor<3x3x4xf32> {
  // expected-error @+1 {{perm is not a permutation}}
  %0 = nn.transpose %x {perm = array<i64: 1, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<3x3x4xf32>
  return %0 : tensor<3x3x4xf32>
}

// -----

func.func @transpose_perm_range(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  // expected-error @+1 {{perm is not a permutation}}
  %0 = nn.transpose %x {perm = array<i64: 1, 0, 3>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  return %0 : tensor<3x2x4xf32>
}

// -----

func.func @transpose_result(%x: tensor<2x3x4xf32>) -> tensor<3x4x2xf32> {
  // expected-error @+1 {{result dim 1 should be 2}}
  %0 = nn.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  return %0 : tensor<3x4x2xf32>
}

// -----

func.func @concat_sizes(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{input sizes along the axis sum to 7, not 8}}
  %0 = nn.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @concat_other_dim(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{input dim 0 differs from the result's}}
  %0 = nn.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<6xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{inputs must have the result's rank}}
  %0 = nn.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<6xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = nn.concat %a {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @concat_no_inputs() -> tensor<0xf32> {
  // expected-error @+1 {{needs at least one input}}
  %0 = nn.concat {axis = 0 : i64} : () -> tensor<0xf32>
  return %0 : tensor<0xf32>
}

// -----

func.func @slice_partial_attrs(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{starts, ends and steps attributes come together}}
  %0 = nn.slice %x {starts = array<i64: 0>, ends = array<i64: 2>} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @slice_no_form(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{needs either the starts/ends attributes or operands}}
  %0 = nn.slice %x : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @slice_both_forms(%x: tensor<4xf32>, %s: tensor<1xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{needs either the starts/ends attributes or operands}}
  %0 = nn.slice %x starts %s ends %s {starts = array<i64: 0>, ends = array<i64: 2>, steps = array<i64: 1>} : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @slice_starts_without_ends(%x: tensor<4xf32>, %s: tensor<1xi64>) -> tensor<?xf32> {
  // expected-error @+1 {{needs either the starts/ends attributes or operands}}
  %0 = nn.slice %x starts %s : (tensor<4xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @slice_mixed_forms(%x: tensor<4xf32>, %a: tensor<1xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{mixes attribute and operand forms}}
  %0 = nn.slice %x axes %a {starts = array<i64: 0>, ends = array<i64: 2>, steps = array<i64: 1>} : (tensor<4xf32>, tensor<1xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @slice_entries(%x: tensor<4x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{starts, ends and steps need one entry per axis}}
  %0 = nn.slice %x {starts = array<i64: 0>, ends = array<i64: 2>, steps = array<i64: 1>} : (tensor<4x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @slice_zero_step(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{steps must be non-zero}}
  %0 = nn.slice %x {starts = array<i64: 0>, ends = array<i64: 2>, steps = array<i64: 0>} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Attributes are clamped to the input (ONNX's INT64_MAX end is resolved).
func.func @slice_not_clamped(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{start and end of axis 0 are not clamped to its size 4}}
  %0 = nn.slice %x {starts = array<i64: 0>, ends = array<i64: 9223372036854775807>, steps = array<i64: 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @slice_negative_start(%x: tensor<4xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{start and end of axis 0 are not clamped to its size 4}}
  %0 = nn.slice %x {starts = array<i64: -1>, ends = array<i64: 4>, steps = array<i64: 1>} : (tensor<4xf32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @slice_result(%x: tensor<4x6xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{result dim 1 should be 3}}
  %0 = nn.slice %x {starts = array<i64: 0, 5>, ends = array<i64: 4, -1>, steps = array<i64: 1, -2>} : (tensor<4x6xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @gather_axis(%x: tensor<3x4xf32>, %i: tensor<2xi64>) -> tensor<3x2xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = nn.gather %x, %i {axis = 2 : i64} : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @gather_result_rank(%x: tensor<3x4xf32>, %i: tensor<2x2xi64>) -> tensor<3x2xf32> {
  // expected-error @+1 {{result rank should be 3}}
  %0 = nn.gather %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<2x2xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @gather_result_shape(%x: tensor<3x4xf32>, %i: tensor<5xi64>) -> tensor<3x4xf32> {
  // expected-error @+1 {{result dim 1 should be 5}}
  %0 = nn.gather %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<5xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @gather_elements_rank(%x: tensor<3x4xf32>, %i: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{indices must have the input's rank}}
  %0 = nn.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_elements_axis(%x: tensor<3x4xf32>, %i: tensor<3x2xi64>) -> tensor<3x2xf32> {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = nn.gather_elements %x, %i {axis = -3 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @pad_mode(%x: tensor<2x3xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{unknown mode 'symmetric'}}
  %0 = nn.pad %x {mode = "symmetric", pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @pad_both(%x: tensor<2x3xf32>, %p: tensor<4xi64>) -> tensor<4x5xf32> {
  // expected-error @+1 {{needs exactly one of the 'pads' attribute and operand}}
  %0 = nn.pad %x pads %p {mode = "constant", pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @pad_neither(%x: tensor<2x3xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{needs exactly one of the 'pads' attribute and operand}}
  %0 = nn.pad %x {mode = "constant"} : (tensor<2x3xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @pad_count(%x: tensor<2x3xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{expects 4 pads}}
  %0 = nn.pad %x {mode = "edge", pads = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @pad_value_rank(%x: tensor<2x3xf32>, %v: tensor<1xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{the pad value must be a 0-d tensor}}
  %0 = nn.pad %x value %v {mode = "constant", pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @resize_mode(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{unknown mode 'bilinear'}}
  %0 = nn.resize %x {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -0.75 : f64, exclude_outside = false, extrapolation_value = 0.0 : f64, mode = "bilinear", nearest_mode = "floor", roi = array<f64>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @resize_scales_count(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{expects one scale per axis}}
  %0 = nn.resize %x {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -0.75 : f64, exclude_outside = false, extrapolation_value = 0.0 : f64, mode = "nearest", nearest_mode = "floor", roi = array<f64>, scales = array<f64: 2.0, 2.0>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @resize_scales_both(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{needs exactly one of the 'scales' attribute and operand}}
  %0 = nn.resize %x, %s {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -0.75 : f64, exclude_outside = false, extrapolation_value = 0.0 : f64, mode = "nearest", nearest_mode = "floor", roi = array<f64>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @resize_rank(%x: tensor<1x1x2x2xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{result rank must equal the input rank}}
  %0 = nn.resize %x {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -0.75 : f64, exclude_outside = false, extrapolation_value = 0.0 : f64, mode = "nearest", nearest_mode = "floor", roi = array<f64>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x1x2x2xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @range_operands(%s: tensor<1xi64>, %l: tensor<i64>) -> tensor<?xi64> {
  // expected-error @+1 {{start, limit and delta must be 0-d tensors}}
  %0 = nn.range %s, %l, %l : (tensor<1xi64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @range_element_types(%s: tensor<i32>, %l: tensor<i64>) -> tensor<?xi64> {
  // expected-error @+1 {{start, limit and delta must have the result's element type}}
  %0 = nn.range %s, %l, %l : (tensor<i32>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @range_result(%s: tensor<i64>) -> tensor<2x2xi64> {
  // expected-error @+1 {{result must be 1-d}}
  %0 = nn.range %s, %s, %s : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}

// -----

func.func @shape_result(%x: tensor<2x3xf32>) -> tensor<1x2xi64> {
  // expected-error @+1 {{result must be 1-d}}
  %0 = nn.shape %x {end = 2 : i64, start = 0 : i64} : (tensor<2x3xf32>) -> tensor<1x2xi64>
  return %0 : tensor<1x2xi64>
}

// -----

func.func @unary_type_constraint(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of floating-point values}}
  %0 = nn.sqrt %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @gelu_approximate(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{approximate must be "none" or "tanh", got "fast"}}
  %0 = nn.gelu %x {approximate = "fast"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @attention_key_depth(%q: tensor<2x4x8xf32>, %k: tensor<2x6x4xf32>, %v: tensor<2x6x3xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{expects q [.., Sq, D], k [.., Sk, D], v [.., Sk, Dv] and a [.., Sq, Dv] result}}
  %0 = nn.attention %q, %k, %v {scale = 1.0 : f64} : (tensor<2x4x8xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

func.func @attention_batch(%q: tensor<2x4x8xf32>, %k: tensor<3x6x8xf32>, %v: tensor<3x6x3xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{q, k, v and the result must have the same batch dims}}
  %0 = nn.attention %q, %k, %v {scale = 1.0 : f64} : (tensor<2x4x8xf32>, tensor<3x6x8xf32>, tensor<3x6x3xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

func.func @attention_mask(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x3xf32>, %m: tensor<4x5xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{mask does not broadcast to the scores [batch..., Sq, Sk]}}
  %0 = nn.attention %q, %k, %v, %m {scale = 1.0 : f64} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x3xf32>, tensor<4x5xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

func.func @resize_crop_roi(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{tf_crop_and_resize needs two roi entries per axis}}
  %0 = nn.resize %x {coordinate_transformation_mode = "tf_crop_and_resize", cubic_coeff_a = -0.75 : f64, exclude_outside = false, extrapolation_value = 0.0 : f64, mode = "linear", nearest_mode = "floor", roi = array<f64>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// Axes are normalized: a negative one (valid in ONNX) is resolved by the
// importer, never seen by the kernel builders.
func.func @softmax_axis_negative(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{axis -1 is out of range for rank 2; nn ops take axes in [0, rank)}}
  %0 = nn.softmax %x {axis = -1 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @layer_norm_axis_negative(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{axis -1 is out of range for rank 2; nn ops take axes in [0, rank)}}
  %0 = nn.layer_norm %x, %s {axis = -1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
