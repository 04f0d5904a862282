// RUN: nncc-opt %s -split-input-file -nncc-fuse-gemm-epilogues | FileCheck %s
// Each decision is explained by a remark of category nncc-fusion.
// RUN: nncc-opt %s -split-input-file -nncc-fuse-gemm-epilogues --remarks-filter=nncc-fusion 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=REMARK
// REMARK-DAG: [Passed] gemm-epilogue | Category:nncc-fusion | Function=matmul_bias_relu | Reason="bias and relu on the GEMM call"
// REMARK-DAG: [Passed] gemm-epilogue | Category:nncc-fusion | Function=gemm_c | Reason="bias on the GEMM call"
// REMARK-DAG: [Missed] gemm-epilogue | Category:nncc-fusion | Function=matrix_add | Reason="the add's other operand is not a vector of the GEMM's columns"

// MatMul + bias vector + ReLU: one GEMM call carrying bias and activation,
// named after all three nodes.
// CHECK-LABEL: func.func @matmul_bias_relu
// CHECK-NEXT: %[[G:.*]] = exec.gemm %arg0, %arg1 bias %arg2 {activation = "relu", alpha = 1.000000e+00 : f64, beta = 0.000000e+00 : f64, nodes = "mm,bias,act", trans_a = false, trans_b = false} : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %[[G]]
func.func @matmul_bias_relu(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %m = nn.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32> loc("mm")
  %a = nn.add %m, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("bias")
  %r = nn.relu %a : tensor<2x3xf32> loc("act")
  return %r : tensor<2x3xf32>
}

// -----

// A Gemm's column-vector C (beta 1) becomes the bias; alpha stays.
// CHECK-LABEL: func.func @gemm_c
// CHECK-NEXT: exec.gemm %arg0, %arg1 bias %arg2 {alpha = 2.000000e+00 : f64, beta = 0.000000e+00 : f64, nodes = "g"
func.func @gemm_c(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>, %c: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = nn.gemm %a, %b, %c {alpha = 2.0 : f64, beta = 1.0 : f64, trans_a = false, trans_b = false} : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("g")
  return %0 : tensor<2x3xf32>
}

// -----

// An add of a full matrix is no bias: nothing fuses.
// CHECK-LABEL: func.func @matrix_add
// CHECK: nn.matmul
// CHECK: nn.add
// CHECK-NOT: exec.gemm
func.func @matrix_add(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %m = nn.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %a = nn.add %m, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %a : tensor<2x3xf32>
}
