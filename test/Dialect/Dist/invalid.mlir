// RUN: nncc-opt %s -split-input-file -verify-diagnostics

func.func @reduction(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{reduction must be 'sum' or 'mean', not 'prod'}}
  %r = dist.all_reduce %a {group_size = 2 : i64, reduction = "prod"} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @group(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{group_size must be at least 1}}
  %r = dist.all_reduce %a {group_size = 0 : i64, reduction = "sum"} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @group_name(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{group must be 'data', 'tensor' or 'pipeline', not 'stage'}}
  %r = dist.all_reduce %a {group = "stage", group_size = 2 : i64, reduction = "sum"} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @types(%a: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{results must have the operands' types}}
  %r = dist.all_reduce %a {group_size = 2 : i64, reduction = "sum"} : (tensor<4xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

func.func @step_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error @+1 {{operands must be statically shaped f32 tensors, got 'tensor<4xf16>'}}
  %0 = dist.all_reduce_step %x {group_size = 2 : i64, reduction = "sum"} : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @step_reduction(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{reduction must be 'sum' or 'mean', not 'max'}}
  %0 = dist.all_reduce_step %x {group_size = 2 : i64, reduction = "max"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_dim(%a: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{result dim 1 must be 6 (operand 'tensor<4x3xf32>', group_size 2), got 'tensor<4x3xf32>'}}
  %r = dist.all_gather %a {axis = 1 : i64, group_size = 2 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

func.func @gather_other_dim(%a: tensor<4x3xf32>) -> tensor<8x6xf32> {
  // expected-error @+1 {{result dim 1 must be 3}}
  %r = dist.all_gather %a {axis = 0 : i64, group_size = 2 : i64} : (tensor<4x3xf32>) -> tensor<8x6xf32>
  return %r : tensor<8x6xf32>
}

// -----

func.func @gather_axis(%a: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{axis 2 is not an axis of 'tensor<4x3xf32>'}}
  %r = dist.all_gather %a {axis = 2 : i64, group_size = 2 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

func.func @gather_element(%a: tensor<4xf32>) -> tensor<8xf16> {
  // expected-error @+1 {{result must have the operand's element type and rank}}
  %r = dist.all_gather %a {axis = 0 : i64, group_size = 2 : i64} : (tensor<4xf32>) -> tensor<8xf16>
  return %r : tensor<8xf16>
}

// -----

func.func @scatter_divides(%a: tensor<5x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{operand dim 5 along axis 0 does not divide by group_size 2}}
  %r = dist.reduce_scatter %a {axis = 0 : i64, group_size = 2 : i64, reduction = "sum"} : (tensor<5x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

func.func @scatter_dim(%a: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{result dim 0 must be 2}}
  %r = dist.reduce_scatter %a {axis = 0 : i64, group_size = 2 : i64, reduction = "sum"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

func.func @scatter_reduction(%a: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{reduction must be 'sum' or 'mean', not 'max'}}
  %r = dist.reduce_scatter %a {axis = 0 : i64, group_size = 2 : i64, reduction = "max"} : (tensor<4xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

func.func @broadcast_root(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{root 2 is not a rank of a group of 2}}
  %r = dist.broadcast %a {group_size = 2 : i64, root = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @broadcast_type(%a: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{result dim 0 must be 4}}
  %r = dist.broadcast %a {group_size = 2 : i64, root = 0 : i64} : (tensor<4xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

func.func @broadcast_group(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{group must be 'data', 'tensor' or 'pipeline', not 'stage'}}
  %r = dist.broadcast %a {group = "stage", group_size = 2 : i64, root = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @gather_step_contiguous(%a: tensor<2x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{every dim before axis 1 must be 1 (contiguous parts), got 'tensor<2x4xf32>'}}
  %r = dist.all_gather_step %a {axis = 1 : i64, group_size = 2 : i64} : (tensor<2x4xf32>) -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

func.func @scatter_step_f32(%a: tensor<4xf16>) -> tensor<2xf16> {
  // expected-error @+1 {{operand must be f32 (what the runtime's communicators reduce), got 'tensor<4xf16>'}}
  %r = dist.reduce_scatter_step %a {axis = 0 : i64, group_size = 2 : i64, reduction = "sum"} : (tensor<4xf16>) -> tensor<2xf16>
  return %r : tensor<2xf16>
}

// -----

func.func @broadcast_step_static(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{operand and result must be statically shaped}}
  %r = dist.broadcast_step %a {group_size = 2 : i64, root = 0 : i64} : (tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
