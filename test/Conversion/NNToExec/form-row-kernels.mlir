// RUN: nncc-opt %s -split-input-file -nncc-form-row-kernels | FileCheck %s
// RUN: nncc-opt %s -split-input-file -nncc-form-row-kernels --remarks-filter=nncc-fusion 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=REMARK
// REMARK-DAG: loc(fused["residual", "ln"]): [Passed] row-kernel | Category:nncc-fusion | Function=layer_norm | Reason="1 producer(s) recomputed in the row loop, 0 consumer(s) written by it"
// REMARK-DAG: loc("sum"): [Passed] row-kernel | Category:nncc-fusion | Function=shared | Reason="0 producer(s) recomputed in the row loop, 0 consumer(s) written by it"

// A layer norm takes in the residual add only it reads: one kernel, one
// parallel loop over the rows, named after both nodes.
// CHECK-LABEL: func.func @layer_norm
// CHECK-NEXT: %[[K:.*]] = exec.launch @k0_fused_layer_norm_2(%arg0, %arg1, %arg2) {nodes = "residual,ln"} : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: return %[[K]]
// CHECK: func.func private @k0_fused_layer_norm_2(%arg0: tensor<2x4xf32>, %arg1: tensor<2x4xf32>, %arg2: tensor<4xf32>, %arg3: tensor<2x4xf32> {bufferization.writable = true})
// CHECK: scf.forall
func.func @layer_norm(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>, %g: tensor<4xf32>) -> tensor<2x4xf32> {
  %a = nn.add %x, %y : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> loc("residual")
  %n = nn.layer_norm %a, %g {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("ln")
  return %n : tensor<2x4xf32>
}

// -----

// A reduction over the trailing axis is a row root too; its producer, read
// elsewhere as well, stays outside, and so do the other elementwise ops.
// CHECK-LABEL: func.func @shared
// CHECK: %[[M:.*]] = nn.mul
// CHECK: nn.tanh %[[M]]
// CHECK: exec.launch @k0_reduce_sum(%[[M]]) {nodes = "sum"} : (tensor<2x4xf32>) -> tensor<2xf32>
func.func @shared(%x: tensor<2x4xf32>, %s: tensor<f32>) -> (tensor<2x4xf32>, tensor<2xf32>) {
  %m = nn.mul %x, %s : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32> loc("mul")
  %t = nn.tanh %m : tensor<2x4xf32> loc("tanh")
  %r = nn.reduce_sum %m {axes = array<i64: 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<2xf32> loc("sum")
  return %t, %r : tensor<2x4xf32>, tensor<2xf32>
}
