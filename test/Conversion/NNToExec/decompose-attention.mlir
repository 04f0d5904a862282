// RUN: nncc-opt %s -split-input-file -nncc-decompose-attention | FileCheck %s

// A short attention (Sk = 64 <= D + Dv = 128) goes back to the batched
// products and the softmax: kT, q kT, the scale, the mask, softmax over the
// keys, then the product with v.
// CHECK-LABEL: func.func @short
// CHECK-NOT: nn.attention
// CHECK: %[[KT:.*]] = nn.transpose %arg1 {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x4x64x64xf32>) -> tensor<2x4x64x64xf32>
// CHECK: %[[S:.*]] = nn.matmul %arg0, %[[KT]] : (tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>) -> tensor<2x4x64x64xf32>
// CHECK: %[[C:.*]] = nn.constant dense<1.250000e-01> : tensor<f32>
// CHECK: %[[SS:.*]] = nn.mul %[[S]], %[[C]] : (tensor<2x4x64x64xf32>, tensor<f32>) -> tensor<2x4x64x64xf32>
// CHECK: %[[M:.*]] = nn.add %[[SS]], %arg3 : (tensor<2x4x64x64xf32>, tensor<2x1x1x64xf32>) -> tensor<2x4x64x64xf32>
// CHECK: %[[P:.*]] = nn.softmax %[[M]] {axis = 3 : i64} : tensor<2x4x64x64xf32>
// CHECK: %[[O:.*]] = nn.matmul %[[P]], %arg2 : (tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>) -> tensor<2x4x64x64xf32>
// CHECK: return %[[O]]
func.func @short(%q: tensor<2x4x64x64xf32>, %k: tensor<2x4x64x64xf32>, %v: tensor<2x4x64x64xf32>,
                 %mask: tensor<2x1x1x64xf32>) -> tensor<2x4x64x64xf32> {
  %0 = nn.attention %q, %k, %v, %mask {scale = 1.250000e-01 : f64} : (tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x1x1x64xf32>) -> tensor<2x4x64x64xf32>
  return %0 : tensor<2x4x64x64xf32>
}

// -----

// Without a mask and with scale 1 neither is materialized.
// CHECK-LABEL: func.func @unscaled
// CHECK: %[[S:.*]] = nn.matmul
// CHECK-NEXT: nn.softmax %[[S]] {axis = 1 : i64}
func.func @unscaled(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = nn.attention %q, %k, %v {scale = 1.000000e+00 : f64} : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// A long key sequence (Sk = 512 > D + Dv = 128) keeps the fused kernel,
// which never holds the score matrix.
// CHECK-LABEL: func.func @long
// CHECK: nn.attention
// CHECK-NOT: nn.softmax
func.func @long(%q: tensor<4x512x64xf32>, %k: tensor<4x512x64xf32>, %v: tensor<4x512x64xf32>) -> tensor<4x512x64xf32> {
  %0 = nn.attention %q, %k, %v {scale = 1.250000e-01 : f64} : (tensor<4x512x64xf32>, tensor<4x512x64xf32>, tensor<4x512x64xf32>) -> tensor<4x512x64xf32>
  return %0 : tensor<4x512x64xf32>
}
