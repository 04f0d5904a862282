// RUN: nncc-opt %s -split-input-file -nncc-outline-kernels -mlir-print-local-scope | FileCheck %s

// Reduction kernels (ReductionKernels.cpp): a filled accumulator, a generic
// with reduction iterators on the reduced axes, then a copy (or the final
// scaling) into the kernel's destination. Reductions over the trailing axis
// of f32 tensors are row kernels instead (kernels-row.mlir).

// CHECK-LABEL: func.func @reduce_sum_middle
// CHECK: func.func private @k0_reduce_sum
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x1x4xf32>
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<2x1x4xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg0 : tensor<2x3x4xf32>) outs(%[[ACC]] : tensor<2x1x4xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[A:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[A]] : f32
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<2x1x4xf32>) outs(%arg1 : tensor<2x1x4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]]
func.func @reduce_sum_middle(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %0 = nn.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  return %0 : tensor<2x1x4xf32>
}

// -----

// An integer max starts from the type's lowest value; reduced axes without
// keepdims vanish from the output map.
// CHECK-LABEL: func.func @reduce_max_i32
// CHECK: func.func private @k0_reduce_max
// CHECK: %[[LOW:.*]] = arith.constant -2147483648 : i32
// CHECK: linalg.fill ins(%[[LOW]] : i32) outs(%{{.*}} : tensor<3xi32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK-NEXT: ^bb0(%[[X:.*]]: i32, %[[A:.*]]: i32):
// CHECK-NEXT: arith.maxsi %[[X]], %[[A]] : i32
func.func @reduce_max_i32(%x: tensor<2x3x4xi32>) -> tensor<3xi32> {
  %0 = nn.reduce_max %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// A mean divides the sum by the reduced element count (3) on the way out.
// CHECK-LABEL: func.func @reduce_mean_middle
// CHECK: func.func private @k0_reduce_mean
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<2x4xf32>) outs(%arg1 : tensor<2x4xf32>)
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[N:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: %[[M:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT: linalg.yield %[[M]]
func.func @reduce_mean_middle(%x: tensor<2x3x4xf32>) -> tensor<2x4xf32> {
  %0 = nn.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// ArgMax carries (best value, index) from (-inf, -1); the strict ogt keeps
// the first maximum, and the first element always wins (all-NaN rows).
// CHECK-LABEL: func.func @arg_max
// CHECK: func.func private @k0_arg_max
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[BEST:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<2x1x4xf32>)
// CHECK: %[[M1:.*]] = arith.constant -1 : i64
// CHECK: %[[IDX:.*]] = linalg.fill ins(%[[M1]] : i64) outs(%{{.*}} : tensor<2x1x4xi64>)
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg0 : tensor<2x3x4xf32>) outs(%[[BEST]], %[[IDX]] : tensor<2x1x4xf32>, tensor<2x1x4xi64>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[CUR:.*]]: f32, %[[CI:.*]]: i64):
// CHECK-NEXT: %[[I:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT: %[[GT:.*]] = arith.cmpf ogt, %[[X]], %[[CUR]] : f32
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi slt, %[[CI]], %[[Z]] : i64
// CHECK-NEXT: %[[TAKE:.*]] = arith.ori %[[GT]], %[[FIRST]] : i1
// CHECK-NEXT: %[[V:.*]] = arith.select %[[TAKE]], %[[X]], %[[CUR]] : f32
// CHECK-NEXT: %[[NI:.*]] = arith.select %[[TAKE]], %[[I64]], %[[CI]] : i64
// CHECK-NEXT: linalg.yield %[[V]], %[[NI]] : f32, i64
// CHECK: linalg.generic {{.*}} ins(%[[R]]#1 : tensor<2x1x4xi64>) outs(%arg1 : tensor<2x1x4xi64>)
func.func @arg_max(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xi64> {
  %0 = nn.arg_max %x {axis = 1 : i64, keepdims = true, select_last_index = false} : (tensor<2x3x4xf32>) -> tensor<2x1x4xi64>
  return %0 : tensor<2x1x4xi64>
}

// -----

// select_last_index turns the comparison into oge.
// CHECK-LABEL: func.func @arg_min_last
// CHECK: func.func private @k0_arg_min
// CHECK: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: linalg.fill ins(%[[INF]] : f32)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
// CHECK: linalg.index 1 : index
// CHECK: arith.cmpf ole,
func.func @arg_min_last(%x: tensor<2x3xf32>) -> tensor<2xi64> {
  %0 = nn.arg_min %x {axis = 1 : i64, keepdims = false, select_last_index = true} : (tensor<2x3xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// CumSum iterates (output index, j) with j a reduction over the axis:
// out[.., i] += x[.., j] where j >= i for a reverse scan.
// CHECK-LABEL: func.func @cumsum_reverse
// CHECK: func.func private @k0_cumsum
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%arg1 : tensor<2x4xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<2x4xf32>) outs(%[[ACC]] : tensor<2x4xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[A:.*]]: f32):
// CHECK-NEXT: %[[I:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[TAKE:.*]] = arith.cmpi uge, %[[J]], %[[I]] : index
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[A]], %[[X]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.select %[[TAKE]], %[[S]], %[[A]] : f32
// CHECK-NEXT: linalg.yield %[[R]]
func.func @cumsum_reverse(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = nn.cumsum %x {axis = 1 : i64, exclusive = false, reverse = true} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// An exclusive forward scan takes j < i.
// CHECK-LABEL: func.func @cumsum_exclusive
// CHECK: func.func private @k0_cumsum
// CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : index
func.func @cumsum_exclusive(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.cumsum %x {axis = 0 : i64, exclusive = true, reverse = false} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Softmax over a non-trailing axis: max, exp(x - max) summed, exp / sum.
// CHECK-LABEL: func.func @softmax_middle
// CHECK: func.func private @k0_softmax
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MX0:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<2x1x4xf32>)
// CHECK: %[[MX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg0 : tensor<2x3x4xf32>) outs(%[[MX0]] : tensor<2x1x4xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SH:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %[[MX]] : tensor<2x3x4xf32>, tensor<2x1x4xf32>)
// CHECK: arith.subf
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[SH]] : tensor<2x3x4xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[A:.*]]: f32):
// CHECK-NEXT: %[[E:.*]] = math.exp %[[X]]
// CHECK-NEXT: arith.addf %[[E]], %[[A]]
// CHECK: linalg.generic {{.*}} ins(%[[SH]], %[[SUM]] : tensor<2x3x4xf32>, tensor<2x1x4xf32>) outs(%arg1 : tensor<2x3x4xf32>)
// CHECK-NEXT: ^bb0(%[[Y:.*]]: f32, %[[T:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[EY:.*]] = math.exp %[[Y]]
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[EY]], %[[T]]
// CHECK-NEXT: linalg.yield %[[Q]]
func.func @softmax_middle(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = nn.softmax %x {axis = 1 : i64} : tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
