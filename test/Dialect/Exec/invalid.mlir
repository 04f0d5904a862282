// RUN: nncc-opt %s -split-input-file -verify-diagnostics
// One case per verifier error path of the exec ops.

func.func @launch_unknown_kernel(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{kernel 'missing' is not a func.func in scope}}
  %0 = exec.launch @missing(%x) {nodes = ""} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

memref.global "private" constant @not_a_func : memref<4xf32> = dense<0.0>

func.func @launch_symbol_not_a_func(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{kernel 'not_a_func' is not a func.func in scope}}
  %0 = exec.launch @not_a_func(%x) {nodes = ""} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func private @k(%x: tensor<4xf32>) -> tensor<4xf32>

func.func @launch_no_init(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{kernel 'k' has type '(tensor<4xf32>) -> tensor<4xf32>', which does not take the operands plus one init per result}}
  %0 = exec.launch @k(%x) {nodes = ""} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func private @k(%x: tensor<4xf32>, %init: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)

func.func @launch_result_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{which does not take the operands plus one init per result}}
  %0 = exec.launch @k(%x) {nodes = ""} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func private @k(%x: tensor<4xf32>, %init: tensor<4xf32>) -> tensor<4xf32>

func.func @launch_operand_type(%x: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{operand type 'tensor<4xf16>' differs from the kernel's 'tensor<4xf32>'}}
  %0 = exec.launch @k(%x) {nodes = ""} : (tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func private @k(%x: tensor<4xi8>, %init: tensor<4xi8>) -> tensor<4xi8>

// Signedness is ignored, the width is not.
func.func @launch_operand_width(%x: tensor<4xui16>) -> tensor<4xi8> {
  // expected-error @+1 {{operand type 'tensor<4xui16>' differs from the kernel's 'tensor<4xi8>'}}
  %0 = exec.launch @k(%x) {nodes = ""} : (tensor<4xui16>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func private @k(%x: tensor<4xf32>, %init: tensor<4xf32>) -> tensor<4xf32>

func.func @launch_result_shape(%x: tensor<4xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{result type 'tensor<2x2xf32>' differs from the kernel's 'tensor<4xf32>'}}
  %0 = exec.launch @k(%x) {nodes = ""} : (tensor<4xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @gemm_rank(%a: tensor<8xf32>, %b: tensor<8x6xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{operands and result need rank >= 2}}
  %0 = exec.gemm %a, %b {alpha = 1.0 : f64, beta = 0.0 : f64, nodes = "", trans_a = false, trans_b = false} : (tensor<8xf32>, tensor<8x6xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @gemm_integer(%a: tensor<4x8xi32>, %b: tensor<8x6xi32>) -> tensor<4x6xi32> {
  // expected-error @+1 {{A and B must both be f32, f16 or bf16 and the result f32 or their type, got 'i32' x 'i32' -> 'i32'}}
  %0 = exec.gemm %a, %b {alpha = 1.0 : f64, beta = 0.0 : f64, nodes = "", trans_a = false, trans_b = false} : (tensor<4x8xi32>, tensor<8x6xi32>) -> tensor<4x6xi32>
  return %0 : tensor<4x6xi32>
}

// -----

func.func @gemm_mixed_operands(%a: tensor<4x8xf16>, %b: tensor<8x6xbf16>) -> tensor<4x6xf32> {
  // expected-error @+1 {{got 'f16' x 'bf16' -> 'f32'}}
  %0 = exec.gemm %a, %b {alpha = 1.0 : f64, beta = 0.0 : f64, nodes = "", trans_a = false, trans_b = false} : (tensor<4x8xf16>, tensor<8x6xbf16>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @gemm_narrowing_result(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) -> tensor<4x6xf16> {
  // expected-error @+1 {{got 'f32' x 'f32' -> 'f16'}}
  %0 = exec.gemm %a, %b {alpha = 1.0 : f64, beta = 0.0 : f64, nodes = "", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf16>
  return %0 : tensor<4x6xf16>
}

// -----

func.func @gemm_contraction(%a: tensor<4x8xf32>, %b: tensor<7x6xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{contraction dims differ: 8 vs 7}}
  %0 = exec.gemm %a, %b {alpha = 1.0 : f64, beta = 0.0 : f64, nodes = "", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<7x6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// With trans_a, K is A's second-to-last dim.
func.func @gemm_contraction_transposed(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) -> tensor<8x6xf32> {
  // expected-error @+1 {{contraction dims differ: 4 vs 8}}
  %0 = exec.gemm %a, %b {alpha = 1.0 : f64, beta = 0.0 : f64, nodes = "", trans_a = true, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

func.func @gemm_accumulator_type(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %c: tensor<1x6xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{C must have the result type}}
  %0 = exec.gemm %a, %b acc %c {alpha = 1.0 : f64, beta = 1.0 : f64, nodes = "", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<1x6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @gemm_bias_size(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %bias: tensor<4xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{bias must hold N = 6 elements of the result type}}
  %0 = exec.gemm %a, %b bias %bias {alpha = 1.0 : f64, beta = 0.0 : f64, nodes = "", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<4xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @gemm_bias_type(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %bias: tensor<6xf16>) -> tensor<4x6xf32> {
  // expected-error @+1 {{bias must hold N = 6 elements of the result type}}
  %0 = exec.gemm %a, %b bias %bias {alpha = 1.0 : f64, beta = 0.0 : f64, nodes = "", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<6xf16>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @gemm_activation_name(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{activation must be none, relu, gelu or clip, got 'tanh'}}
  %0 = exec.gemm %a, %b {activation = "tanh", alpha = 1.0 : f64, beta = 0.0 : f64, nodes = "", trans_a = false, trans_b = false} : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @view_element_count(%x: tensor<2x3xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{must keep the element type and count of a static shape}}
  %0 = exec.view %x : tensor<2x3xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @view_element_type(%x: tensor<2x3xf32>) -> tensor<6xi32> {
  // expected-error @+1 {{must keep the element type and count of a static shape}}
  %0 = exec.view %x : tensor<2x3xf32> -> tensor<6xi32>
  return %0 : tensor<6xi32>
}

// -----

func.func @view_dynamic(%x: tensor<?x3xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{must keep the element type and count of a static shape}}
  %0 = exec.view %x : tensor<?x3xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
