// RUN: nncc-opt %s -nncc-differentiate="entry=main wrt-constants=fc\..*" -split-input-file | FileCheck %s

// Constants whose name matches wrt-constants become arguments of main_grad
// after the inputs and before the cotangents, and get gradients after the
// inputs'; others (bias) stay constants. Names come from the locations the
// importer gives initializers.
// CHECK-LABEL: func.func @main(
// CHECK-COUNT-3: nn.constant
// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<2x3xf32> {nn.name = "x"}, %[[W:[a-z0-9_]+]]: tensor<3x4xf32> {nn.name = "fc.weight"}, %[[S:[a-z0-9_]+]]: tensor<4xf32> {nn.name = "fc.scale"}, %[[DY:[a-z0-9_]+]]: tensor<2x4xf32> {nn.name = "d_y"})
// CHECK-SAME: -> (tensor<2x3xf32> {nn.name = "d_x"}, tensor<3x4xf32> {nn.name = "d_fc.weight"}, tensor<4xf32> {nn.name = "d_fc.scale"})
// CHECK: %[[B:[a-z0-9_]+]] = nn.constant dense<5.000000e-01> : tensor<4xf32>
// CHECK: %[[H:[a-z0-9_]+]] = nn.matmul %[[X]], %[[W]]
// CHECK: nn.add %[[H]], %[[B]]
// CHECK: return
func.func @main(%x: tensor<2x3xf32> {nn.name = "x"}) -> (tensor<2x4xf32> {nn.name = "y"}) {
  %w = nn.constant dense<0.25> : tensor<3x4xf32> loc("fc.weight")
  %b = nn.constant dense<0.5> : tensor<4xf32> loc("bias")
  %s = nn.constant dense<2.0> : tensor<4xf32> loc("fc.scale")
  %0 = nn.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = nn.add %0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = nn.mul %1, %s : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}

// -----

// A matching integer constant (a shape, indices) gets no gradient.
// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME: %{{[a-z0-9_]+}}: tensor<6xf32> {nn.name = "x"}, %{{[a-z0-9_]+}}: tensor<3x2xf32> {nn.name = "d_y"})
// CHECK-SAME: -> (tensor<6xf32> {nn.name = "d_x"})
func.func @main(%x: tensor<6xf32> {nn.name = "x"}) -> (tensor<3x2xf32> {nn.name = "y"}) {
  %shape = nn.constant dense<[3, 2]> : tensor<2xi64> loc("fc.shape")
  %0 = nn.reshape %x, %shape : (tensor<6xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Constants folded from several initializers share the name of the node
// that folded them: the names are made unique.
// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME: {nn.name = "fc.fused"}, %{{[a-z0-9_]+}}: tensor<4xf32> {nn.name = "fc.fused#2"}
// CHECK-SAME: -> (tensor<4xf32> {nn.name = "d_x"}, tensor<4xf32> {nn.name = "d_fc.fused"}, tensor<4xf32> {nn.name = "d_fc.fused#2"})
func.func @main(%x: tensor<4xf32> {nn.name = "x"}) -> (tensor<4xf32> {nn.name = "y"}) {
  %w = nn.constant dense<2.0> : tensor<4xf32> loc("fc.fused")
  %b = nn.constant dense<3.0> : tensor<4xf32> loc("fc.fused")
  %0 = nn.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = nn.add %0, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
