// RUN: nncc-opt %s -split-input-file -nncc-lower-contractions -mlir-print-local-scope | FileCheck %s

// The im2col kernel (Im2col.cpp), reached through nncc-lower-contractions:
// col[n, c, kh, kw, oh, ow] = x[n, c, oh*stride - pad + kh*dilation, ...],
// zero where the tap falls in the padding; the GEMM then reads it as
// [n, C*KH*KW, OH*OW].
// CHECK-LABEL: func.func @im2col
// CHECK: %[[COL:.*]] = exec.launch @k0_im2col(%arg0) {{.*}} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3x4x4xf32>
// CHECK: %[[B:.*]] = exec.view %[[COL]] : tensor<1x2x3x3x4x4xf32> -> tensor<1x18x16xf32>
// CHECK: exec.gemm %{{.*}}, %[[B]]
// CHECK: func.func private @k0_im2col(%arg0: tensor<1x2x4x4xf32>, %arg1: tensor<1x2x3x3x4x4xf32> {bufferization.writable = true})
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%arg1 : tensor<1x2x3x3x4x4xf32>)
// CHECK: %[[N:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[C:.*]] = linalg.index 1 : index
// CHECK: %[[KH:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[OH:.*]] = linalg.index 4 : index
// CHECK-NEXT: %[[D:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[KD:.*]] = arith.muli %[[KH]], %[[D]] : index
// CHECK-NEXT: %[[P:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[S:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[OS:.*]] = arith.muli %[[OH]], %[[S]] : index
// CHECK-NEXT: %[[OP:.*]] = arith.subi %[[OS]], %[[P]] : index
// CHECK-NEXT: %[[IH:.*]] = arith.addi %[[OP]], %[[KD]] : index
// CHECK: %[[OK0:.*]] = arith.andi %true, %{{.*}} : i1
// CHECK: %[[HC:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: %[[KW:.*]] = linalg.index 3 : index
// CHECK-NEXT: %[[OW:.*]] = linalg.index 5 : index
// CHECK: %[[OK:.*]] = arith.andi %[[OK0]], %{{.*}} : i1
// CHECK: %[[WC:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[V:.*]] = tensor.extract %arg0[%[[N]], %[[C]], %[[HC]], %[[WC]]] : tensor<1x2x4x4xf32>
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[R:.*]] = arith.select %[[OK]], %[[V]], %[[Z]] : f32
// CHECK-NEXT: linalg.yield %[[R]]
func.func @im2col(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}
