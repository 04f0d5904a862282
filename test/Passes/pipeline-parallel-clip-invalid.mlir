// RUN: nncc-opt %s -nncc-pipeline-parallel="stages=2 micro-batches=2 train=true loss=mse grad-clip=1.0" -verify-diagnostics

// The cost-balanced cut leaves the activations after the only weight's
// layer to stage 1, which updates no weight: its share of the clipping
// norm's all-reduce would be unused and canonicalized away, leaving stage 0
// waiting, so it is refused.
// expected-error @+1 {{nncc-pipeline-parallel: stage 1 updates no weight, but --grad-clip sums the gradient norm over every stage}}
module {
  ml_program.global private mutable @w(dense<0.5> : tensor<8x8xf32>) : tensor<8x8xf32>
  func.func @forward(%x: tensor<2x8xf32> {nn.name = "x"}) -> (tensor<2x8xf32> {nn.name = "y"}) {
    %w = ml_program.global_load @w : tensor<8x8xf32>
    %h = nn.matmul %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %a = nn.relu %h : tensor<2x8xf32>
    %b = nn.sigmoid %a : tensor<2x8xf32>
    %c = nn.tanh %b : tensor<2x8xf32>
    %d = nn.relu %c : tensor<2x8xf32>
    %e = nn.sigmoid %d : tensor<2x8xf32>
    %f = nn.tanh %e : tensor<2x8xf32>
    %g = nn.relu %f : tensor<2x8xf32>
    %y = nn.sigmoid %g : tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}
