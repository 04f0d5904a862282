// RUN: nncc-opt %s -nncc-lower-nn-to-exec | FileCheck %s --check-prefix=GPU
// RUN: nncc-opt %s -nncc-lower-nn-to-exec="cpu-only=true gemm-epilogues=false" | FileCheck %s --check-prefix=CPU
// RUN: nncc-opt %s -nncc-lower-nn-to-exec="fuse=false" | FileCheck %s --check-prefix=NOFUSE

// The whole pipeline on a linear layer with bias, ReLU and a residual add:
// the GPU plan puts bias and ReLU on the GEMM call, the CPU plan fuses them
// with the add into one kernel, without fusion every op has its own.
// GPU-LABEL: func.func @layer
// GPU: %[[G:.*]] = exec.gemm %arg0, %arg1 bias %arg2 {activation = "relu"
// GPU: exec.launch @k0_add(%[[G]], %arg0)
// GPU-NOT: nn.
// CPU-LABEL: func.func @layer
// CPU: %[[G:.*]] = exec.gemm %arg0, %arg1 {
// CPU: exec.launch @k0_fused_add_3(%[[G]], %arg2, %arg0) {{{.*}}nodes = "bias,act,res"}
// CPU-NOT: nn.
// NOFUSE-LABEL: func.func @layer
// NOFUSE: exec.gemm
// NOFUSE: exec.launch @k0_add
// NOFUSE: exec.launch @k0_relu
// NOFUSE: exec.launch @k1_add
// NOFUSE: func.func private @k0_add
// NOFUSE: func.func private @k0_relu
// NOFUSE: func.func private @k1_add
func.func @layer(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  %m = nn.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("mm")
  %a = nn.add %m, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("bias")
  %r = nn.relu %a : tensor<2x4xf32> loc("act")
  %s = nn.add %r, %x : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> loc("res")
  return %s : tensor<2x4xf32>
}
