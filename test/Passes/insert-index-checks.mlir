// RUN: nncc-opt %s -nncc-insert-index-checks -split-input-file -verify-diagnostics | FileCheck %s

// Run-time indices: the function gains an i32 result, reduce_max of
// (idx < -n or idx >= n), naming the node and the range.
// CHECK-LABEL: func.func @gather
// CHECK-SAME: -> (tensor<4x3xf32> {nn.name = "y"}, tensor<i32> {nncc.check = "node 'emb' (Gather): an index is outside [-5, 5) of axis 0"})
// CHECK: %[[LO:.*]] = nn.constant dense<-5> : tensor<i64>
// CHECK: %[[BELOW:.*]] = nn.less %arg1, %[[LO]]
// CHECK: %[[HI:.*]] = nn.constant dense<5> : tensor<i64>
// CHECK: %[[ABOVE:.*]] = nn.greater_equal %arg1, %[[HI]]
// CHECK: %[[BAD:.*]] = nn.or %[[BELOW]], %[[ABOVE]]
// CHECK: %[[BAD32:.*]] = nn.cast %[[BAD]] : (tensor<4xi1>) -> tensor<4xi32>
// CHECK: %[[FLAG:.*]] = nn.reduce_max %[[BAD32]] {axes = array<i64: 0>, keepdims = false}
// CHECK: return %{{.*}}, %[[FLAG]]
func.func @gather(%data: tensor<5x3xf32> {nn.name = "data"}, %idx: tensor<4xi64> {nn.name = "idx"})
    -> (tensor<4x3xf32> {nn.name = "y"}) {
  %0 = nn.gather %data, %idx {axis = 0 : i64} : (tensor<5x3xf32>, tensor<4xi64>) -> tensor<4x3xf32> loc("emb")
  return %0 : tensor<4x3xf32>
}

// -----

// GatherElements checks its axis' extent (3 along axis 1); constant indices
// are the importer's to check, so the second gather adds nothing.
// CHECK-LABEL: func.func @elements
// CHECK-SAME: tensor<i32> {nncc.check = "node 'ge' (GatherElements): an index is outside [-3, 3) of axis 1"})
// CHECK-NOT: nncc.check
// CHECK: return
func.func @elements(%data: tensor<5x3xf32>, %idx: tensor<5x2xi32>) -> (tensor<5x2xf32>, tensor<5x2xf32>) {
  %0 = nn.gather_elements %data, %idx {axis = 1 : i64} : (tensor<5x3xf32>, tensor<5x2xi32>) -> tensor<5x2xf32> loc("ge")
  %c = nn.constant dense<[0, 2]> : tensor<2xi64>
  %1 = nn.gather %data, %c {axis = 1 : i64} : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<5x2xf32> loc("const")
  return %0, %1 : tensor<5x2xf32>, tensor<5x2xf32>
}

// -----

// Private functions (kernels) are left alone.
// CHECK-LABEL: func.func private @helper
// CHECK-SAME: -> tensor<2xf32>
func.func private @helper(%data: tensor<5xf32>, %idx: tensor<2xi64>) -> tensor<2xf32> {
  %0 = nn.gather %data, %idx {axis = 0 : i64} : (tensor<5xf32>, tensor<2xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Indices that folding made constant are checked at compile time.
func.func @folded(%data: tensor<5x3xf32>) -> tensor<2x3xf32> {
  %c = nn.constant dense<[1, 5]> : tensor<2xi64>
  // expected-error @unknown {{node 'late' (Gather): an index is outside [-5, 5) of axis 0 (5)}}
  %0 = nn.gather %data, %c {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32> loc("late")
  return %0 : tensor<2x3xf32>
}
