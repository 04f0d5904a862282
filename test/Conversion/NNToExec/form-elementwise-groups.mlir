// RUN: nncc-opt %s -split-input-file -nncc-form-elementwise-groups | FileCheck %s
// RUN: nncc-opt %s -split-input-file -nncc-form-elementwise-groups --remarks-filter=nncc-fusion 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=REMARK
// REMARK-DAG: loc("add"): [Missed] elementwise-group | Category:nncc-fusion | Function=chain | Reason="its producer's group has another result shape"
// REMARK-DAG: loc("exp"): [Passed] elementwise-group | Category:nncc-fusion | Function=chain | Reason="2 ops in one kernel"
// REMARK-DAG: loc("tanh"): [Passed] elementwise-group | Category:nncc-fusion | Function=chain | Reason="3 ops in one kernel"

// Chains of one shape share a kernel: the [4] chain (neg, exp) and the
// [2, 4] group (add, mul, tanh), which also writes the mul result the
// reduction reads. Other ops keep their nn form for later passes.
// CHECK-LABEL: func.func @chain
// CHECK: %[[S:.*]] = exec.launch @k0_fused_neg_2(%arg1) {inplace_operands = array<i64: 0>, nodes = "neg,exp"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[F:.*]]:2 = exec.launch @k0_fused_add_3(%arg0, %[[S]], %arg2) {nodes = "add,mul,tanh"} : (tensor<2x4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK: nn.reduce_sum %[[F]]#0
// CHECK: return %[[S]], %[[F]]#1
// CHECK: func.func private @k0_fused_neg_2
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: func.func private @k0_fused_add_3
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: math.tanh
func.func @chain(%x: tensor<2x4xf32>, %v: tensor<4xf32>, %s: tensor<f32>) -> (tensor<4xf32>, tensor<2x4xf32>, tensor<2xf32>) {
  %n = nn.neg %v : tensor<4xf32> loc("neg")
  %e = nn.exp %n : tensor<4xf32> loc("exp")
  %a = nn.add %x, %e : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("add")
  %m = nn.mul %a, %s : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32> loc("mul")
  %t = nn.tanh %m : tensor<2x4xf32> loc("tanh")
  %r = nn.reduce_sum %m {axes = array<i64: 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<2xf32> loc("sum")
  return %e, %t, %r : tensor<4xf32>, tensor<2x4xf32>, tensor<2xf32>
}

// -----

// A single elementwise op is no group: it is left to nncc-outline-kernels.
// CHECK-LABEL: func.func @single
// CHECK-NEXT: nn.relu
// CHECK-NOT: exec.launch
func.func @single(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.relu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
