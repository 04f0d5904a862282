// RUN: nncc-opt %s -nncc-plan | nncc-translate --nncc-plan-to-c | FileCheck %s

// A module without nncc.parallel is laid out as its collective steps'
// groups say, whatever their kind: here a tensor group of 4 from an
// all-gather alone.
// CHECK: [NNCC_COLLECTIVE_OP] = NNCC_COLLECTIVE_ALL_GATHER, {{.*}}[NNCC_COLLECTIVE_GROUP_SIZE] = 4, [NNCC_COLLECTIVE_GROUP] = NNCC_GROUP_TENSOR
// CHECK: .data_parallel = 1,
// CHECK-NEXT: .tensor_parallel = 4,
func.func @gather(%x: tensor<2xf32> {nn.name = "x"}) -> (tensor<8xf32> {nn.name = "y"}) {
  %y = dist.all_gather_step %x {axis = 0 : i64, group = "tensor", group_size = 4 : i64} : (tensor<2xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}
