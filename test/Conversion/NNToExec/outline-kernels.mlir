// RUN: nncc-opt %s -split-input-file -verify-diagnostics -nncc-outline-kernels | FileCheck %s

// Static reshapes become views, results without elements empty constants,
// every other op a launch of its own kernel; constants (weights) stay.
// CHECK-LABEL: func.func @ops
// CHECK: %[[C:.*]] = nn.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: %[[V:.*]] = exec.view %arg0 : tensor<2x2xf32> -> tensor<4xf32>
// CHECK: %[[R:.*]] = exec.launch @k0_relu(%[[V]]) {inplace_operands = array<i64: 0>, nodes = "act"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[A:.*]] = exec.launch @k0_add(%[[R]], %[[C]])
// CHECK: %[[E:.*]] = nn.constant dense<> : tensor<0xf32>
// CHECK: return %[[A]], %[[E]]
// CHECK: func.func private @k0_relu(%arg0: tensor<4xf32>, %arg1: tensor<4xf32> {bufferization.writable = true}) -> tensor<4xf32>
// CHECK: linalg.generic
// CHECK: func.func private @k0_add
func.func @ops(%x: tensor<2x2xf32>, %y: tensor<0xf32>) -> (tensor<4xf32>, tensor<0xf32>) {
  %c = nn.constant dense<1.0> : tensor<4xf32>
  %0 = nn.reshape %x : (tensor<2x2xf32>) -> tensor<4xf32>
  %1 = nn.relu %0 : tensor<4xf32> loc("act")
  %2 = nn.add %1, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = nn.neg %y : tensor<0xf32>
  return %2, %3 : tensor<4xf32>, tensor<0xf32>
}

// -----

// Kernel names take the lowest free number: a second relu is k1_relu.
// CHECK-LABEL: func.func @names
// CHECK: exec.launch @k0_relu
// CHECK: exec.launch @k1_relu
func.func @names(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.relu %x : tensor<4xf32>
  %1 = nn.relu %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{needs static shapes for code generation}}
  %0 = nn.relu %x : tensor<?xf32>
  return %0 : tensor<?xf32>
}
