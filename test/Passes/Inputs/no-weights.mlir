// An entry without mutable weights (input of add-optimizer.mlir).
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
