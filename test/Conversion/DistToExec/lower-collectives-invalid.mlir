// RUN: nncc-opt %s -split-input-file -nncc-lower-collectives -verify-diagnostics

// A step exchanges contiguous bytes: a gather or scatter along an axis with
// a dim before it that is not 1 is refused, naming how to fix it.
func.func @gather_inner(%a: tensor<2x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{cannot be lowered: along axis 1 of 'tensor<2x4xf32>' the ranks' parts are not contiguous (every dim before the axis must be 1; move the axis outermost first)}}
  %g = dist.all_gather %a {axis = 1 : i64, group_size = 2 : i64} : (tensor<2x4xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

func.func @scatter_inner(%a: tensor<3x4xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{cannot be lowered: along axis 1 of 'tensor<3x4xf32>'}}
  %s = dist.reduce_scatter %a {axis = 1 : i64, group_size = 2 : i64, reduction = "sum"} : (tensor<3x4xf32>) -> tensor<3x2xf32>
  return %s : tensor<3x2xf32>
}
