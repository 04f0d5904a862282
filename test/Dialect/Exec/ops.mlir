// RUN: nncc-opt %s | nncc-opt | FileCheck %s
// RUN: nncc-opt %s -mlir-print-op-generic | nncc-opt | FileCheck %s
// Round trip: every exec op parses, verifies and prints back to itself, in
// the custom and in the generic form.

func.func private @k_add(%a: tensor<4xf32>, %b: tensor<4xf32>, %init: tensor<4xf32>) -> tensor<4xf32>
func.func private @k_split(%x: tensor<8xf32>, %i0: tensor<4xf32>, %i1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
func.func private @k_signless(%x: tensor<4xi8>, %init: tensor<4xi8>) -> tensor<4xi8>

// CHECK-LABEL: func.func @launch
// CHECK-NEXT: %[[A:.+]] = exec.launch @k_add(%arg0, %arg1) {nodes = "Add_0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[B:.+]] = exec.launch @k_add(%[[A]], %arg1) {inplace_operands = array<i64: 0>, nodes = "Add_1"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[S:.+]]:2 = exec.launch @k_split(%arg2) {nodes = "Split_0,Split_1"} : (tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: return %[[B]], %[[S]]#0, %[[S]]#1
func.func @launch(%a: tensor<4xf32>, %b: tensor<4xf32>, %x: tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = exec.launch @k_add(%a, %b) {nodes = "Add_0"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = exec.launch @k_add(%0, %b) {inplace_operands = array<i64: 0>, nodes = "Add_1"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2:2 = exec.launch @k_split(%x) {nodes = "Split_0,Split_1"} : (tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %1, %2#0, %2#1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Kernels see unsigned integers as signless: a ui8 operand matches an i8 kernel.
// CHECK-LABEL: func.func @launch_unsigned
// CHECK-NEXT: exec.launch @k_signless(%arg0) {nodes = "Not_0"} : (tensor<4xui8>) -> tensor<4xui8>
func.func @launch_unsigned(%x: tensor<4xui8>) -> tensor<4xui8> {
  %0 = exec.launch @k_signless(%x) {nodes = "Not_0"} : (tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// CHECK-LABEL: func.func @gemm
// CHECK-NEXT: exec.gemm %arg0, %arg1 {alpha = 1.000000e+00 : f64, beta = 0.000000e+00 : f64, nodes = "MatMul_0", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: exec.gemm %arg2, %arg3 {alpha = 2.500000e-01 : f64, beta = 0.000000e+00 : f64, nodes = "Gemm_0", trans_a = true, trans_b = true} : (tensor<8x4xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: exec.gemm %arg0, %arg1 bias %arg5 {activation = "gelu", alpha = 1.000000e+00 : f64, beta = 0.000000e+00 : f64, nodes = "g", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: exec.gemm %arg0, %arg1 acc %arg4 {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64, nodes = "c", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: exec.gemm %arg0, %arg1 acc %arg4 bias %arg5 {activation = "relu", alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64, nodes = "cb", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
func.func @gemm(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %at: tensor<8x4xf32>, %bt: tensor<6x8xf32>, %c: tensor<4x6xf32>, %bias: tensor<6xf32>) {
  %0 = exec.gemm %a, %b {alpha = 1.0 : f64, beta = 0.0 : f64, nodes = "MatMul_0", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %1 = exec.gemm %at, %bt {alpha = 0.25 : f64, beta = 0.0 : f64, nodes = "Gemm_0", trans_a = true, trans_b = true} : (tensor<8x4xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %2 = exec.gemm %a, %b bias %bias {activation = "gelu", alpha = 1.0 : f64, beta = 0.0 : f64, nodes = "g", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %3 = exec.gemm %a, %b acc %c {alpha = 1.0 : f64, beta = 1.0 : f64, nodes = "c", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %4 = exec.gemm %a, %b acc %c bias %bias {activation = "relu", alpha = 1.0 : f64, beta = 1.0 : f64, nodes = "cb", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  return
}

// Batched (B broadcast over the batch) and low precision: bf16 operands with
// an f32 result, f16 operands with an f16 result.
// CHECK-LABEL: func.func @gemm_batched_low_precision
// CHECK-NEXT: exec.gemm %arg0, %arg1 {{{.*}}} : (tensor<2x3x4x8xbf16>, tensor<8x6xbf16>) -> tensor<2x3x4x6xf32>
// CHECK-NEXT: exec.gemm %arg2, %arg3 {{{.*}}} : (tensor<5x4x8xf16>, tensor<5x8x6xf16>) -> tensor<5x4x6xf16>
func.func @gemm_batched_low_precision(%a: tensor<2x3x4x8xbf16>, %b: tensor<8x6xbf16>, %c: tensor<5x4x8xf16>, %d: tensor<5x8x6xf16>) -> (tensor<2x3x4x6xf32>, tensor<5x4x6xf16>) {
  %0 = exec.gemm %a, %b {alpha = 1.0 : f64, beta = 0.0 : f64, nodes = "", trans_a = false, trans_b = false} : (tensor<2x3x4x8xbf16>, tensor<8x6xbf16>) -> tensor<2x3x4x6xf32>
  %1 = exec.gemm %c, %d {alpha = 1.0 : f64, beta = 0.0 : f64, nodes = "", trans_a = false, trans_b = false} : (tensor<5x4x8xf16>, tensor<5x8x6xf16>) -> tensor<5x4x6xf16>
  return %0, %1 : tensor<2x3x4x6xf32>, tensor<5x4x6xf16>
}

// CHECK-LABEL: func.func @view
// CHECK-NEXT: %[[V:.+]] = exec.view %arg0 : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT: exec.view %[[V]] : tensor<6x4xf32> -> tensor<24xf32>
// CHECK-NEXT: exec.view %arg1 : tensor<1xi64> -> tensor<i64>
func.func @view(%x: tensor<2x3x4xf32>, %s: tensor<1xi64>) -> (tensor<24xf32>, tensor<i64>) {
  %0 = exec.view %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = exec.view %0 : tensor<6x4xf32> -> tensor<24xf32>
  %2 = exec.view %s : tensor<1xi64> -> tensor<i64>
  return %1, %2 : tensor<24xf32>, tensor<i64>
}
