// RUN: nncc-opt %s -split-input-file -nncc-pipeline-parallel="stages=2 micro-batches=2 train=true loss=mse" -verify-diagnostics


// One weight used by both layers (tied): no cut keeps its users together.
ml_program.global private mutable @w(dense<0.5> : tensor<8x8xf32>) : tensor<8x8xf32>
// expected-error @+1 {{'forward' has no place for cut 1 of 1 where no trainable weight is used on both sides}}
func.func @forward(%x: tensor<2x8xf32> {nn.name = "x"}) -> (tensor<2x8xf32> {nn.name = "y"}) {
  %w = ml_program.global_load @w : tensor<8x8xf32>
  %h = nn.matmul %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %y = nn.matmul %h, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// A module without the entry to cut.
// expected-error @+1 {{nncc-pipeline-parallel: the module has no entry 'forward'}}
module {
}

// -----

// A scalar output cannot hold the micro-batches' outputs.
// expected-error @+1 {{output 0 is a scalar: the outputs of 2 micro-batches are concatenated along their first dimension}}
func.func @forward(%x: tensor<2x8xf32> {nn.name = "x"}) -> (tensor<f32> {nn.name = "y"}) {
  %s = nn.reduce_sum %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x8xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
