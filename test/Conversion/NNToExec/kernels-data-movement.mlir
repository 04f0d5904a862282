// RUN: nncc-opt %s -split-input-file -nncc-outline-kernels -mlir-print-local-scope | FileCheck %s

// Data-movement kernels (DataMovementKernels.cpp): permutations are
// indexing maps; index-computed reads are a generic over the output with
// tensor.extract at clamped source coordinates.

// A transpose reads the input through the inverse permutation.
// CHECK-LABEL: func.func @transpose
// CHECK: func.func private @k0_transpose
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2, d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<2x3x4xf32>) outs(%arg1 : tensor<4x2x3xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[X]]
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = nn.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// A strided slice reads x[i * 1 + 0, j * 2 + 1].
// CHECK-LABEL: func.func @slice
// CHECK: func.func private @k0_slice
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%arg1 : tensor<4x3xf32>)
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: %[[S0:.*]] = arith.constant 0 : index
// CHECK: %[[T0:.*]] = arith.constant 1 : index
// CHECK: %[[M0:.*]] = arith.muli %[[I]], %[[T0]]
// CHECK: %[[R0:.*]] = arith.addi %[[M0]], %[[S0]]
// CHECK: %[[S1:.*]] = arith.constant 1 : index
// CHECK: %[[T1:.*]] = arith.constant 2 : index
// CHECK: %[[M1:.*]] = arith.muli %[[J]], %[[T1]]
// CHECK: %[[R1:.*]] = arith.addi %[[M1]], %[[S1]]
// CHECK: %[[V:.*]] = tensor.extract %arg0[%[[R0]], %[[R1]]] : tensor<4x6xf32>
// CHECK: linalg.yield %[[V]]
func.func @slice(%x: tensor<4x6xf32>) -> tensor<4x3xf32> {
  %0 = nn.slice %x {ends = array<i64: 4, 6>, starts = array<i64: 0, 1>, steps = array<i64: 1, 2>} : (tensor<4x6xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// A concat inserts each input at its running offset along the axis.
// CHECK-LABEL: func.func @concat
// CHECK: func.func private @k0_concat
// CHECK: %[[A:.*]] = tensor.insert_slice %arg0 into %arg2[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x8xf32>
// CHECK: %[[B:.*]] = tensor.insert_slice %arg1 into %[[A]][0, 3] [2, 5] [1, 1] : tensor<2x5xf32> into tensor<2x8xf32>
// CHECK: return %[[B]]
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %0 = nn.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// A gather wraps negative indices (+5) and clamps into [0, 4].
// CHECK-LABEL: func.func @gather
// CHECK: func.func private @k0_gather
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: %[[K:.*]] = tensor.extract %arg1[%[[I]]] : tensor<2xi64>
// CHECK: %[[KI:.*]] = arith.index_cast %[[K]] : i64 to index
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[KI]], %{{.*}} : index
// CHECK: %[[N:.*]] = arith.constant 5 : index
// CHECK: %[[W:.*]] = arith.addi %[[KI]], %[[N]]
// CHECK: %[[SEL:.*]] = arith.select %[[NEG]], %[[W]], %[[KI]]
// CHECK: %[[LO:.*]] = arith.maxsi %[[SEL]], %{{.*}} : index
// CHECK: %[[HI:.*]] = arith.constant 4 : index
// CHECK: %[[C:.*]] = arith.minsi %[[LO]], %[[HI]]
// CHECK: %[[V:.*]] = tensor.extract %arg0[%[[C]], %[[J]]] : tensor<5x3xf32>
// CHECK: linalg.yield %[[V]]
func.func @gather(%x: tensor<5x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = nn.gather %x, %i {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A constant pad reads x[i - 0, j - 1] where both are in range, else the
// pad value.
// CHECK-LABEL: func.func @pad
// CHECK: func.func private @k0_pad(%arg0: tensor<2x3xf32>, %arg1: tensor<f32>, %arg2: tensor<3x6xf32> {bufferization.writable = true})
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: %[[ROW:.*]] = arith.minsi
// CHECK-NEXT: %[[P1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[SJ:.*]] = arith.subi %[[J]], %[[P1]] : index
// CHECK: %[[GE:.*]] = arith.cmpi sge, %[[SJ]], %{{.*}} : index
// CHECK: %[[N:.*]] = arith.constant 3 : index
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[SJ]], %[[N]] : index
// CHECK: %[[IN:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK: %[[OK:.*]] = arith.andi %{{.*}}, %[[IN]] : i1
// CHECK: %[[CL:.*]] = arith.maxsi %[[SJ]], %{{.*}} : index
// CHECK: %[[CH:.*]] = arith.minsi %[[CL]], %{{.*}} : index
// CHECK: %[[V:.*]] = tensor.extract %arg0[%[[ROW]], %[[CH]]] : tensor<2x3xf32>
// CHECK: %[[PV:.*]] = tensor.extract %arg1[] : tensor<f32>
// CHECK: %[[R:.*]] = arith.select %[[OK]], %[[V]], %[[PV]] : f32
// CHECK: linalg.yield %[[R]]
func.func @pad(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<3x6xf32> {
  %0 = nn.pad %x value %v {mode = "constant", pads = array<i64: 0, 1, 1, 2>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

// Nearest asymmetric resize (floor): source o / 2 floored and clamped on
// the scaled axes, the unscaled axes read directly. roi may be empty outside
// tf_crop_and_resize.
// CHECK-LABEL: func.func @resize_nearest
// CHECK: func.func private @k0_resize
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%arg1 : tensor<1x1x4x4xf32>)
// CHECK: %[[N:.*]] = linalg.index 0 : index
// CHECK: %[[C:.*]] = linalg.index 1 : index
// CHECK: %[[H:.*]] = linalg.index 2 : index
// CHECK: %[[W:.*]] = linalg.index 3 : index
// CHECK: %[[H64:.*]] = arith.index_cast %[[H]] : index to i64
// CHECK: %[[HF:.*]] = arith.sitofp %[[H64]] : i64 to f64
// CHECK: %[[TWO:.*]] = arith.constant 2.000000e+00 : f64
// CHECK: %[[HS:.*]] = arith.divf %[[HF]], %[[TWO]] : f64
// CHECK: %[[HFL:.*]] = math.floor %[[HS]] : f64
// CHECK: %[[HI64:.*]] = arith.fptosi %[[HFL]] : f64 to i64
// CHECK: %[[HI:.*]] = arith.index_cast %[[HI64]] : i64 to index
// CHECK: %[[HLO:.*]] = arith.maxsi %[[HI]], %{{.*}} : index
// CHECK: %[[HC:.*]] = arith.minsi %[[HLO]], %{{.*}} : index
// CHECK: math.floor
// CHECK: %[[WLO:.*]] = arith.maxsi
// CHECK: %[[WC:.*]] = arith.minsi %[[WLO]], %{{.*}} : index
// CHECK: tensor.extract %arg0[%[[N]], %[[C]], %[[HC]], %[[WC]]] : tensor<1x1x2x2xf32>
func.func @resize_nearest(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %0 = nn.resize %x {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -0.75 : f64, exclude_outside = false, extrapolation_value = 0.0 : f64, mode = "nearest", nearest_mode = "floor", roi = array<f64>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}
