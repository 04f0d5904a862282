// RUN: nncc-opt %s -split-input-file -nncc-lower-contractions="cpu-only packed-weights" | FileCheck %s
// RUN: nncc-opt %s -split-input-file -nncc-lower-contractions=cpu-only | FileCheck %s --check-prefix=PLAIN

// packed-weights (a target CPU with the runtime's own SGEMM): a convolution
// with constant weights runs, where that moves fewer elements, as
// the transposed product [n*P, M] = col^T W^T, the weights as B (packed once
// per session by the runtime), then a transpose kernel to [n, M, P]: for
// one image when P < K, here P = 16 < K = 2*3*3 = 18.
// CHECK-LABEL: func.func @small_image
// CHECK: %[[COL:.*]] = exec.launch @k0_im2col(%arg0) {nodes = "conv"} : (tensor<1x2x4x4xf32>) -> tensor<2x3x3x1x4x4xf32>
// CHECK: %[[A:.*]] = exec.view %[[COL]] : tensor<2x3x3x1x4x4xf32> -> tensor<18x16xf32>
// CHECK: %[[B:.*]] = exec.view %{{.*}} : tensor<3x2x3x3xf32> -> tensor<3x18xf32>
// CHECK: %[[G:.*]] = exec.gemm %[[A]], %[[B]] {alpha = 1.000000e+00 : f64, beta = 0.000000e+00 : f64, nodes = "conv", trans_a = true, trans_b = true} : (tensor<18x16xf32>, tensor<3x18xf32>) -> tensor<16x3xf32>
// CHECK: %[[V:.*]] = exec.view %[[G]] : tensor<16x3xf32> -> tensor<1x16x3xf32>
// CHECK: %[[T:.*]] = exec.launch @k0_transpose(%[[V]]) {nodes = "conv"} : (tensor<1x16x3xf32>) -> tensor<1x3x16xf32>
// CHECK: %[[O:.*]] = exec.view %[[T]] : tensor<1x3x16xf32> -> tensor<1x3x4x4xf32>
// CHECK: exec.launch @k0_bias(%[[O]], %arg1)
// CHECK: func.func private @k0_transpose
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}]
// PLAIN-LABEL: func.func @small_image
// PLAIN: exec.gemm {{.*}} trans_a = false, trans_b = false} : (tensor<3x18xf32>, tensor<1x18x16xf32>) -> tensor<1x3x16xf32>

func.func @small_image(%x: tensor<1x2x4x4xf32>, %b: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  %w = nn.constant dense<1.0> : tensor<3x2x3x3xf32>
  %0 = nn.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32> loc("conv")
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// Small images in a batch: one GEMM over the whole batch's columns (both
// forms transpose; the transposed one skips repacking the weights), here
// n*P = 32 > K = 18. A 1x1 convolution of a batch (one GEMM per image) keeps
// the weights as A: the BLAS repacks weights the previous image left in the
// cache, where the transposed form would add a pass over the output.
// CHECK-LABEL: func.func @batch
// CHECK: %[[COL:.*]] = exec.launch @k0_im2col(%arg0) {nodes = "conv"} : (tensor<2x2x4x4xf32>) -> tensor<2x3x3x2x4x4xf32>
// CHECK: %[[A:.*]] = exec.view %[[COL]] : tensor<2x3x3x2x4x4xf32> -> tensor<18x32xf32>
// CHECK: %[[G:.*]] = exec.gemm %[[A]], %{{.*}} {{.*}}trans_a = true, trans_b = true} : (tensor<18x32xf32>, tensor<3x18xf32>) -> tensor<32x3xf32>
// CHECK: %[[V:.*]] = exec.view %[[G]] : tensor<32x3xf32> -> tensor<2x16x3xf32>
// CHECK: exec.launch @k0_transpose(%[[V]]) {nodes = "conv"} : (tensor<2x16x3xf32>) -> tensor<2x3x16xf32>
// CHECK: exec.gemm {{.*}} trans_a = false, trans_b = false} : (tensor<3x32xf32>, tensor<2x32x4xf32>) -> tensor<2x3x4xf32>

func.func @batch(%x: tensor<2x2x4x4xf32>, %y: tensor<2x32x2x2xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x2x2xf32>) {
  %w = nn.constant dense<1.0> : tensor<3x2x3x3xf32>
  %w1 = nn.constant dense<1.0> : tensor<3x32x1x1xf32>
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<2x3x4x4xf32> loc("conv")
  %1 = nn.conv %y, %w1 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x32x2x2xf32>, tensor<3x32x1x1xf32>) -> tensor<2x3x2x2xf32> loc("pw")
  return %0, %1 : tensor<2x3x4x4xf32>, tensor<2x3x2x2xf32>
}

// -----

// One image, 1x1: the input as it lies is the transposed product's A,
// P = 4 < K = 32.
// CHECK-LABEL: func.func @pointwise
// CHECK: %[[X:.*]] = exec.view %arg0 : tensor<1x32x2x2xf32> -> tensor<1x32x4xf32>
// CHECK: %[[G:.*]] = exec.gemm %[[X]], %{{.*}} {{.*}}trans_a = true, trans_b = true} : (tensor<1x32x4xf32>, tensor<3x32xf32>) -> tensor<1x4x3xf32>
// CHECK: exec.launch @k0_transpose(%[[G]]) {nodes = "pw"} : (tensor<1x4x3xf32>) -> tensor<1x3x4xf32>

func.func @pointwise(%x: tensor<1x32x2x2xf32>) -> tensor<1x3x2x2xf32> {
  %w = nn.constant dense<1.0> : tensor<3x32x1x1xf32>
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x32x2x2xf32>, tensor<3x32x1x1xf32>) -> tensor<1x3x2x2xf32> loc("pw")
  return %0 : tensor<1x3x2x2xf32>
}

// -----

// Not transposed: one image with more output columns than K (P = 64 > 18:
// the transpose pass would move more than the weights' repacking saves), or
// weights computed by the model (no module weight to pack once).
// CHECK-LABEL: func.func @plain
// CHECK: exec.gemm {{.*}} trans_a = false, trans_b = false} : (tensor<3x18xf32>, tensor<1x18x64xf32>) -> tensor<1x3x64xf32>
// CHECK: exec.gemm {{.*}} trans_a = false, trans_b = false} : (tensor<3x18xf32>, tensor<1x18x16xf32>) -> tensor<1x3x16xf32>
// CHECK-NOT: transpose

func.func @plain(%x: tensor<1x2x8x8xf32>, %y: tensor<1x2x4x4xf32>, %wy: tensor<3x2x3x3xf32>) -> (tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>) {
  %w = nn.constant dense<1.0> : tensor<3x2x3x3xf32>
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x8x8xf32> loc("big")
  %1 = nn.conv %y, %wy {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32> loc("computed")
  return %0, %1 : tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>
}
