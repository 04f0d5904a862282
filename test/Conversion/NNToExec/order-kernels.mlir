// RUN: nncc-opt %s -nncc-order-kernels | FileCheck %s

// Kernels move to the module's end in the order the entries first launch
// them, whichever pass outlined them first.
// CHECK-LABEL: func.func @forward
// CHECK: func.func @backward
// CHECK: func.func private @k0_neg
// CHECK: func.func private @k0_relu
// CHECK: func.func private @k0_exp
// CHECK-NOT: func.func
func.func private @k0_exp(%a: tensor<2xf32>, %init: tensor<2xf32>) -> tensor<2xf32> {
  return %init : tensor<2xf32>
}
func.func private @k0_relu(%a: tensor<2xf32>, %init: tensor<2xf32>) -> tensor<2xf32> {
  return %init : tensor<2xf32>
}
func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = exec.launch @k0_neg(%x) {nodes = "n"} : (tensor<2xf32>) -> tensor<2xf32>
  %1 = exec.launch @k0_relu(%0) {nodes = "r"} : (tensor<2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}
func.func private @k0_neg(%a: tensor<2xf32>, %init: tensor<2xf32>) -> tensor<2xf32> {
  return %init : tensor<2xf32>
}
func.func @backward(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = exec.launch @k0_relu(%x) {nodes = "r"} : (tensor<2xf32>) -> tensor<2xf32>
  %1 = exec.launch @k0_exp(%0) {nodes = "e"} : (tensor<2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}
