// Inconsistent parallel contracts the plan translation refuses (plan-parallel.mlir).

module attributes {nncc.parallel = array<i64: 0, 2>} {
}

// -----

module attributes {nncc.parallel = array<i64: 1, 2>} {
  ml_program.global private mutable @w(dense<1.0> : tensor<2x6xf32>) : tensor<2x2xf32> {nncc.shard = array<i64: 1, 3>}
}

// -----

module attributes {nncc.parallel = array<i64: 1, 2>} {
  ml_program.global private mutable @w(dense<1.0> : tensor<2x2xf32>) : tensor<2x2xf32> {nncc.shard = array<i64: 1, 2>}
}

// -----

module attributes {nncc.parallel = array<i64: 2, 2>} {
  func.func @f(%x: tensor<4xf32> {nn.name = "x"}) -> (tensor<4xf32> {nn.name = "y"}) {
    %y = dist.all_reduce_step %x {group = "tensor", group_size = 4 : i64, reduction = "sum"} : (tensor<4xf32>) -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

module attributes {nncc.parallel = array<i64: 1, 1, 2>} {
  func.func @f(%x: tensor<4xf32> {nn.name = "x"}) -> (tensor<4xf32> {nn.name = "y"}) {
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {nncc.parallel = array<i64: 1, 1, 2>} {
  func.func @f.stage2(%x: tensor<4xf32> {nn.name = "x"}) -> (tensor<4xf32> {nn.name = "y"}) attributes {nncc.pipeline_stage = 2 : i64} {
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {nncc.parallel = array<i64: 1, 1, 2>} {
  func.func @f.stage0(%x: tensor<4xf32> {nn.name = "x"}) -> (tensor<4xf32> {nn.name = "y"}) attributes {nncc.pipeline_stage = 0 : i64} {
    dist.send %x {group_size = 3 : i64, peer = 1 : i64} : tensor<4xf32>
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {nncc.parallel = array<i64: 1, 1, 2>} {
  ml_program.global private mutable @w(dense<1.0> : tensor<2xf32>) : tensor<2xf32> {nncc.pipeline_stage = 2 : i64}
}
