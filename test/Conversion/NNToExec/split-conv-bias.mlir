// RUN: nncc-opt %s -split-input-file -nncc-split-conv-bias | FileCheck %s

// The bias of an f32 convolution becomes an add of it viewed as [M, 1, 1],
// which elementwise fusion merges with what follows.
// CHECK-LABEL: func.func @bias
// CHECK: %[[C:.*]] = nn.conv %arg0, %arg1 {{.*}} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32>
// CHECK: %[[B:.*]] = nn.reshape %arg2 : (tensor<3xf32>) -> tensor<3x1x1xf32>
// CHECK: %[[A:.*]] = nn.add %[[C]], %[[B]] : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
// CHECK: nn.relu %[[A]]
func.func @bias(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = nn.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %1 = nn.relu %0 : tensor<1x3x4x4xf32>
  return %1 : tensor<1x3x4x4xf32>
}

// -----

// Without a bias, or in f16, nothing changes.
// CHECK-LABEL: func.func @unchanged
// CHECK-NOT: nn.add
func.func @unchanged(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>, %xh: tensor<1x2x4x4xf16>, %wh: tensor<3x2x3x3xf16>, %bh: tensor<3xf16>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf16>) {
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32>
  %1 = nn.conv %xh, %wh, %bh {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf16>, tensor<3x2x3x3xf16>, tensor<3xf16>) -> tensor<1x3x4x4xf16>
  return %0, %1 : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf16>
}
