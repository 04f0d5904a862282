// RUN: nncc-opt %s | nncc-opt | FileCheck %s
// Round trip: every nn op parses, verifies and prints back to itself.

// CHECK-LABEL: func.func @constant
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.constant dense<[1, -1, 4]> : tensor<3xi64>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.constant dense<true> : tensor<i1>
// CHECK-NEXT: return %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : tensor<2x2xf32>, tensor<3xi64>, tensor<i1>
func.func @constant() -> (tensor<2x2xf32>, tensor<3xi64>, tensor<i1>) {
  %0 = nn.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %1 = nn.constant dense<[1, -1, 4]> : tensor<3xi64>
  %2 = nn.constant dense<true> : tensor<i1>
  return %0, %1, %2 : tensor<2x2xf32>, tensor<3xi64>, tensor<i1>
}

// CHECK-LABEL: func.func @unary
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.sqrt %{{[a-z0-9_]+}} : tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.exp %{{[a-z0-9_]+}} : tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.log %{{[a-z0-9_]+}} : tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.neg %{{[a-z0-9_]+}} : tensor<4xi32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.abs %{{[a-z0-9_]+}} : tensor<4xi32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.reciprocal %{{[a-z0-9_]+}} : tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.erf %{{[a-z0-9_]+}} : tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.tanh %{{[a-z0-9_]+}} : tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.sigmoid %{{[a-z0-9_]+}} : tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.relu %{{[a-z0-9_]+}} : tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.floor %{{[a-z0-9_]+}} : tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.ceil %{{[a-z0-9_]+}} : tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.round %{{[a-z0-9_]+}} : tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.sign %{{[a-z0-9_]+}} : tensor<4xi32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.softplus %{{[a-z0-9_]+}} : tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.hard_swish %{{[a-z0-9_]+}} : tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.not %{{[a-z0-9_]+}} : tensor<4xi1>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.leaky_relu %{{[a-z0-9_]+}} {alpha = 1.000000e-02 : f64} : tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.elu %{{[a-z0-9_]+}} {alpha = 1.000000e+00 : f64} : tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.selu %{{[a-z0-9_]+}} {alpha = 1.673200e+00 : f64, gamma = 1.050700e+00 : f64} : tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.hard_sigmoid %{{[a-z0-9_]+}} {alpha = 2.000000e-01 : f64, beta = 5.000000e-01 : f64} : tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.is_nan %{{[a-z0-9_]+}} : (tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.cast %{{[a-z0-9_]+}} : (tensor<4xi32>) -> tensor<4xf16>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.relu %{{[a-z0-9_]+}} : tensor<4xi32>
// CHECK-NEXT: return
func.func @unary(%x: tensor<2x3xf32>, %i: tensor<4xi32>, %b: tensor<4xi1>) {
  %0 = nn.sqrt %x : tensor<2x3xf32>
  %1 = nn.exp %x : tensor<2x3xf32>
  %2 = nn.log %x : tensor<2x3xf32>
  %3 = nn.neg %i : tensor<4xi32>
  %4 = nn.abs %i : tensor<4xi32>
  %5 = nn.reciprocal %x : tensor<2x3xf32>
  %6 = nn.erf %x : tensor<2x3xf32>
  %7 = nn.tanh %x : tensor<2x3xf32>
  %8 = nn.sigmoid %x : tensor<2x3xf32>
  %9 = nn.relu %x : tensor<2x3xf32>
  %10 = nn.floor %x : tensor<2x3xf32>
  %11 = nn.ceil %x : tensor<2x3xf32>
  %12 = nn.round %x : tensor<2x3xf32>
  %13 = nn.sign %i : tensor<4xi32>
  %14 = nn.softplus %x : tensor<2x3xf32>
  %15 = nn.hard_swish %x : tensor<2x3xf32>
  %16 = nn.not %b : tensor<4xi1>
  %17 = nn.leaky_relu %x {alpha = 1.000000e-02 : f64} : tensor<2x3xf32>
  %18 = nn.elu %x {alpha = 1.000000e+00 : f64} : tensor<2x3xf32>
  %19 = nn.selu %x {alpha = 1.6732 : f64, gamma = 1.0507 : f64} : tensor<2x3xf32>
  %20 = nn.hard_sigmoid %x {alpha = 0.2 : f64, beta = 0.5 : f64} : tensor<2x3xf32>
  %21 = nn.is_nan %x : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %22 = nn.cast %i : (tensor<4xi32>) -> tensor<4xf16>
  %23 = nn.relu %i : tensor<4xi32>
  return
}

// CHECK-LABEL: func.func @clip
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.clip %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %{{[a-z0-9_]+}} : tensor<2x3xf32>
func.func @clip(%x: tensor<2x3xf32>, %lo: tensor<f32>, %hi: tensor<f32>) -> tensor<2x3xf32> {
  %0 = nn.clip %x, %lo, %hi : (tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @binary
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.add %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.sub %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.mul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.div %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.pow %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.min %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.max %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.prelu %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.and %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<4xi1>, tensor<1xi1>) -> tensor<4xi1>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.or %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.equal %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.greater %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.less %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.greater_equal %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.less_equal %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.add %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: return
func.func @binary(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x1xf32>, %p: tensor<4xi1>, %q: tensor<1xi1>, %n: tensor<?x3xf32>) {
  %0 = nn.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = nn.sub %a, %c : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %2 = nn.mul %c, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %3 = nn.div %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = nn.pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %5 = nn.min %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %6 = nn.max %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %7 = nn.prelu %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %8 = nn.and %p, %q : (tensor<4xi1>, tensor<1xi1>) -> tensor<4xi1>
  %9 = nn.or %p, %p : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %10 = nn.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %11 = nn.greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %12 = nn.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %13 = nn.greater_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %14 = nn.less_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %15 = nn.add %n, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return
}

// CHECK-LABEL: func.func @where
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.where %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %{{[a-z0-9_]+}} : tensor<2x3xf32>
func.func @where(%c: tensor<2x1xi1>, %a: tensor<3xf32>, %b: tensor<f32>) -> tensor<2x3xf32> {
  %0 = nn.where %c, %a, %b : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @contractions
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<5x2x3xf32>, tensor<3x4xf32>) -> tensor<5x2x4xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.gemm %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64, trans_a = false, trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.gemm %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {alpha = 5.000000e-01 : f64, beta = 0.000000e+00 : f64, trans_a = false, trans_b = false} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.einsum %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: return
func.func @contractions(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %bt: tensor<4x3xf32>, %c: tensor<4xf32>,
                        %batch: tensor<5x2x3xf32>, %v: tensor<3xf32>) {
  %0 = nn.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = nn.matmul %batch, %b : (tensor<5x2x3xf32>, tensor<3x4xf32>) -> tensor<5x2x4xf32>
  %2 = nn.matmul %a, %v : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
  %3 = nn.gemm %a, %bt, %c {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64, trans_a = false, trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %4 = nn.gemm %a, %b {alpha = 5.000000e-01 : f64, beta = 0.000000e+00 : f64, trans_a = false, trans_b = false} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %5 = nn.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return
}

// CHECK-LABEL: func.func @conv
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.conv %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x8x8xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.conv %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<5x4x3x3xf32>) -> tensor<1x5x3x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.conv_transpose %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x16x16xf32>
// CHECK-NEXT: return
func.func @conv(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %bias: tensor<6xf32>, %wt: tensor<4x3x3x3xf32>, %w1: tensor<5x4x3x3xf32>) {
  %0 = nn.conv %x, %w, %bias {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x8x8xf32>
  %1 = nn.conv %x, %w1 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<5x4x3x3xf32>) -> tensor<1x5x3x3xf32>
  %2 = nn.conv_transpose %x, %wt {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x16x16xf32>
  return
}

// CHECK-LABEL: func.func @pool_norm
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.max_pool %{{[a-z0-9_]+}} {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.average_pool %{{[a-z0-9_]+}} {ceil_mode = true, count_include_pad = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.batch_norm %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {epsilon = 1.000000e-05 : f64} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.layer_norm %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : (tensor<1x4x8x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.layer_norm %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : (tensor<1x4x8x8xf32>, tensor<8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.instance_norm %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {epsilon = 1.000000e-05 : f64} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.softmax %{{[a-z0-9_]+}} {axis = 1 : i64} : tensor<1x4x8x8xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.log_softmax %{{[a-z0-9_]+}} {axis = 3 : i64} : tensor<1x4x8x8xf32>
// CHECK-NEXT: return
func.func @pool_norm(%x: tensor<1x4x8x8xf32>, %ch: tensor<4xf32>, %ln: tensor<8xf32>) {
  %0 = nn.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  %1 = nn.average_pool %x {ceil_mode = true, count_include_pad = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %2 = nn.batch_norm %x, %ch, %ch, %ch, %ch {epsilon = 1.000000e-05 : f64} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %3 = nn.layer_norm %x, %ln, %ln {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : (tensor<1x4x8x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8x8xf32>
  %4 = nn.layer_norm %x, %ln {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : (tensor<1x4x8x8xf32>, tensor<8xf32>) -> tensor<1x4x8x8xf32>
  %5 = nn.instance_norm %x, %ch, %ch {epsilon = 1.000000e-05 : f64} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %6 = nn.softmax %x {axis = 1 : i64} : tensor<1x4x8x8xf32>
  %7 = nn.log_softmax %x {axis = 3 : i64} : tensor<1x4x8x8xf32>
  return
}

// CHECK-LABEL: func.func @reductions
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.reduce_mean %{{[a-z0-9_]+}} {axes = array<i64: 1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.reduce_sum %{{[a-z0-9_]+}} {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.reduce_max %{{[a-z0-9_]+}} {axes = array<i64>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.reduce_min %{{[a-z0-9_]+}} {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.reduce_prod %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {keepdims = true} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.reduce_l2 %{{[a-z0-9_]+}} {axes = array<i64: 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.arg_max %{{[a-z0-9_]+}} {axis = 1 : i64, keepdims = true, select_last_index = false} : (tensor<2x3x4xf32>) -> tensor<2x1x4xi64>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.arg_min %{{[a-z0-9_]+}} {axis = 2 : i64, keepdims = false, select_last_index = true} : (tensor<2x3x4xf32>) -> tensor<2x3xi64>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.cumsum %{{[a-z0-9_]+}} {axis = 1 : i64, exclusive = false, reverse = true} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.cumsum %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {exclusive = true, reverse = false} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x3x4xf32>
// CHECK-NEXT: return
func.func @reductions(%x: tensor<2x3x4xf32>, %axes: tensor<1xi64>) {
  %0 = nn.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  %1 = nn.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %2 = nn.reduce_max %x {axes = array<i64>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %3 = nn.reduce_min %x {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  %4 = nn.reduce_prod %x, %axes {keepdims = true} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
  %5 = nn.reduce_l2 %x {axes = array<i64: 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  %6 = nn.arg_max %x {axis = 1 : i64, keepdims = true, select_last_index = false} : (tensor<2x3x4xf32>) -> tensor<2x1x4xi64>
  %7 = nn.arg_min %x {axis = 2 : i64, keepdims = false, select_last_index = true} : (tensor<2x3x4xf32>) -> tensor<2x3xi64>
  %8 = nn.cumsum %x {axis = 1 : i64, exclusive = false, reverse = true} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %9 = nn.cumsum %x, %axes {exclusive = true, reverse = false} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x3x4xf32>
  return
}

// CHECK-LABEL: func.func @top_k
// CHECK-NEXT: %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} = nn.top_k %{{[a-z0-9_]+}} {axis = 1 : i64, largest = true, sorted = true} : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
// CHECK-NEXT: %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} = nn.top_k %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {axis = 1 : i64, largest = false, sorted = false} : (tensor<2x8xf32>, tensor<1xi64>) -> (tensor<2x?xf32>, tensor<2x?xi64>)
// CHECK-NEXT: return
func.func @top_k(%x: tensor<2x8xf32>, %k: tensor<1xi64>) {
  %0:2 = nn.top_k %x {axis = 1 : i64, largest = true, sorted = true} : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  %1:2 = nn.top_k %x, %k {axis = 1 : i64, largest = false, sorted = false} : (tensor<2x8xf32>, tensor<1xi64>) -> (tensor<2x?xf32>, tensor<2x?xi64>)
  return
}

// CHECK-LABEL: func.func @shaped_by_result
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.reshape %{{[a-z0-9_]+}} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.reshape %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.expand %{{[a-z0-9_]+}} : (tensor<2x1x4xf32>) -> tensor<5x2x3x4xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.expand %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x1x4xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.tile %{{[a-z0-9_]+}} : (tensor<2x3x4xf32>) -> tensor<4x3x8xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.tile %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.squeeze %{{[a-z0-9_]+}} : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.squeeze %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x1x4xf32>, tensor<1xi64>) -> tensor<?x?xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.unsqueeze %{{[a-z0-9_]+}} : (tensor<2x3x4xf32>) -> tensor<1x2x3x4xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.unsqueeze %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}}:2 = nn.split %{{[a-z0-9_]+}} {axis = 1 : i64} : (tensor<2x3x4xf32>) -> (tensor<2x1x4xf32>, tensor<2x2x4xf32>)
// CHECK-NEXT: %{{[a-z0-9_]+}}:2 = nn.split %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> (tensor<2x3x?xf32>, tensor<2x3x?xf32>)
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.constant_of_shape  {value = dense<5.000000e-01> : tensor<1xf32>} : () -> tensor<2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.constant_of_shape %{{[a-z0-9_]+}} {value = dense<7> : tensor<1xi64>} : (tensor<2xi64>) -> tensor<?x?xi64>
// CHECK-NEXT: return
func.func @shaped_by_result(%x: tensor<2x3x4xf32>, %s: tensor<2xi64>, %r: tensor<3xi64>, %a: tensor<1xi64>, %y: tensor<2x1x4xf32>) {
  %0 = nn.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = nn.reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %2 = nn.expand %y : (tensor<2x1x4xf32>) -> tensor<5x2x3x4xf32>
  %3 = nn.expand %y, %r : (tensor<2x1x4xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %4 = nn.tile %x : (tensor<2x3x4xf32>) -> tensor<4x3x8xf32>
  %5 = nn.tile %x, %r : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %6 = nn.squeeze %y : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
  %7 = nn.squeeze %y, %a : (tensor<2x1x4xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  %8 = nn.unsqueeze %x : (tensor<2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %9 = nn.unsqueeze %x, %a : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
  %10:2 = nn.split %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> (tensor<2x1x4xf32>, tensor<2x2x4xf32>)
  %11:2 = nn.split %x, %s {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> (tensor<2x3x?xf32>, tensor<2x3x?xf32>)
  %12 = nn.constant_of_shape {value = dense<0.5> : tensor<1xf32>} : () -> tensor<2x3xf32>
  %13 = nn.constant_of_shape %s {value = dense<7> : tensor<1xi64>} : (tensor<2xi64>) -> tensor<?x?xi64>
  return
}

// CHECK-LABEL: func.func @movement
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.transpose %{{[a-z0-9_]+}} {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.concat %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.slice %{{[a-z0-9_]+}} {ends = array<i64: 2, 3, -1>, starts = array<i64: 0, 1, 3>, steps = array<i64: 1, 1, -2>} : (tensor<2x3x4xf32>) -> tensor<2x2x2xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.slice %{{[a-z0-9_]+}} starts %{{[a-z0-9_]+}} ends %{{[a-z0-9_]+}} axes %{{[a-z0-9_]+}} steps %{{[a-z0-9_]+}} : (tensor<2x3x4xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<?x?x?xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.slice %{{[a-z0-9_]+}} starts %{{[a-z0-9_]+}} ends %{{[a-z0-9_]+}} : (tensor<2x3x4xf32>, tensor<3xi64>, tensor<3xi64>) -> tensor<?x?x?xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.gather %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<2x3x5xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.gather_elements %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<2x3x2xi32>) -> tensor<2x3x2xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.pad %{{[a-z0-9_]+}} {mode = "constant", pads = array<i64: 0, 1, 2, 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x5x8xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.pad %{{[a-z0-9_]+}} value %{{[a-z0-9_]+}} {mode = "constant", pads = array<i64: 0, 1, 2, 0, 1, 2>} : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x5x8xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.pad %{{[a-z0-9_]+}} pads %{{[a-z0-9_]+}} value %{{[a-z0-9_]+}} {mode = "reflect"} : (tensor<2x3x4xf32>, tensor<6xi64>, tensor<f32>) -> tensor<?x?x?xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.pad %{{[a-z0-9_]+}} pads %{{[a-z0-9_]+}} {mode = "edge"} : (tensor<2x3x4xf32>, tensor<6xi64>) -> tensor<?x?x?xf32>
// CHECK-NEXT: return
func.func @movement(%x: tensor<2x3x4xf32>, %i: tensor<5xi64>, %j: tensor<2x3x2xi32>, %s: tensor<3xi64>, %p: tensor<6xi64>, %v: tensor<f32>) {
  %0 = nn.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %1 = nn.concat %x, %x {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
  %2 = nn.slice %x {ends = array<i64: 2, 3, -1>, starts = array<i64: 0, 1, 3>, steps = array<i64: 1, 1, -2>} : (tensor<2x3x4xf32>) -> tensor<2x2x2xf32>
  %3 = nn.slice %x starts %s ends %s axes %s steps %s : (tensor<2x3x4xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %4 = nn.slice %x starts %s ends %s : (tensor<2x3x4xf32>, tensor<3xi64>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %5 = nn.gather %x, %i {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<2x3x5xf32>
  %6 = nn.gather_elements %x, %j {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<2x3x2xi32>) -> tensor<2x3x2xf32>
  %7 = nn.pad %x {mode = "constant", pads = array<i64: 0, 1, 2, 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x5x8xf32>
  %8 = nn.pad %x value %v {mode = "constant", pads = array<i64: 0, 1, 2, 0, 1, 2>} : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x5x8xf32>
  %9 = nn.pad %x pads %p value %v {mode = "reflect"} : (tensor<2x3x4xf32>, tensor<6xi64>, tensor<f32>) -> tensor<?x?x?xf32>
  %10 = nn.pad %x pads %p {mode = "edge"} : (tensor<2x3x4xf32>, tensor<6xi64>) -> tensor<?x?x?xf32>
  return
}

// CHECK-LABEL: func.func @resize
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.resize %{{[a-z0-9_]+}} {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -7.500000e-01 : f64, exclude_outside = false, extrapolation_value = 0.000000e+00 : f64, mode = "nearest", nearest_mode = "floor", roi = array<f64>, scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.resize %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f64, exclude_outside = false, extrapolation_value = 0.000000e+00 : f64, mode = "linear", nearest_mode = "round_prefer_floor", roi = array<f64>} : (tensor<1x3x4x4xf32>, tensor<4xf32>) -> tensor<?x?x?x?xf32>
// CHECK-NEXT: return
func.func @resize(%x: tensor<1x3x4x4xf32>, %sc: tensor<4xf32>) {
  %0 = nn.resize %x {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -7.500000e-01 : f64, exclude_outside = false, extrapolation_value = 0.000000e+00 : f64, mode = "nearest", nearest_mode = "floor", roi = array<f64>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  %1 = nn.resize %x, %sc {coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f64, exclude_outside = false, extrapolation_value = 0.000000e+00 : f64, mode = "linear", nearest_mode = "round_prefer_floor", roi = array<f64>} : (tensor<1x3x4x4xf32>, tensor<4xf32>) -> tensor<?x?x?x?xf32>
  return
}

// CHECK-LABEL: func.func @shape_ops
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.shape %{{[a-z0-9_]+}} {end = 3 : i64, start = 0 : i64} : (tensor<?x3x4xf32>) -> tensor<3xi64>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.shape %{{[a-z0-9_]+}} {end = -1 : i64, start = 1 : i64} : (tensor<?x3x4xf32>) -> tensor<1xi64>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.size %{{[a-z0-9_]+}} : (tensor<?x3x4xf32>) -> tensor<i64>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.range %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
// CHECK-NEXT: return
func.func @shape_ops(%x: tensor<?x3x4xf32>, %s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>) {
  %0 = nn.shape %x {end = 3 : i64, start = 0 : i64} : (tensor<?x3x4xf32>) -> tensor<3xi64>
  %1 = nn.shape %x {end = -1 : i64, start = 1 : i64} : (tensor<?x3x4xf32>) -> tensor<1xi64>
  %2 = nn.size %x : (tensor<?x3x4xf32>) -> tensor<i64>
  %3 = nn.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return
}

// CHECK-LABEL: func.func @fused_ops
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.gelu %{{[a-z0-9_]+}} : tensor<2x8xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.gelu %{{[a-z0-9_]+}} {approximate = "tanh"} : tensor<2x8xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.attention %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {scale = 2.500000e-01 : f64} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x3xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT: %{{[a-z0-9_]+}} = nn.attention %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {scale = 1.000000e+00 : f64} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x3xf32>, tensor<4x6xf32>) -> tensor<2x4x3xf32>
func.func @fused_ops(%x: tensor<2x8xf32>, %q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x3xf32>, %m: tensor<4x6xf32>) {
  %0 = nn.gelu %x : tensor<2x8xf32>
  %1 = nn.gelu %x {approximate = "tanh"} : tensor<2x8xf32>
  %2 = nn.attention %q, %k, %v {scale = 0.25 : f64} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x3xf32>) -> tensor<2x4x3xf32>
  %3 = nn.attention %q, %k, %v, %m {scale = 1.0 : f64} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x3xf32>, tensor<4x6xf32>) -> tensor<2x4x3xf32>
  return
}
