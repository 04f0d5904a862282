// RUN: nncc-opt %s -split-input-file -nncc-outline-kernels -mlir-print-local-scope | FileCheck %s

// Elementwise kernels (ElementwiseKernels.cpp): one parallel linalg.generic,
// broadcast operands read through maps that drop or pin their missing dims.

// CHECK-LABEL: func.func @add_broadcast
// CHECK: func.func private @k0_add(%arg0: tensor<2x3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<2x3xf32> {bufferization.writable = true})
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%arg0, %arg1 : tensor<2x3xf32>, tensor<3xf32>) outs(%arg2 : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT: linalg.yield %[[S]]
func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = nn.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A signed integer to float cast is sitofp.
// CHECK-LABEL: func.func @cast_i64_f32
// CHECK: func.func private @k0_cast
// CHECK: ^bb0(%[[X:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT: %[[Y:.*]] = arith.sitofp %[[X]] : i64 to f32
// CHECK-NEXT: linalg.yield %[[Y]] : f32
func.func @cast_i64_f32(%a: tensor<3xi64>) -> tensor<3xf32> {
  %0 = nn.cast %a : (tensor<3xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Where selects condition ? x : y; a size-1 dim broadcasts as the constant 0.
// CHECK-LABEL: func.func @where
// CHECK: func.func private @k0_where
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[C:.*]]: i1, %[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.select %[[C]], %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[R]]
func.func @where(%t: tensor<2x3xi1>, %a: tensor<3xf32>, %b: tensor<2x1xf32>) -> tensor<2x3xf32> {
  %0 = nn.where %t, %a, %b : (tensor<2x3xi1>, tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Clip is min(max(x, lo), hi) with scalar bounds read through rank-0 maps.
// CHECK-LABEL: func.func @clip
// CHECK: func.func private @k0_clip
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[LO:.*]]: f32, %[[HI:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[X]], %[[LO]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.minimumf %[[M]], %[[HI]] : f32
// CHECK-NEXT: linalg.yield %[[R]]
func.func @clip(%x: tensor<4xf32>, %lo: tensor<f32>, %hi: tensor<f32>) -> tensor<4xf32> {
  %0 = nn.clip %x, %lo, %hi : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Unsigned operands become signless in the kernel and use unsigned arith.
// CHECK-LABEL: func.func @div_ui
// CHECK: func.func private @k0_div(%arg0: tensor<4xi8>, %arg1: tensor<4xi8>, %arg2: tensor<4xi8> {bufferization.writable = true})
// CHECK: ^bb0(%[[A:.*]]: i8, %[[B:.*]]: i8, %{{.*}}: i8):
// CHECK-NEXT: arith.divui %[[A]], %[[B]] : i8
func.func @div_ui(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
  %0 = nn.div %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// Sigmoid is 1 / (1 + exp(-x)).
// CHECK-LABEL: func.func @sigmoid
// CHECK: func.func private @k0_sigmoid
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[X]]
// CHECK-NEXT: %[[E:.*]] = math.exp %[[N]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[ONE]], %[[E]]
// CHECK-NEXT: %[[ONE2:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[ONE2]], %[[D]]
// CHECK-NEXT: linalg.yield %[[R]]
func.func @sigmoid(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.sigmoid %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Batch norm reads its four parameters along axis 1:
// (x - mean) / sqrt(var + eps) * scale + bias.
// CHECK-LABEL: func.func @batch_norm
// CHECK: func.func private @k0_batch_norm
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[SCALE:.*]]: f32, %[[BIAS:.*]]: f32, %[[MEAN:.*]]: f32, %[[VAR:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK-NEXT: %[[VE:.*]] = arith.addf %[[VAR]], %[[EPS]]
// CHECK-NEXT: %[[SD:.*]] = math.sqrt %[[VE]]
// CHECK-NEXT: %[[C:.*]] = arith.subf %[[X]], %[[MEAN]]
// CHECK-NEXT: %[[N:.*]] = arith.divf %[[C]], %[[SD]]
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[N]], %[[SCALE]]
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[M]], %[[BIAS]]
// CHECK-NEXT: linalg.yield %[[R]]
func.func @batch_norm(%x: tensor<1x4x2x2xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<1x4x2x2xf32> {
  %0 = nn.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f64} : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  return %0 : tensor<1x4x2x2xf32>
}

// -----

// The trigonometric functions are their math ops (libm on the host, libdevice
// on the GPU), in the element type.
// CHECK-LABEL: func.func @trig
// CHECK: func.func private @k0_sin
// CHECK: math.sin %{{.*}} : f32
// CHECK: func.func private @k0_cos
// CHECK: math.cos %{{.*}} : f32
// CHECK: func.func private @k0_tan
// CHECK: math.tan %{{.*}} : f64
// CHECK: func.func private @k0_asin
// CHECK: math.asin %{{.*}} : f32
// CHECK: func.func private @k0_acos
// CHECK: math.acos %{{.*}} : f32
// CHECK: func.func private @k0_atan
// CHECK: math.atan %{{.*}} : f64
func.func @trig(%x: tensor<4xf32>, %d: tensor<3xf64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<3xf64>, tensor<4xf32>, tensor<4xf32>, tensor<3xf64>) {
  %0 = nn.sin %x : tensor<4xf32>
  %1 = nn.cos %x : tensor<4xf32>
  %2 = nn.tan %d : tensor<3xf64>
  %3 = nn.asin %x : tensor<4xf32>
  %4 = nn.acos %x : tensor<4xf32>
  %5 = nn.atan %d : tensor<3xf64>
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<3xf64>, tensor<4xf32>, tensor<4xf32>, tensor<3xf64>
}
