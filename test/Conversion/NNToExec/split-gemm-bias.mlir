// RUN: nncc-opt %s -split-input-file -nncc-split-gemm-bias | FileCheck %s

// A Gemm's column-vector C (beta 1) becomes an add after a C-less Gemm.
// CHECK-LABEL: func.func @gemm_c
// CHECK: %[[G:.*]] = nn.gemm %arg0, %arg1 {alpha = 2.000000e+00 : f64, beta = 0.000000e+00 : f64, trans_a = false, trans_b = false} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK: nn.add %[[G]], %arg2 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @gemm_c(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>, %c: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = nn.gemm %a, %b, %c {alpha = 2.0 : f64, beta = 1.0 : f64, trans_a = false, trans_b = false} : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A matrix C is accumulated by the GEMM call (beta): left alone.
// CHECK-LABEL: func.func @matrix_c
// CHECK: nn.gemm %arg0, %arg1, %arg2
// CHECK-NOT: nn.add
func.func @matrix_c(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>, %c: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 1.0 : f64, trans_a = false, trans_b = false} : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
