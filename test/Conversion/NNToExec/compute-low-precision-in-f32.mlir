// RUN: nncc-opt %s -nncc-compute-low-precision-in-f32 -split-input-file | FileCheck %s

// A bf16 op computes in f32 between casts; the GEMM keeps its bf16 operands
// (the library accumulates in f32 itself); a move-only op (transpose) stays
// bf16; one widening cast per value.
// CHECK-LABEL: func.func @mixed
// CHECK: %[[M:.*]] = nn.matmul %arg0, %arg1 : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
// CHECK: %[[W:.*]] = nn.cast %[[M]] : (tensor<2x3xbf16>) -> tensor<2x3xf32>
// CHECK: %[[E:.*]] = nn.exp %[[W]] : tensor<2x3xf32>
// CHECK: %[[N:.*]] = nn.cast %[[E]] : (tensor<2x3xf32>) -> tensor<2x3xbf16>
// CHECK: %[[T:.*]] = nn.transpose %[[N]]
// CHECK-SAME: -> tensor<3x2xbf16>
// CHECK: nn.neg %[[W]] : tensor<2x3xf32>
func.func @mixed(%x: tensor<2x4xbf16>, %w: tensor<4x3xbf16>) -> (tensor<3x2xbf16>, tensor<2x3xbf16>) {
  %m = nn.matmul %x, %w : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
  %e = nn.exp %m : tensor<2x3xbf16>
  %t = nn.transpose %e {perm = array<i64: 1, 0>} : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  %n = nn.neg %m : tensor<2x3xbf16>
  return %t, %n : tensor<3x2xbf16>, tensor<2x3xbf16>
}

// -----

// A bf16 convolution gives its bias to an add computed in f32; the bias
// constant is widened at compile time.
// CHECK-LABEL: func.func @conv_bias
// CHECK: %[[C:.*]] = nn.conv %arg0, %arg1 {{.*}} : (tensor<1x2x4x4xbf16>, tensor<3x2x1x1xbf16>) -> tensor<1x3x4x4xbf16>
// CHECK: %[[B:.*]] = nn.reshape %{{.*}} : (tensor<3xbf16>) -> tensor<3x1x1xbf16>
// CHECK: nn.add {{.*}} : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
func.func @conv_bias(%x: tensor<1x2x4x4xbf16>, %w: tensor<3x2x1x1xbf16>) -> tensor<1x3x4x4xbf16> {
  %b = nn.constant dense<[1.0, 2.0, 3.0]> : tensor<3xbf16>
  %0 = nn.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xbf16>, tensor<3x2x1x1xbf16>, tensor<3xbf16>) -> tensor<1x3x4x4xbf16>
  return %0 : tensor<1x3x4x4xbf16>
}

// -----

// f32 ops and private functions are left alone.
// CHECK-LABEL: func.func private @kernel
// CHECK-NEXT: nn.exp %arg0 : tensor<2xbf16>
func.func private @kernel(%x: tensor<2xbf16>) -> tensor<2xbf16> {
  %0 = nn.exp %x : tensor<2xbf16>
  return %0 : tensor<2xbf16>
}
