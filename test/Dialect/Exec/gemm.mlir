// RUN: nncc-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// exec.gemm with an accumulator, a bias vector and an epilogue activation.

// CHECK-LABEL: func.func @gemm_epilogues
// CHECK-NEXT: exec.gemm %arg0, %arg1 bias %arg3 {activation = "gelu", alpha = 1.000000e+00 : f64, beta = 0.000000e+00 : f64, nodes = "g", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: exec.gemm %arg0, %arg1 acc %arg2 {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64, nodes = "c", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: exec.gemm %arg0, %arg1 acc %arg2 bias %arg3 {activation = "relu", {{.*}}} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
func.func @gemm_epilogues(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %c: tensor<4x6xf32>, %bias: tensor<6xf32>) {
  %0 = exec.gemm %a, %b bias %bias {activation = "gelu", alpha = 1.0 : f64, beta = 0.0 : f64, nodes = "g", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %1 = exec.gemm %a, %b acc %c {alpha = 1.0 : f64, beta = 1.0 : f64, nodes = "c", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %2 = exec.gemm %a, %b acc %c bias %bias {activation = "relu", alpha = 1.0 : f64, beta = 1.0 : f64, nodes = "cb", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @bias_size(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %bias: tensor<4xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{bias must hold N = 6 elements of the result type}}
  %0 = exec.gemm %a, %b bias %bias {alpha = 1.0 : f64, beta = 0.0 : f64, nodes = "", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<4xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @activation_name(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{activation must be none, relu or gelu, got 'tanh'}}
  %0 = exec.gemm %a, %b {activation = "tanh", alpha = 1.0 : f64, beta = 0.0 : f64, nodes = "", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}
