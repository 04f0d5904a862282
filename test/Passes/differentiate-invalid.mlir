// RUN: nncc-opt %s -nncc-differentiate -split-input-file -verify-diagnostics

// An op on a path from an input to an output without a gradient rule: the
// error names the ONNX node and the op.
func.func @forward(%x: tensor<f32> {nn.name = "x"}) -> (tensor<4xf32> {nn.name = "y"}) {
  %0 = nn.exp %x : tensor<f32>
  %limit = nn.constant dense<9.0> : tensor<f32>
  %delta = nn.constant dense<2.0> : tensor<f32>
  // expected-error@unknown {{node 'positions' (nn.range): no gradient rule for this op}}
  %1 = nn.range %0, %limit, %delta : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<4xf32> loc("positions")
  return %1 : tensor<4xf32>
}

// -----

// Resize's rule refuses tf_crop_and_resize: its extrapolated values are
// constants, not a linear map of the input.
func.func @forward(%x: tensor<4xf32> {nn.name = "x"}) -> (tensor<6xf32> {nn.name = "y"}) {
  // expected-error@+1 {{gradient: tf_crop_and_resize is not differentiable here}}
  %0 = nn.resize %x {scales = array<f64: 1.5>, roi = array<f64: 0.1, 0.9>, mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize", nearest_mode = "floor", cubic_coeff_a = -0.75 : f64, exclude_outside = false, extrapolation_value = 0.0 : f64} : (tensor<4xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// Einsum's rule has no diagonal (a letter repeated in one term).
func.func @forward(%x: tensor<3x3xf32> {nn.name = "x"}) -> (tensor<3xf32> {nn.name = "y"}) {
  // expected-error@+1 {{gradient: a letter repeated in 'ii' (a diagonal) has no rule}}
  %0 = nn.einsum %x {equation = "ii->i"} : (tensor<3x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// A rule that cannot handle the op's form says why.
func.func @forward(%x: tensor<2x3xf32> {nn.name = "x"}, %axes: tensor<1xi64> {nn.name = "axes"}) -> (tensor<1x3xf32> {nn.name = "y"}) {
  // expected-error@+1 {{gradient: the reduced axes must be known at compile time}}
  %0 = nn.reduce_sum %x, %axes {keepdims = true} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

// Rules work out shapes at compile time.
func.func @forward(%x: tensor<2x3xf32> {nn.name = "x"}, %n: tensor<2xi64> {nn.name = "n"}) -> (tensor<?x?xf32> {nn.name = "y"}) {
  // expected-error@unknown {{node 'flex' (nn.reshape): gradients need static shapes (fix the input dims with --shape)}}
  %0 = nn.reshape %x, %n : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32> loc("flex")
  return %0 : tensor<?x?xf32>
}

// -----

// expected-error@+1 {{nncc-differentiate: 'x' has a dynamic shape; gradients need static ones (fix the dims with --shape)}}
func.func @forward(%x: tensor<?x3xf32> {nn.name = "x"}) -> (tensor<?x3xf32> {nn.name = "y"}) {
  %0 = nn.tanh %x : tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// expected-error@+1 {{nncc-differentiate: no function 'forward' to differentiate}}
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// The single-value collectives have rules over the tensor group only, where
// the cotangent of a replicated value is the same on every rank.
func.func @forward(%x: tensor<4xf32> {nn.name = "x"}) -> (tensor<8xf32> {nn.name = "y"}) {
  // expected-error@+1 {{gradient: only a collective over the tensor group has a rule, not one over the data group}}
  %0 = dist.all_gather %x {axis = 0 : i64, group = "data", group_size = 2 : i64} : (tensor<4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @forward(%x: tensor<4xf32> {nn.name = "x"}) -> (tensor<2xf32> {nn.name = "y"}) {
  // expected-error@+1 {{gradient: only a sum has a rule, not a mean}}
  %0 = dist.reduce_scatter %x {axis = 0 : i64, group = "tensor", group_size = 2 : i64, reduction = "mean"} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
