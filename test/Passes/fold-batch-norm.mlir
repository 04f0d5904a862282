// RUN: nncc-opt %s -nncc-fold-batch-norm -split-input-file | FileCheck %s

// W'[m] = W[m] * s[m], b'[m] = (b[m] - mean[m]) * s[m] + bias[m] with
// s = scale / sqrt(var + eps): scale 2, var 3 (eps 1) gives s = 1.
// CHECK-LABEL: func.func @fold
// CHECK-DAG: %[[W:.*]] = nn.constant dense<{{\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}4.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-DAG: %[[B:.*]] = nn.constant dense<[5.000000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK: %[[C:.*]] = nn.conv %arg0, %[[W]], %[[B]]
// CHECK-NOT: nn.batch_norm
// CHECK: return %[[C]]
func.func @fold(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = nn.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %scale = nn.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %shift = nn.constant dense<[5.0, 1.0]> : tensor<2xf32>
  %mean = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = nn.constant dense<[3.0, 3.0]> : tensor<2xf32>
  %c = nn.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %y = nn.batch_norm %c, %scale, %shift, %mean, %var {epsilon = 1.0 : f64} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A conv read by another op too stays; so does the batch norm.
// CHECK-LABEL: func.func @shared
// CHECK: nn.conv
// CHECK: nn.batch_norm
func.func @shared(%x: tensor<1x1x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = nn.constant dense<1.0> : tensor<2x1x1x1xf32>
  %p = nn.constant dense<1.0> : tensor<2xf32>
  %c = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %y = nn.batch_norm %c, %p, %p, %p, %p {epsilon = 1.0e-5 : f64} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y, %c : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// Parameters computed at run time cannot be folded.
// CHECK-LABEL: func.func @runtime_params
// CHECK: nn.batch_norm
func.func @runtime_params(%x: tensor<1x1x4x4xf32>, %scale: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %w = nn.constant dense<1.0> : tensor<2x1x1x1xf32>
  %p = nn.constant dense<1.0> : tensor<2xf32>
  %c = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %y = nn.batch_norm %c, %scale, %p, %p, %p {epsilon = 1.0e-5 : f64} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}
