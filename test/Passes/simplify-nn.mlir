// RUN: nncc-opt %s -nncc-simplify-nn -split-input-file | FileCheck %s
// The nn cleanup pipeline: canonicalization (folders), the Conv +
// BatchNormalization fold, and CSE, in one run.

// The shape chain folds to a static reshape, the batch norm folds into the
// conv's weights and bias, and the two identical relus become one.
// CHECK-LABEL: func.func @simplify
// CHECK-NOT: nn.shape
// CHECK-NOT: nn.batch_norm
// CHECK: %[[C:.*]] = nn.conv %arg0
// CHECK-NEXT: %[[R:.*]] = nn.reshape %[[C]] : (tensor<1x2x4x4xf32>) -> tensor<1x32xf32>
// CHECK-NEXT: %[[A:.*]] = nn.relu %[[R]]
// CHECK-NEXT: return %[[A]], %[[A]]
func.func @simplify(%x: tensor<1x1x4x4xf32>) -> (tensor<1x32xf32>, tensor<1x32xf32>) {
  %w = nn.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %scale = nn.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %shift = nn.constant dense<[5.0, 1.0]> : tensor<2xf32>
  %mean = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = nn.constant dense<[3.0, 3.0]> : tensor<2xf32>
  %c = nn.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %y = nn.batch_norm %c, %scale, %shift, %mean, %var {epsilon = 1.0 : f64} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %s = nn.shape %y {start = 0 : i64, end = 1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1xi64>
  %m1 = nn.constant dense<[-1]> : tensor<1xi64>
  %shape = nn.concat %s, %m1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = nn.reshape %y, %shape : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> tensor<1x32xf32>
  %a0 = nn.relu %r : tensor<1x32xf32>
  %a1 = nn.relu %r : tensor<1x32xf32>
  return %a0, %a1 : tensor<1x32xf32>, tensor<1x32xf32>
}
