// RUN: nncc-opt %s -nncc-differentiate -split-input-file | FileCheck %s

// The entry stays; forward_grad recomputes the forward and applies Tanh's
// rule: dx = dy (1 - y²).
// CHECK-LABEL: func.func @forward(
// CHECK-NEXT: nn.tanh
// CHECK-NEXT: return
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<2x3xf32> {nn.name = "x"}, %[[DY:[a-z0-9_]+]]: tensor<2x3xf32> {nn.name = "d_y"})
// CHECK-SAME: -> (tensor<2x3xf32> {nn.name = "d_x"})
// CHECK: %[[Y:[a-z0-9_]+]] = nn.tanh %[[X]]
// CHECK-DAG: %[[Y2:[a-z0-9_]+]] = nn.mul %[[Y]], %[[Y]]
// CHECK-DAG: %[[ONE:[a-z0-9_]+]] = nn.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[D:[a-z0-9_]+]] = nn.sub %[[ONE]], %[[Y2]]
// CHECK: %[[DX:[a-z0-9_]+]] = nn.mul %[[DY]], %[[D]]
// CHECK: return %[[DX]]
func.func @forward(%x: tensor<2x3xf32> {nn.name = "x"}) -> (tensor<2x3xf32> {nn.name = "y"}) {
  %0 = nn.tanh %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A broadcast operand's cotangent is summed over the broadcast axes and
// reshaped back; the other passes through.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %{{[a-z0-9_]+}}: tensor<2x3xf32> {nn.name = "x"}, %{{[a-z0-9_]+}}: tensor<3xf32> {nn.name = "b"}, %[[DY:[a-z0-9_]+]]: tensor<2x3xf32> {nn.name = "d_y"})
// CHECK: %[[S:[a-z0-9_]+]] = nn.reduce_sum %[[DY]] {axes = array<i64: 0>, keepdims = true} : (tensor<2x3xf32>) -> tensor<1x3xf32>
// CHECK: %[[DB:[a-z0-9_]+]] = nn.reshape %[[S]] : (tensor<1x3xf32>) -> tensor<3xf32>
// CHECK: return %[[DY]], %[[DB]]
func.func @forward(%x: tensor<2x3xf32> {nn.name = "x"}, %b: tensor<3xf32> {nn.name = "b"}) -> (tensor<2x3xf32> {nn.name = "y"}) {
  %0 = nn.add %x, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// x has two users (exp and mul): their cotangents are summed with nn.add.
// y = exp(x) x: dx = dy exp(x) + (dy x) exp(x).
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<4xf32> {nn.name = "x"}, %[[DY:[a-z0-9_]+]]: tensor<4xf32> {nn.name = "d_y"})
// CHECK: %[[E:[a-z0-9_]+]] = nn.exp %[[X]]
// CHECK: %[[DE:[a-z0-9_]+]] = nn.mul %[[DY]], %[[X]]
// CHECK: %[[DX1:[a-z0-9_]+]] = nn.mul %[[DY]], %[[E]]
// CHECK: %[[DX2:[a-z0-9_]+]] = nn.mul %[[DE]], %[[E]]
// CHECK: %[[DX:[a-z0-9_]+]] = nn.add %[[DX1]], %[[DX2]]
// CHECK: return %[[DX]]
func.func @forward(%x: tensor<4xf32> {nn.name = "x"}) -> (tensor<4xf32> {nn.name = "y"}) {
  %0 = nn.exp %x : tensor<4xf32>
  %1 = nn.mul %0, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// MatMul with a broadcast batch: da = dy bᵀ, db = aᵀ dy summed over the batch.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<2x3x4xf32> {nn.name = "a"}, %[[B:[a-z0-9_]+]]: tensor<4x5xf32> {nn.name = "b"}, %[[DY:[a-z0-9_]+]]: tensor<2x3x5xf32> {nn.name = "d_y"})
// CHECK: %[[BT:[a-z0-9_]+]] = nn.transpose %[[B]] {perm = array<i64: 1, 0>}
// CHECK: %[[DA:[a-z0-9_]+]] = nn.matmul %[[DY]], %[[BT]] : (tensor<2x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[AT:[a-z0-9_]+]] = nn.transpose %[[A]] {perm = array<i64: 0, 2, 1>}
// CHECK: %[[P:[a-z0-9_]+]] = nn.matmul %[[AT]], %[[DY]] : (tensor<2x4x3xf32>, tensor<2x3x5xf32>) -> tensor<2x4x5xf32>
// CHECK: %[[S:[a-z0-9_]+]] = nn.reduce_sum %[[P]] {axes = array<i64: 0>, keepdims = true}
// CHECK: %[[DB:[a-z0-9_]+]] = nn.reshape %[[S]] : (tensor<1x4x5xf32>) -> tensor<4x5xf32>
// CHECK: return %[[DA]], %[[DB]]
func.func @forward(%a: tensor<2x3x4xf32> {nn.name = "a"}, %b: tensor<4x5xf32> {nn.name = "b"}) -> (tensor<2x3x5xf32> {nn.name = "y"}) {
  %0 = nn.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// ReduceMean without keepdims: the cotangent is reshaped to keep the axis,
// scaled by 1/4 and expanded back.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[DY:[a-z0-9_]+]]: tensor<3xf32> {nn.name = "d_y"})
// CHECK: %[[R:[a-z0-9_]+]] = nn.reshape %[[DY]] : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK: %[[Q:[a-z0-9_]+]] = nn.constant dense<2.500000e-01> : tensor<f32>
// CHECK: %[[M:[a-z0-9_]+]] = nn.mul %[[R]], %[[Q]]
// CHECK: %[[DX:[a-z0-9_]+]] = nn.expand %[[M]] : (tensor<3x1xf32>) -> tensor<3x4xf32>
// CHECK: return %[[DX]]
func.func @forward(%x: tensor<3x4xf32> {nn.name = "x"}) -> (tensor<3xf32> {nn.name = "y"}) {
  %0 = nn.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : (tensor<3x4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Softmax: dx = y (dy - Σ dy y).
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<2x5xf32> {nn.name = "x"}, %[[DY:[a-z0-9_]+]]: tensor<2x5xf32> {nn.name = "d_y"})
// CHECK: %[[Y:[a-z0-9_]+]] = nn.softmax %[[X]] {axis = 1 : i64}
// CHECK: %[[P:[a-z0-9_]+]] = nn.mul %[[DY]], %[[Y]]
// CHECK: %[[S:[a-z0-9_]+]] = nn.reduce_sum %[[P]] {axes = array<i64: 1>, keepdims = true}
// CHECK: %[[D:[a-z0-9_]+]] = nn.sub %[[DY]], %[[S]]
// CHECK: %[[DX:[a-z0-9_]+]] = nn.mul %[[Y]], %[[D]]
// CHECK: return %[[DX]]
func.func @forward(%x: tensor<2x5xf32> {nn.name = "x"}) -> (tensor<2x5xf32> {nn.name = "y"}) {
  %0 = nn.softmax %x {axis = 1 : i64} : tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Conv: dX is a ConvTranspose by the same weights (output padding 1: the
// stride skipped the last row and column), dW a grouped conv of the input by
// dy with strides and dilations exchanged, db a sum of dy.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1x4x6x6xf32> {nn.name = "x"}, %[[W:[a-z0-9_]+]]: tensor<2x2x3x3xf32> {nn.name = "w"}, %[[B:[a-z0-9_]+]]: tensor<2xf32> {nn.name = "b"}, %[[DY:[a-z0-9_]+]]: tensor<1x2x2x2xf32> {nn.name = "d_y"})
// CHECK: %[[DX:[a-z0-9_]+]] = nn.conv_transpose %[[DY]], %[[W]] {dilations = array<i64: 1, 1>, group = 2 : i64, output_padding = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x2x2xf32>, tensor<2x2x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK: %[[XG:[a-z0-9_]+]] = nn.reshape %[[X]] : (tensor<1x4x6x6xf32>) -> tensor<1x2x2x6x6xf32>
// CHECK: %[[XT:[a-z0-9_]+]] = nn.transpose %[[XG]] {perm = array<i64: 2, 1, 0, 3, 4>}
// CHECK: %[[XR:[a-z0-9_]+]] = nn.reshape %[[XT]] : (tensor<2x2x1x6x6xf32>) -> tensor<2x2x6x6xf32>
// CHECK: %[[WR:[a-z0-9_]+]] = nn.transpose %[[DY]] {perm = array<i64: 1, 0, 2, 3>}
// CHECK: %[[C:[a-z0-9_]+]] = nn.conv %[[XR]], %[[WR]] {dilations = array<i64: 2, 2>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x2x6x6xf32>, tensor<2x1x2x2xf32>) -> tensor<2x2x4x4xf32>
// CHECK: %[[K:[a-z0-9_]+]] = nn.slice %[[C]] {ends = array<i64: 2, 2, 3, 3>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>}
// CHECK: %[[DW:[a-z0-9_]+]] = nn.transpose %[[K]] {perm = array<i64: 1, 0, 2, 3>} : (tensor<2x2x3x3xf32>) -> tensor<2x2x3x3xf32>
// CHECK: %[[DB:[a-z0-9_]+]] = nn.reduce_sum %[[DY]] {axes = array<i64: 0, 2, 3>, keepdims = false}
// CHECK: return %[[DX]], %[[DW]], %[[DB]]
func.func @forward(%x: tensor<1x4x6x6xf32> {nn.name = "x"}, %w: tensor<2x2x3x3xf32> {nn.name = "w"}, %b: tensor<2xf32> {nn.name = "b"}) -> (tensor<1x2x2x2xf32> {nn.name = "y"}) {
  %0 = nn.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x6x6xf32>, tensor<2x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// LayerNorm recomputes x̂ and 1/σ; the scale's cotangent sums dy x̂ over the
// leading axis.
// CHECK-LABEL: func.func @forward_grad(
// CHECK: nn.reduce_mean
// CHECK: nn.reciprocal
// CHECK: %[[DS:[a-z0-9_]+]] = nn.reduce_sum %{{.*}} {axes = array<i64: 0>, keepdims = true} : (tensor<3x8xf32>) -> tensor<1x8xf32>
// CHECK: nn.reshape %[[DS]] : (tensor<1x8xf32>) -> tensor<8xf32>
func.func @forward(%x: tensor<3x8xf32> {nn.name = "x"}, %s: tensor<8xf32> {nn.name = "s"}) -> (tensor<3x8xf32> {nn.name = "y"}) {
  %0 = nn.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<3x8xf32>, tensor<8xf32>) -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

// Transpose takes the inverse permutation. Integer arguments and results get
// no gradient and no cotangent; an input no output depends on gets zeros.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %{{[a-z0-9_]+}}: tensor<2x3xf32> {nn.name = "x"}, %{{[a-z0-9_]+}}: tensor<2xi64> {nn.name = "i"}, %{{[a-z0-9_]+}}: tensor<3xf32> {nn.name = "z"}, %[[DY:[a-z0-9_]+]]: tensor<3x2xf32> {nn.name = "d_y"})
// CHECK-SAME: -> (tensor<2x3xf32> {nn.name = "d_x"}, tensor<3xf32> {nn.name = "d_z"})
// CHECK: %[[DX:[a-z0-9_]+]] = nn.transpose %[[DY]] {perm = array<i64: 1, 0>}
// CHECK: %[[Z:[a-z0-9_]+]] = nn.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: return %[[DX]], %[[Z]]
func.func @forward(%x: tensor<2x3xf32> {nn.name = "x"}, %i: tensor<2xi64> {nn.name = "i"}, %z: tensor<3xf32> {nn.name = "z"}) -> (tensor<3x2xf32> {nn.name = "y"}, tensor<2xi64> {nn.name = "j"}) {
  %0 = nn.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0, %i : tensor<3x2xf32>, tensor<2xi64>
}

// -----

// An op without a rule that no input reaches is not differentiated.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<4xf32> {nn.name = "x"}, %[[DY:[a-z0-9_]+]]: tensor<4xf32> {nn.name = "d_y"}, %{{[a-z0-9_]+}}: tensor<8xf32> {nn.name = "d_c"})
// CHECK-NOT: nn.resize
// CHECK: %[[E:[a-z0-9_]+]] = nn.exp %[[X]]
// CHECK: %[[DX:[a-z0-9_]+]] = nn.mul %[[DY]], %[[E]]
// CHECK: return %[[DX]]
func.func @forward(%x: tensor<4xf32> {nn.name = "x"}) -> (tensor<4xf32> {nn.name = "y"}, tensor<8xf32> {nn.name = "c"}) {
  %c = nn.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = nn.resize %c {scales = array<f64: 2.0>, roi = array<f64>, mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", cubic_coeff_a = -0.75 : f64, exclude_outside = false, extrapolation_value = 0.0 : f64} : (tensor<4xf32>) -> tensor<8xf32>
  %1 = nn.exp %x : tensor<4xf32>
  return %1, %0 : tensor<4xf32>, tensor<8xf32>
}

// -----

// CumSum's cotangent is the cumulative sum the other way round.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[DY:[a-z0-9_]+]]: tensor<2x5xf32> {nn.name = "d_y"})
// CHECK: %[[DX:[a-z0-9_]+]] = nn.cumsum %[[DY]] {axis = 1 : i64, exclusive = true, reverse = false}
// CHECK: return %[[DX]]
func.func @forward(%x: tensor<2x5xf32> {nn.name = "x"}) -> (tensor<2x5xf32> {nn.name = "y"}) {
  %0 = nn.cumsum %x {axis = 1 : i64, exclusive = true, reverse = true} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// AveragePool: dy times each window's 1/count (a constant: 1/4 here), then
// summed back through the windows by a depthwise ConvTranspose of ones.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[DY:[a-z0-9_]+]]: tensor<1x2x2x2xf32> {nn.name = "d_y"})
// CHECK: %[[INV:[a-z0-9_]+]] = nn.constant dense<2.500000e-01> : tensor<1x1x2x2xf32>
// CHECK: %[[ONES:[a-z0-9_]+]] = nn.constant dense<1.000000e+00> : tensor<2x1x2x2xf32>
// CHECK: %[[S:[a-z0-9_]+]] = nn.mul %[[DY]], %[[INV]]
// CHECK: %[[DX:[a-z0-9_]+]] = nn.conv_transpose %[[S]], %[[ONES]] {dilations = array<i64: 1, 1>, group = 2 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
// CHECK: return %[[DX]]
func.func @forward(%x: tensor<1x2x4x4xf32> {nn.name = "x"}) -> (tensor<1x2x2x2xf32> {nn.name = "y"}) {
  %0 = nn.average_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false, count_include_pad = false} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// Gather: a MatMul of dy by the one-hot matrix of the wrapped indices, so
// repeated indices accumulate.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %{{[a-z0-9_]+}}: tensor<3x2xf32> {nn.name = "x"}, %[[I:[a-z0-9_]+]]: tensor<4xi64> {nn.name = "i"}, %[[DY:[a-z0-9_]+]]: tensor<4x2xf32> {nn.name = "d_y"})
// CHECK-DAG: %[[ROWS:[a-z0-9_]+]] = nn.constant dense<{{\[\[}}0], [1], [2]]> : tensor<3x1xi64>
// CHECK-DAG: %[[FLAT:[a-z0-9_]+]] = nn.reshape %[[I]] : (tensor<4xi64>) -> tensor<1x4xi64>
// CHECK-DAG: %[[NEG:[a-z0-9_]+]] = nn.less %[[FLAT]]
// CHECK-DAG: %[[UP:[a-z0-9_]+]] = nn.add %[[FLAT]]
// CHECK: %[[W:[a-z0-9_]+]] = nn.where %[[NEG]], %[[UP]], %[[FLAT]]
// CHECK: %[[EQ:[a-z0-9_]+]] = nn.equal %[[ROWS]], %[[W]] : (tensor<3x1xi64>, tensor<1x4xi64>) -> tensor<3x4xi1>
// CHECK: %[[HOT:[a-z0-9_]+]] = nn.cast %[[EQ]] : (tensor<3x4xi1>) -> tensor<3x4xf32>
// CHECK: %[[DY3:[a-z0-9_]+]] = nn.reshape %[[DY]] : (tensor<4x2xf32>) -> tensor<1x4x2xf32>
// CHECK: %[[P:[a-z0-9_]+]] = nn.matmul %[[HOT]], %[[DY3]] : (tensor<3x4xf32>, tensor<1x4x2xf32>) -> tensor<1x3x2xf32>
// CHECK: %[[DX:[a-z0-9_]+]] = nn.reshape %[[P]] : (tensor<1x3x2xf32>) -> tensor<3x2xf32>
// CHECK: return %[[DX]]
func.func @forward(%x: tensor<3x2xf32> {nn.name = "x"}, %i: tensor<4xi64> {nn.name = "i"}) -> (tensor<4x2xf32> {nn.name = "y"}) {
  %0 = nn.gather %x, %i {axis = 0 : i64} : (tensor<3x2xf32>, tensor<4xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// Einsum: each input's cotangent is an einsum of dy with the other inputs
// into its term; "j" only the first input has is summed in the forward, so
// its cotangent is broadcast along j.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<2x3xf32> {nn.name = "a"}, %[[B:[a-z0-9_]+]]: tensor<2x4xf32> {nn.name = "b"}, %[[DY:[a-z0-9_]+]]: tensor<4xf32> {nn.name = "d_y"})
// CHECK: %[[DA:[a-z0-9_]+]] = nn.einsum %[[DY]], %[[B]] {equation = "k,ik->i"} : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2xf32>
// CHECK: %[[DA2:[a-z0-9_]+]] = nn.reshape %[[DA]] : (tensor<2xf32>) -> tensor<2x1xf32>
// CHECK: %[[DA3:[a-z0-9_]+]] = nn.expand %[[DA2]] : (tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK: %[[DB:[a-z0-9_]+]] = nn.einsum %[[DY]], %[[A]] {equation = "k,ij->ik"} : (tensor<4xf32>, tensor<2x3xf32>) -> tensor<2x4xf32>
// CHECK: return %[[DA3]], %[[DB]]
func.func @forward(%a: tensor<2x3xf32> {nn.name = "a"}, %b: tensor<2x4xf32> {nn.name = "b"}) -> (tensor<4xf32> {nn.name = "y"}) {
  %0 = nn.einsum %a, %b {equation = "ij,ik->k"} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
