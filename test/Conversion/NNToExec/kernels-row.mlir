// RUN: nncc-opt %s -split-input-file -nncc-outline-kernels -mlir-print-local-scope | FileCheck %s

// Row kernels (RowKernels.cpp): f32 softmax / layer norm / reductions over
// the trailing axis become one scf.forall over the rows, each row's
// statistics scalar scf.for loops, the row written by a 1-D generic.

// Softmax over the last axis: row max, sum of exp(x - max), exp(x - max) / sum.
// CHECK-LABEL: func.func @softmax_last
// CHECK: func.func private @k0_softmax
// CHECK: scf.forall (%[[ROW:.*]]) in (2) shared_outs(%[[OUT:.*]] = %arg1) -> (tensor<2x8xf32>)
// CHECK-NEXT: %[[SLICE:.*]] = tensor.extract_slice %[[OUT]][%[[ROW]], 0] [1, 8] [1, 1] : tensor<2x8xf32> to tensor<8xf32>
// CHECK-NEXT: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MAX:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[NINF]]) -> (f32)
// CHECK-NEXT: %[[X:.*]] = tensor.extract %arg0[%[[ROW]], %[[I]]] : tensor<2x8xf32>
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[X]], %[[A]] : f32
// CHECK-NEXT: scf.yield %[[M]]
// CHECK: %[[SUM:.*]] = scf.for %[[J:.*]] = {{.*}} iter_args(%[[B:.*]] = %{{.*}}) -> (f32)
// CHECK-NEXT: %[[Y:.*]] = tensor.extract %arg0[%[[ROW]], %[[J]]] : tensor<2x8xf32>
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[Y]], %[[MAX]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[E]], %[[B]] : f32
// CHECK-NEXT: scf.yield %[[S]]
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%[[SLICE]] : tensor<8xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: %[[K:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[Z:.*]] = tensor.extract %arg0[%[[ROW]], %[[K]]] : tensor<2x8xf32>
// CHECK-NEXT: %[[ZD:.*]] = arith.subf %[[Z]], %[[MAX]] : f32
// CHECK-NEXT: %[[ZE:.*]] = math.exp %[[ZD]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[ZE]], %[[SUM]] : f32
// CHECK-NEXT: linalg.yield %[[Q]]
// CHECK: tensor.parallel_insert_slice %[[R]] into %[[OUT]][%[[ROW]], 0] [1, 8] [1, 1] : tensor<8xf32> into tensor<2x8xf32>
func.func @softmax_last(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = nn.softmax %x {axis = 1 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Layer norm: mean, then the variance of the centred row (two passes),
// then (x - mean) / sqrt(var + eps) * scale + bias.
// CHECK-LABEL: func.func @layer_norm
// CHECK: func.func private @k0_layer_norm
// CHECK: scf.forall (%[[ROW:.*]]) in (2)
// CHECK: %[[S1:.*]] = scf.for
// CHECK: arith.addf
// CHECK: %[[N:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-NEXT: %[[MEAN:.*]] = arith.divf %[[S1]], %[[N]] : f32
// CHECK: %[[S2:.*]] = scf.for %{{.*}} iter_args(%[[A:.*]] = %{{.*}}) -> (f32)
// CHECK-NEXT: %[[X:.*]] = tensor.extract %arg0
// CHECK-NEXT: %[[C:.*]] = arith.subf %[[X]], %[[MEAN]] : f32
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[C]], %[[C]] : f32
// CHECK-NEXT: %[[ACC:.*]] = arith.addf %[[SQ]], %[[A]] : f32
// CHECK-NEXT: scf.yield %[[ACC]]
// CHECK: %[[N2:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-NEXT: %[[VAR:.*]] = arith.divf %[[S2]], %[[N2]] : f32
// CHECK-NEXT: %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK-NEXT: %[[VE:.*]] = arith.addf %[[VAR]], %[[EPS]] : f32
// CHECK-NEXT: %[[SD:.*]] = math.sqrt %[[VE]] : f32
// CHECK: linalg.generic
// CHECK: %[[K:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[Y:.*]] = tensor.extract %arg0[%[[ROW]], %[[K]]] : tensor<2x8xf32>
// CHECK-NEXT: %[[YC:.*]] = arith.subf %[[Y]], %[[MEAN]] : f32
// CHECK-NEXT: %[[YN:.*]] = arith.divf %[[YC]], %[[SD]] : f32
// CHECK-NEXT: %[[SC:.*]] = tensor.extract %arg1[%[[K]]] : tensor<8xf32>
// CHECK-NEXT: %[[YS:.*]] = arith.mulf %[[YN]], %[[SC]] : f32
// CHECK-NEXT: %[[BI:.*]] = tensor.extract %arg2[%[[K]]] : tensor<8xf32>
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[YS]], %[[BI]] : f32
// CHECK-NEXT: linalg.yield %[[R]]
func.func @layer_norm(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = nn.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// A trailing f32 reduce_sum: one scalar loop per row, stored as a 0-d slice.
// CHECK-LABEL: func.func @reduce_sum_last
// CHECK: func.func private @k0_reduce_sum
// CHECK: scf.forall (%[[ROW:.*]]) in (2) shared_outs(%[[OUT:.*]] = %arg1) -> (tensor<2x1xf32>)
// CHECK-NEXT: %[[SLICE:.*]] = tensor.extract_slice %[[OUT]][%[[ROW]], 0] [1, 1] [1, 1] : tensor<2x1xf32> to tensor<f32>
// CHECK: %[[SUM:.*]] = scf.for %[[I:.*]] = {{.*}} iter_args(%[[A:.*]] = %{{.*}}) -> (f32)
// CHECK-NEXT: %[[X:.*]] = tensor.extract %arg0[%[[ROW]], %[[I]]] : tensor<2x8xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[A]] : f32
// CHECK-NEXT: scf.yield %[[S]]
// CHECK: linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%[[SLICE]] : tensor<f32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[SUM]] : f32
func.func @reduce_sum_last(%x: tensor<2x8xf32>) -> tensor<2x1xf32> {
  %0 = nn.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}
