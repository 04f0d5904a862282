// RUN: nncc-opt %s -split-input-file -nncc-outline-kernels -mlir-print-local-scope | FileCheck %s

// Window kernels (WindowKernels.cpp): one generic over (output dims...,
// window dims...), the window dims reductions; taps read the input at
// o * stride - pad + k * dilation, clamped, and only count when in range.

// Max pool 3x3, stride 2, pad 1: a dummy 3x3 tensor carries the window dims.
// CHECK-LABEL: func.func @max_pool_pad
// CHECK: func.func private @k0_max_pool
// CHECK: %[[WIN:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%arg1 : tensor<1x2x2x2xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[WIN]] : tensor<3x3xf32>) outs(%[[ACC]] : tensor<1x2x2x2xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[OUT:.*]]: f32):
// CHECK: %[[OH:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[KH:.*]] = linalg.index 4 : index
// CHECK-NEXT: %[[D:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[KD:.*]] = arith.muli %[[KH]], %[[D]] : index
// CHECK-NEXT: %[[P:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[S:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[OS:.*]] = arith.muli %[[OH]], %[[S]] : index
// CHECK-NEXT: %[[OP:.*]] = arith.subi %[[OS]], %[[P]] : index
// CHECK-NEXT: %[[IH:.*]] = arith.addi %[[OP]], %[[KD]] : index
// CHECK-NEXT: %[[LEN:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[LT:.*]] = arith.cmpi slt, %[[IH]], %[[LEN]] : index
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[GE:.*]] = arith.cmpi sge, %[[IH]], %[[Z]] : index
// CHECK-NEXT: %[[OK:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK-NEXT: %[[VALID0:.*]] = arith.andi %true, %[[OK]] : i1
// CHECK: %[[HLO:.*]] = arith.maxsi %[[IH]], %{{.*}} : index
// CHECK-NEXT: %[[MAX:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[HC:.*]] = arith.minsi %[[HLO]], %[[MAX]] : index
// CHECK: %[[VALID:.*]] = arith.andi %[[VALID0]], %{{.*}} : i1
// CHECK: %[[WC:.*]] = arith.minsi
// CHECK-NEXT: %[[V:.*]] = tensor.extract %arg0[%{{.*}}, %{{.*}}, %[[HC]], %[[WC]]] : tensor<1x2x4x4xf32>
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[V]], %[[OUT]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.select %[[VALID]], %[[M]], %[[OUT]] : f32
// CHECK-NEXT: linalg.yield %[[R]]
func.func @max_pool_pad(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %0 = nn.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// Average pool without count_include_pad sums and counts the valid taps
// only, then divides.
// CHECK-LABEL: func.func @average_pool
// CHECK: func.func private @k0_average_pool
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[SUM:.*]]: f32, %[[CNT:.*]]: f32):
// CHECK: %[[VALID0:.*]] = arith.andi %true, %{{.*}} : i1
// CHECK: %[[VALID:.*]] = arith.andi %[[VALID0]], %{{.*}} : i1
// CHECK: %[[V:.*]] = tensor.extract %arg0
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[SUM]], %[[V]] : f32
// CHECK-NEXT: %[[NS:.*]] = arith.select %[[VALID]], %[[A]], %[[SUM]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.addf %[[CNT]], %[[ONE]] : f32
// CHECK-NEXT: %[[NC:.*]] = arith.select %[[VALID]], %[[C]], %[[CNT]] : f32
// CHECK-NEXT: linalg.yield %[[NS]], %[[NC]] : f32, f32
// CHECK: linalg.generic {{.*}} ins(%[[R]]#0, %[[R]]#1 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%arg1 : tensor<1x2x4x4xf32>)
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %[[N:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT: linalg.yield %[[Q]]
func.func @average_pool(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %0 = nn.average_pool %x {ceil_mode = false, count_include_pad = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// A grouped convolution in direct form iterates (n, m, c, kh, kw, oh, ow)
// over the weights; the input channel is (m / (M/G)) * (C/G) + c.
// CHECK-LABEL: func.func @conv_grouped
// CHECK: func.func private @k0_conv
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%arg2 : tensor<1x6x6x6xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d5, d6)>], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%arg1 : tensor<6x2x3x3xf32>) outs(%[[ACC]] : tensor<1x6x6x6xf32>)
// CHECK-NEXT: ^bb0(%[[W:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[C:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[MPG:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[G:.*]] = arith.divui %[[M]], %[[MPG]] : index
// CHECK-NEXT: %[[CPG:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[GC:.*]] = arith.muli %[[G]], %[[CPG]] : index
// CHECK-NEXT: %[[IC:.*]] = arith.addi %[[GC]], %[[C]] : index
// CHECK: %[[VALID0:.*]] = arith.andi %true, %{{.*}} : i1
// CHECK: %[[VALID:.*]] = arith.andi %[[VALID0]], %{{.*}} : i1
// CHECK: %[[V:.*]] = tensor.extract %arg0[%{{.*}}, %[[IC]], %{{.*}}, %{{.*}}] : tensor<1x4x8x8xf32>
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[V]], %[[W]] : f32
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[OUT]], %[[P]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.select %[[VALID]], %[[A]], %[[OUT]] : f32
// CHECK-NEXT: linalg.yield %[[R]]
func.func @conv_grouped(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

// A dot product of two vectors (MatMul of rank 1 by rank 1, a rank-0
// result): one reduction loop writing the scalar (this crashed on a null
// output map).
// CHECK-LABEL: func.func private @k0_matmul
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
func.func @dot(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<f32> {
  %y = nn.matmul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %y : tensor<f32>
}
