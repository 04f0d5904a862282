// RUN: nncc-opt %s -split-input-file -nncc-make-weights-mutable | FileCheck %s
// RUN: nncc-opt %s -split-input-file -nncc-make-weights-mutable="names=w.*" | FileCheck %s --check-prefix=SOME
// RUN: not nncc-opt %s -split-input-file -nncc-make-weights-mutable="names=(" 2>&1 | FileCheck %s --check-prefix=BAD

// Float weights become mutable globals read with global_load; a weight used
// by two entries is one global; integer constants stay constants.
// CHECK: ml_program.global private mutable @w(dense<1.000000e+00> : tensor<4x4xf32>) : tensor<4x4xf32>
// CHECK: ml_program.global private mutable @b(dense<2.000000e+00> : tensor<4xf32>) : tensor<4xf32>
// CHECK-NOT: ml_program.global private
// CHECK-LABEL: func.func @forward
// CHECK: ml_program.global_load @w : tensor<4x4xf32>
// CHECK: ml_program.global_load @b : tensor<4xf32>
// CHECK: nn.constant dense<1> : tensor<2xi64>
// CHECK-LABEL: func.func @other
// CHECK: ml_program.global_load @w : tensor<4x4xf32>
// SOME: ml_program.global private mutable @w(
// SOME-NOT: ml_program.global private
// SOME: nn.constant dense<2.000000e+00> : tensor<4xf32>
// BAD: error: nncc-make-weights-mutable: names '(' is no regular expression
func.func @forward(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<2xi64>) {
  %w = nn.constant dense<1.0> : tensor<4x4xf32> loc("w")
  %b = nn.constant dense<2.0> : tensor<4xf32> loc("b")
  %i = nn.constant dense<1> : tensor<2xi64> loc("i")
  %m = nn.matmul %x, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = nn.add %m, %b : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  return %y, %i : tensor<4x4xf32>, tensor<2xi64>
}
func.func @other(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %w = nn.constant dense<1.0> : tensor<4x4xf32> loc("w")
  %m = nn.matmul %x, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m : tensor<4x4xf32>
}
