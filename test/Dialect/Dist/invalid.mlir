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
