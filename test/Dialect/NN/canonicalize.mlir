// RUN: nncc-opt %s -canonicalize -split-input-file | FileCheck %s
// Folders and canonicalization patterns of the nn dialect.

// Shape computations fold away: Shape -> Gather -> Concat feeding a Reshape
// becomes a reshape whose static result says it all.
// CHECK-LABEL: func.func @shape_gather_concat_reshape(
// CHECK-NEXT: [[RESHAPE:%.+]] = nn.reshape %arg0 : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
// CHECK-NEXT: return [[RESHAPE]] : tensor<2x12xf32>
func.func @shape_gather_concat_reshape(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %s = nn.shape %x {start = 0 : i64, end = 3 : i64} : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %i0 = nn.constant dense<[0]> : tensor<1xi64>
  %d0 = nn.gather %s, %i0 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %m1 = nn.constant dense<[-1]> : tensor<1xi64>
  %shape = nn.concat %d0, %m1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = nn.reshape %x, %shape : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  return %r : tensor<2x12xf32>
}

// -----

// The same chain on a dynamic batch: Shape cannot fold, nothing else can.
// CHECK-LABEL: func.func @shape_chain_dynamic(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<12> : tensor<1xi64>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<0> : tensor<1xi64>
// CHECK-NEXT: [[SHAPE:%.+]] = nn.shape %arg0 {end = 3 : i64, start = 0 : i64} : (tensor<?x3x4xf32>) -> tensor<3xi64>
// CHECK-NEXT: [[GATHER:%.+]] = nn.gather [[SHAPE]], [[CST_1]] {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
// CHECK-NEXT: [[CONCAT:%.+]] = nn.concat [[GATHER]], [[CST]] {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
// CHECK-NEXT: [[RESHAPE:%.+]] = nn.reshape %arg0, [[CONCAT]] : (tensor<?x3x4xf32>, tensor<2xi64>) -> tensor<?x12xf32>
// CHECK-NEXT: return [[RESHAPE]] : tensor<?x12xf32>
func.func @shape_chain_dynamic(%x: tensor<?x3x4xf32>) -> tensor<?x12xf32> {
  %s = nn.shape %x {start = 0 : i64, end = 3 : i64} : (tensor<?x3x4xf32>) -> tensor<3xi64>
  %i0 = nn.constant dense<[0]> : tensor<1xi64>
  %d0 = nn.gather %s, %i0 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %m1 = nn.constant dense<[12]> : tensor<1xi64>
  %shape = nn.concat %d0, %m1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = nn.reshape %x, %shape : (tensor<?x3x4xf32>, tensor<2xi64>) -> tensor<?x12xf32>
  return %r : tensor<?x12xf32>
}

// -----

// Static dims of a partly dynamic tensor still fold; start/end pick them.
// CHECK-LABEL: func.func @shape_static_part(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<[3, 4]> : tensor<2xi64>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<4> : tensor<1xi64>
// CHECK-NEXT: return [[CST]], [[CST_1]] : tensor<2xi64>, tensor<1xi64>
func.func @shape_static_part(%x: tensor<?x3x4xf32>) -> (tensor<2xi64>, tensor<1xi64>) {
  %0 = nn.shape %x {start = 1 : i64, end = 3 : i64} : (tensor<?x3x4xf32>) -> tensor<2xi64>
  %1 = nn.shape %x {start = -1 : i64, end = 3 : i64} : (tensor<?x3x4xf32>) -> tensor<1xi64>
  return %0, %1 : tensor<2xi64>, tensor<1xi64>
}

// -----

// CHECK-LABEL: func.func @size(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<24> : tensor<i64>
// CHECK-NEXT: [[SIZE:%.+]] = nn.size %arg1 : (tensor<?x4xf32>) -> tensor<i64>
// CHECK-NEXT: return [[CST]], [[SIZE]] : tensor<i64>, tensor<i64>
func.func @size(%x: tensor<2x3x4xf32>, %y: tensor<?x4xf32>) -> (tensor<i64>, tensor<i64>) {
  %0 = nn.size %x : (tensor<2x3x4xf32>) -> tensor<i64>
  %1 = nn.size %y : (tensor<?x4xf32>) -> tensor<i64>
  return %0, %1 : tensor<i64>, tensor<i64>
}

// -----

// CHECK-LABEL: func.func @range_int(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<[5, 3, 1]> : tensor<3xi64>
// CHECK-NEXT: [[CST_2:%.+]] = nn.constant dense<> : tensor<0xi64>
// CHECK-NEXT: return [[CST]], [[CST_1]], [[CST_2]] : tensor<5xi64>, tensor<3xi64>, tensor<0xi64>
func.func @range_int() -> (tensor<5xi64>, tensor<3xi64>, tensor<0xi64>) {
  %c0 = nn.constant dense<0> : tensor<i64>
  %c5 = nn.constant dense<5> : tensor<i64>
  %c1 = nn.constant dense<1> : tensor<i64>
  %cm2 = nn.constant dense<-2> : tensor<i64>
  %0 = nn.range %c0, %c5, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<5xi64>
  %1 = nn.range %c5, %c0, %cm2 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
  %2 = nn.range %c5, %c0, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<0xi64>
  return %0, %1, %2 : tensor<5xi64>, tensor<3xi64>, tensor<0xi64>
}

// -----

// CHECK-LABEL: func.func @range_float(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<[5.000000e-01, 1.000000e+00, 1.500000e+00]> : tensor<3xf32>
// CHECK-NEXT: return [[CST]] : tensor<3xf32>
func.func @range_float() -> tensor<3xf32> {
  %s = nn.constant dense<0.5> : tensor<f32>
  %l = nn.constant dense<2.0> : tensor<f32>
  %d = nn.constant dense<0.5> : tensor<f32>
  %0 = nn.range %s, %l, %d : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Not folded: the result type is dynamic, or disagrees with the operands
// (0..5 has 5 elements, not 10), or the operands are not constant.
// CHECK-LABEL: func.func @range_no_fold(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<0> : tensor<i64>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<5> : tensor<i64>
// CHECK-NEXT: [[CST_2:%.+]] = nn.constant dense<1> : tensor<i64>
// CHECK-NEXT: [[RANGE:%.+]] = nn.range [[CST]], [[CST_1]], [[CST_2]] : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
// CHECK-NEXT: [[RANGE_1:%.+]] = nn.range [[CST]], [[CST_1]], [[CST_2]] : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<10xi64>
// CHECK-NEXT: [[RANGE_2:%.+]] = nn.range [[CST]], %arg0, [[CST_2]] : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
// CHECK-NEXT: return [[RANGE]], [[RANGE_1]], [[RANGE_2]] : tensor<?xi64>, tensor<10xi64>, tensor<?xi64>
func.func @range_no_fold(%n: tensor<i64>) -> (tensor<?xi64>, tensor<10xi64>, tensor<?xi64>) {
  %c0 = nn.constant dense<0> : tensor<i64>
  %c5 = nn.constant dense<5> : tensor<i64>
  %c1 = nn.constant dense<1> : tensor<i64>
  %0 = nn.range %c0, %c5, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %1 = nn.range %c0, %c5, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<10xi64>
  %2 = nn.range %c0, %n, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %0, %1, %2 : tensor<?xi64>, tensor<10xi64>, tensor<?xi64>
}

// -----

// CHECK-LABEL: func.func @constant_of_shape(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<1.500000e+00> : tensor<2x3xf32>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<7> : tensor<2x3xi64>
// CHECK-NEXT: [[CONSTANT_OF_SHAPE:%.+]] = nn.constant_of_shape %arg0 {value = dense<0.000000e+00> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<?x?xf32>
// CHECK-NEXT: return [[CST]], [[CST_1]], [[CONSTANT_OF_SHAPE]] : tensor<2x3xf32>, tensor<2x3xi64>, tensor<?x?xf32>
func.func @constant_of_shape(%s: tensor<2xi64>) -> (tensor<2x3xf32>, tensor<2x3xi64>, tensor<?x?xf32>) {
  %0 = nn.constant_of_shape {value = dense<1.5> : tensor<1xf32>} : () -> tensor<2x3xf32>
  %c = nn.constant dense<[2, 3]> : tensor<2xi64>
  %1 = nn.constant_of_shape %c {value = dense<7> : tensor<1xi64>} : (tensor<2xi64>) -> tensor<2x3xi64>
  %2 = nn.constant_of_shape %s {value = dense<0.0> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<?x?xf32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xi64>, tensor<?x?xf32>
}

// -----

// A dense_resource value cannot be read by the folder: left alone.
// CHECK-LABEL: func.func @constant_of_shape_resource(
// CHECK-NEXT: [[CONSTANT_OF_SHAPE:%.+]] = nn.constant_of_shape  {value = dense_resource<one> : tensor<1xf32>} : () -> tensor<2xf32>
// CHECK-NEXT: return [[CONSTANT_OF_SHAPE]] : tensor<2xf32>
func.func @constant_of_shape_resource() -> tensor<2xf32> {
  %0 = nn.constant_of_shape {value = dense_resource<one> : tensor<1xf32>} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      one: "0x040000000000803F"
    }
  }
#-}

// -----

// A constant target shape is dropped once the result type is static; a
// dynamic result keeps it.
// CHECK-LABEL: func.func @reshape_shape_operand(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<[-1, 3]> : tensor<2xi64>
// CHECK-NEXT: [[RESHAPE:%.+]] = nn.reshape %arg0 : (tensor<2x6xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: [[RESHAPE_1:%.+]] = nn.reshape %arg1, [[CST]] : (tensor<?x6xf32>, tensor<2xi64>) -> tensor<?x3xf32>
// CHECK-NEXT: return [[RESHAPE]], [[RESHAPE_1]] : tensor<3x4xf32>, tensor<?x3xf32>
func.func @reshape_shape_operand(%x: tensor<2x6xf32>, %y: tensor<?x6xf32>) -> (tensor<3x4xf32>, tensor<?x3xf32>) {
  %c = nn.constant dense<[3, 4]> : tensor<2xi64>
  %0 = nn.reshape %x, %c : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  %d = nn.constant dense<[-1, 3]> : tensor<2xi64>
  %1 = nn.reshape %y, %d : (tensor<?x6xf32>, tensor<2xi64>) -> tensor<?x3xf32>
  return %0, %1 : tensor<3x4xf32>, tensor<?x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_reshape(
// CHECK-NEXT: [[RESHAPE:%.+]] = nn.reshape %arg0 : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: return [[RESHAPE]] : tensor<4x6xf32>
func.func @reshape_reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = nn.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = nn.reshape %0 : (tensor<6x4xf32>) -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_identity_and_constant(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<{{\[\[}}1, 2], [3, 4]]> : tensor<2x2xi64>
// CHECK-NEXT: return %arg0, [[CST]] : tensor<2x3xf32>, tensor<2x2xi64>
func.func @reshape_identity_and_constant(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x2xi64>) {
  %0 = nn.reshape %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = nn.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %1 = nn.reshape %c : (tensor<4xi64>) -> tensor<2x2xi64>
  return %0, %1 : tensor<2x3xf32>, tensor<2x2xi64>
}

// -----

// CHECK-LABEL: func.func @transpose_transpose(
// CHECK-NEXT: [[TRANSPOSE:%.+]] = nn.transpose %arg0 {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT: return [[TRANSPOSE]] : tensor<4x2x3xf32>
func.func @transpose_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = nn.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %1 = nn.transpose %0 {perm = array<i64: 1, 0, 2>} : (tensor<2x4x3xf32>) -> tensor<4x2x3xf32>
  return %1 : tensor<4x2x3xf32>
}

// -----

// Two transposes that undo each other vanish.
// CHECK-LABEL: func.func @transpose_inverse(
// CHECK-NEXT: return %arg0 : tensor<2x3x4xf32>
func.func @transpose_inverse(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = nn.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = nn.transpose %0 {perm = array<i64: 2, 0, 1>} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_identity_and_constant(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<{{\[\[}}1, 4], [2, 5], [3, 6]]> : tensor<3x2xi32>
// CHECK-NEXT: return %arg0, [[CST]] : tensor<2x3xf32>, tensor<3x2xi32>
func.func @transpose_identity_and_constant(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xi32>) {
  %0 = nn.transpose %x {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = nn.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %1 = nn.transpose %c {perm = array<i64: 1, 0>} : (tensor<2x3xi32>) -> tensor<3x2xi32>
  return %0, %1 : tensor<2x3xf32>, tensor<3x2xi32>
}

// -----

// CHECK-LABEL: func.func @squeeze_unsqueeze(
// CHECK-NEXT: [[RESHAPE:%.+]] = nn.reshape %arg0 : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: [[RESHAPE_1:%.+]] = nn.reshape %arg0 : (tensor<2x1x4xf32>) -> tensor<1x2x1x4xf32>
// CHECK-NEXT: [[RESHAPE_2:%.+]] = nn.reshape %arg0 : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: return [[RESHAPE]], [[RESHAPE_1]], [[RESHAPE_2]] : tensor<2x4xf32>, tensor<1x2x1x4xf32>, tensor<2x4xf32>
func.func @squeeze_unsqueeze(%x: tensor<2x1x4xf32>, %a: tensor<1xi64>) -> (tensor<2x4xf32>, tensor<1x2x1x4xf32>, tensor<2x4xf32>) {
  %0 = nn.squeeze %x : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
  %1 = nn.unsqueeze %x, %a : (tensor<2x1x4xf32>, tensor<1xi64>) -> tensor<1x2x1x4xf32>
  %c = nn.constant dense<[1]> : tensor<1xi64>
  %2 = nn.squeeze %x, %c : (tensor<2x1x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
  return %0, %1, %2 : tensor<2x4xf32>, tensor<1x2x1x4xf32>, tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @squeeze_dynamic(
// CHECK-NEXT: [[SQUEEZE:%.+]] = nn.squeeze %arg0, %arg1 : (tensor<?x1x4xf32>, tensor<1xi64>) -> tensor<?x4xf32>
// CHECK-NEXT: [[UNSQUEEZE:%.+]] = nn.unsqueeze %arg0, %arg1 : (tensor<?x1x4xf32>, tensor<1xi64>) -> tensor<?x1x1x4xf32>
// CHECK-NEXT: return [[SQUEEZE]], [[UNSQUEEZE]] : tensor<?x4xf32>, tensor<?x1x1x4xf32>
func.func @squeeze_dynamic(%x: tensor<?x1x4xf32>, %a: tensor<1xi64>) -> (tensor<?x4xf32>, tensor<?x1x1x4xf32>) {
  %0 = nn.squeeze %x, %a : (tensor<?x1x4xf32>, tensor<1xi64>) -> tensor<?x4xf32>
  %1 = nn.unsqueeze %x, %a : (tensor<?x1x4xf32>, tensor<1xi64>) -> tensor<?x1x1x4xf32>
  return %0, %1 : tensor<?x4xf32>, tensor<?x1x1x4xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_axes(
// CHECK-NEXT: [[REDUCE_SUM:%.+]] = nn.reduce_sum %arg0 {axes = array<i64: 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
// CHECK-NEXT: [[REDUCE_MEAN:%.+]] = nn.reduce_mean %arg0 {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
// CHECK-NEXT: [[REDUCE_MAX:%.+]] = nn.reduce_max %arg0 {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
// CHECK-NEXT: [[REDUCE_L2:%.+]] = nn.reduce_l2 %arg0 {axes = array<i64: 0, 1, 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
// CHECK-NEXT: return [[REDUCE_SUM]], [[REDUCE_MEAN]], [[REDUCE_MAX]], [[REDUCE_L2]] : tensor<2x3x1xf32>, tensor<3xf32>, tensor<f32>, tensor<1x1x1xf32>
func.func @reduce_axes(%x: tensor<2x3x4xf32>) -> (tensor<2x3x1xf32>, tensor<3xf32>, tensor<f32>, tensor<1x1x1xf32>) {
  %last = nn.constant dense<[-1]> : tensor<1xi64>
  %0 = nn.reduce_sum %x, %last {keepdims = true} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x3x1xf32>
  %two = nn.constant dense<[2, 0]> : tensor<2xi64>
  %1 = nn.reduce_mean %x, %two {keepdims = false} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<3xf32>
  %none = nn.constant dense<> : tensor<0xi64>
  %2 = nn.reduce_max %x, %none {keepdims = false} : (tensor<2x3x4xf32>, tensor<0xi64>) -> tensor<f32>
  %3 = nn.reduce_l2 %x, %none {keepdims = true} : (tensor<2x3x4xf32>, tensor<0xi64>) -> tensor<1x1x1xf32>
  return %0, %1, %2, %3 : tensor<2x3x1xf32>, tensor<3xf32>, tensor<f32>, tensor<1x1x1xf32>
}

// -----

// Axes that are not constant, out of range or repeated stay an operand.
// CHECK-LABEL: func.func @reduce_axes_no_fold(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<[1, -2]> : tensor<2xi64>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<3> : tensor<1xi64>
// CHECK-NEXT: [[REDUCE_PROD:%.+]] = nn.reduce_prod %arg0, %arg1 {keepdims = true} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
// CHECK-NEXT: [[REDUCE_MIN:%.+]] = nn.reduce_min %arg0, [[CST_1]] {keepdims = true} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
// CHECK-NEXT: [[REDUCE_SUM:%.+]] = nn.reduce_sum %arg0, [[CST]] {keepdims = true} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?x?xf32>
// CHECK-NEXT: return [[REDUCE_PROD]], [[REDUCE_MIN]], [[REDUCE_SUM]] : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>
func.func @reduce_axes_no_fold(%x: tensor<2x3x4xf32>, %a: tensor<1xi64>) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %0 = nn.reduce_prod %x, %a {keepdims = true} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
  %big = nn.constant dense<[3]> : tensor<1xi64>
  %1 = nn.reduce_min %x, %big {keepdims = true} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
  %rep = nn.constant dense<[1, -2]> : tensor<2xi64>
  %2 = nn.reduce_sum %x, %rep {keepdims = true} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?x?xf32>
  return %0, %1, %2 : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>
}

// -----

// CHECK-LABEL: func.func @slice_params(
// CHECK-NEXT: [[SLICE:%.+]] = nn.slice %arg0 {ends = array<i64: 4, 6>, starts = array<i64: 0, 1>, steps = array<i64: 1, 2>} : (tensor<4x6xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: return [[SLICE]] : tensor<4x3xf32>
func.func @slice_params(%x: tensor<4x6xf32>) -> tensor<4x3xf32> {
  %starts = nn.constant dense<[1]> : tensor<1xi64>
  %ends = nn.constant dense<[100]> : tensor<1xi64>
  %axes = nn.constant dense<[-1]> : tensor<1xi64>
  %steps = nn.constant dense<[2]> : tensor<1xi64>
  %0 = nn.slice %x starts %starts ends %ends axes %axes steps %steps : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// A reverse: step -1 from the end through index 0 (ONNX writes the end as
// INT64_MIN); the end is clamped to -1. i32 parameters work too.
// CHECK-LABEL: func.func @slice_negative_step(
// CHECK-NEXT: [[SLICE:%.+]] = nn.slice %arg0 {ends = array<i64: -1, -1>, starts = array<i64: 3, 5>, steps = array<i64: -2, -1>} : (tensor<4x6xf32>) -> tensor<2x6xf32>
// CHECK-NEXT: return [[SLICE]] : tensor<2x6xf32>
func.func @slice_negative_step(%x: tensor<4x6xf32>) -> tensor<2x6xf32> {
  %starts = nn.constant dense<[-1, 3]> : tensor<2xi32>
  %ends = nn.constant dense<[-2147483648, -9]> : tensor<2xi32>
  %axes = nn.constant dense<[1, 0]> : tensor<2xi32>
  %steps = nn.constant dense<[-1, -2]> : tensor<2xi32>
  %0 = nn.slice %x starts %starts ends %ends axes %axes steps %steps : (tensor<4x6xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// With attributes, a constant input is evaluated; the whole-input slice is
// the input.
// CHECK-LABEL: func.func @slice_fold(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<[8, 5]> : tensor<2xi64>
// CHECK-NEXT: return [[CST]], %arg0 : tensor<2xi64>, tensor<2x3xf32>
func.func @slice_fold(%x: tensor<2x3xf32>) -> (tensor<2xi64>, tensor<2x3xf32>) {
  %c = nn.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]> : tensor<10xi64>
  %0 = nn.slice %c {starts = array<i64: 8>, ends = array<i64: 2>, steps = array<i64: -3>} : (tensor<10xi64>) -> tensor<2xi64>
  %1 = nn.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2, 3>, steps = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2xi64>, tensor<2x3xf32>
}

// -----

// Not folded: non-constant starts; a dynamic input (the clamping needs its
// dims); an end of 5 on a dynamic dim may cut it, so that slice is no identity.
// CHECK-LABEL: func.func @slice_no_fold(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<1> : tensor<1xi64>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<3> : tensor<1xi64>
// CHECK-NEXT: [[SLICE:%.+]] = nn.slice %arg0 starts %arg1 ends [[CST_1]] : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x6xf32>
// CHECK-NEXT: [[SLICE_1:%.+]] = nn.slice %arg2 starts [[CST]] ends [[CST_1]] axes [[CST]] : (tensor<?x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2xf32>
// CHECK-NEXT: [[SLICE_2:%.+]] = nn.slice %arg3 {ends = array<i64: 5>, starts = array<i64: 0>, steps = array<i64: 1>} : (tensor<?xf32>) -> tensor<?xf32>
// CHECK-NEXT: return [[SLICE]], [[SLICE_1]], [[SLICE_2]] : tensor<?x6xf32>, tensor<?x2xf32>, tensor<?xf32>
func.func @slice_no_fold(%x: tensor<4x6xf32>, %s: tensor<1xi64>, %y: tensor<?x6xf32>, %z: tensor<?xf32>)
    -> (tensor<?x6xf32>, tensor<?x2xf32>, tensor<?xf32>) {
  %e = nn.constant dense<[3]> : tensor<1xi64>
  %0 = nn.slice %x starts %s ends %e : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x6xf32>
  %st = nn.constant dense<[1]> : tensor<1xi64>
  %ax = nn.constant dense<[1]> : tensor<1xi64>
  %1 = nn.slice %y starts %st ends %e axes %ax : (tensor<?x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2xf32>
  %2 = nn.slice %z {starts = array<i64: 0>, ends = array<i64: 5>, steps = array<i64: 1>} : (tensor<?xf32>) -> tensor<?xf32>
  return %0, %1, %2 : tensor<?x6xf32>, tensor<?x2xf32>, tensor<?xf32>
}

// -----

// CHECK-LABEL: func.func @pad_constant_pads(
// CHECK-NEXT: [[PAD:%.+]] = nn.pad %arg0 value %arg1 {mode = "constant", pads = array<i64: 0, 1, 1, 2>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x6xf32>
// CHECK-NEXT: [[PAD_1:%.+]] = nn.pad %arg0 pads %arg2 {mode = "reflect"} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<?x?xf32>
// CHECK-NEXT: return [[PAD]], [[PAD_1]] : tensor<3x6xf32>, tensor<?x?xf32>
func.func @pad_constant_pads(%x: tensor<2x3xf32>, %v: tensor<f32>, %p: tensor<4xi64>) -> (tensor<3x6xf32>, tensor<?x?xf32>) {
  %c = nn.constant dense<[0, 1, 1, 2]> : tensor<4xi64>
  %0 = nn.pad %x pads %c value %v {mode = "constant"} : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<3x6xf32>
  %1 = nn.pad %x pads %p {mode = "reflect"} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  return %0, %1 : tensor<3x6xf32>, tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @cumsum_axis(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<3> : tensor<i32>
// CHECK-NEXT: [[CUMSUM:%.+]] = nn.cumsum %arg0 {axis = 2 : i64, exclusive = false, reverse = true} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: [[CUMSUM_1:%.+]] = nn.cumsum %arg0, %arg1 {exclusive = false, reverse = false} : (tensor<2x3x4xf32>, tensor<i32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: [[CUMSUM_2:%.+]] = nn.cumsum %arg0, [[CST]] {exclusive = true, reverse = false} : (tensor<2x3x4xf32>, tensor<i32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: return [[CUMSUM]], [[CUMSUM_1]], [[CUMSUM_2]] : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
func.func @cumsum_axis(%x: tensor<2x3x4xf32>, %a: tensor<i32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %c = nn.constant dense<-1> : tensor<i32>
  %0 = nn.cumsum %x, %c {exclusive = false, reverse = true} : (tensor<2x3x4xf32>, tensor<i32>) -> tensor<2x3x4xf32>
  %1 = nn.cumsum %x, %a {exclusive = false, reverse = false} : (tensor<2x3x4xf32>, tensor<i32>) -> tensor<2x3x4xf32>
  %big = nn.constant dense<3> : tensor<i32>
  %2 = nn.cumsum %x, %big {exclusive = true, reverse = false} : (tensor<2x3x4xf32>, tensor<i32>) -> tensor<2x3x4xf32>
  return %0, %1, %2 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @shape_operands_dropped(
// CHECK-NEXT: [[EXPAND:%.+]] = nn.expand %arg0 : (tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: [[TILE:%.+]] = nn.tile %arg0 : (tensor<2x1xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: [[SPLIT:%.+]]:2 = nn.split %arg0 {axis = 0 : i64} : (tensor<2x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>)
// CHECK-NEXT: [[VALUES:%.+]], [[INDICES:%.+]] = nn.top_k %arg3 {axis = 1 : i64, largest = true, sorted = true} : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
// CHECK-NEXT: return [[EXPAND]], [[TILE]], [[SPLIT]]#0, [[SPLIT]]#1, [[VALUES]], [[INDICES]] : tensor<2x3xf32>, tensor<4x3xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<2x3xf32>, tensor<2x3xi64>
func.func @shape_operands_dropped(%x: tensor<2x1xf32>, %s: tensor<2xi64>, %k: tensor<1xi64>, %y: tensor<2x8xf32>)
    -> (tensor<2x3xf32>, tensor<4x3xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<2x3xf32>, tensor<2x3xi64>) {
  %0 = nn.expand %x, %s : (tensor<2x1xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %1 = nn.tile %x, %s : (tensor<2x1xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  %2:2 = nn.split %x, %s {axis = 0 : i64} : (tensor<2x1xf32>, tensor<2xi64>) -> (tensor<1x1xf32>, tensor<1x1xf32>)
  %3:2 = nn.top_k %y, %k {axis = 1 : i64, largest = true, sorted = true} : (tensor<2x8xf32>, tensor<1xi64>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  return %0, %1, %2#0, %2#1, %3#0, %3#1 : tensor<2x3xf32>, tensor<4x3xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<2x3xf32>, tensor<2x3xi64>
}

// -----

// CHECK-LABEL: func.func @int_arith(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<[11, 12, 13]> : tensor<3xi64>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<[-9, -8, -7]> : tensor<3xi64>
// CHECK-NEXT: [[CST_2:%.+]] = nn.constant dense<{{\[\[}}3, 4], [6, 8]]> : tensor<2x2xi32>
// CHECK-NEXT: [[CST_3:%.+]] = nn.constant dense<[3, -3, 3, 0]> : tensor<4xi64>
// CHECK-NEXT: [[CST_4:%.+]] = nn.constant dense<[-5, 6]> : tensor<2xi64>
// CHECK-NEXT: return [[CST]], [[CST_1]], [[CST_2]], [[CST_3]], [[CST_4]] : tensor<3xi64>, tensor<3xi64>, tensor<2x2xi32>, tensor<4xi64>, tensor<2xi64>
func.func @int_arith() -> (tensor<3xi64>, tensor<3xi64>, tensor<2x2xi32>, tensor<4xi64>, tensor<2xi64>) {
  %a = nn.constant dense<[1, 2, 3]> : tensor<3xi64>
  %b = nn.constant dense<[10]> : tensor<1xi64>
  %0 = nn.add %a, %b : (tensor<3xi64>, tensor<1xi64>) -> tensor<3xi64>
  %1 = nn.sub %a, %b : (tensor<3xi64>, tensor<1xi64>) -> tensor<3xi64>
  %c = nn.constant dense<[[1], [2]]> : tensor<2x1xi32>
  %d = nn.constant dense<[3, 4]> : tensor<2xi32>
  %2 = nn.mul %c, %d : (tensor<2x1xi32>, tensor<2xi32>) -> tensor<2x2xi32>
  %e = nn.constant dense<[7, -7, 6, 0]> : tensor<4xi64>
  %f = nn.constant dense<2> : tensor<i64>
  %3 = nn.div %e, %f : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  %g = nn.constant dense<[5, -6]> : tensor<2xi64>
  %4 = nn.neg %g : tensor<2xi64>
  return %0, %1, %2, %3, %4 : tensor<3xi64>, tensor<3xi64>, tensor<2x2xi32>, tensor<4xi64>, tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @float_arith(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<[7.500000e-01, -1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<[3.000000e+00, -4.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: return [[CST]], [[CST_1]] : tensor<2xf32>, tensor<2xf32>
func.func @float_arith() -> (tensor<2xf32>, tensor<2xf32>) {
  %a = nn.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %b = nn.constant dense<0.5> : tensor<f32>
  %0 = nn.mul %a, %b : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %1 = nn.div %a, %b : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// Integer division by zero is undefined: it stays for the run time to report.
// CHECK-LABEL: func.func @div_by_zero(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<[4, 6]> : tensor<2xi64>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<[2, 0]> : tensor<2xi64>
// CHECK-NEXT: [[DIV:%.+]] = nn.div [[CST]], [[CST_1]] : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
// CHECK-NEXT: return [[DIV]] : tensor<2xi64>
func.func @div_by_zero() -> tensor<2xi64> {
  %a = nn.constant dense<[4, 6]> : tensor<2xi64>
  %b = nn.constant dense<[2, 0]> : tensor<2xi64>
  %0 = nn.div %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// x + 0 and x - 0 are x for integers, not for floats (-0.0 + 0.0 is +0.0);
// x * 1 and x / 1 are x for both. A broadcasting identity is no identity.
// CHECK-LABEL: func.func @identities(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<1> : tensor<3xi64>
// CHECK-NEXT: [[ADD:%.+]] = nn.add %arg1, [[CST]] : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: [[MUL:%.+]] = nn.mul %arg2, [[CST_1]] : (tensor<i64>, tensor<3xi64>) -> tensor<3xi64>
// CHECK-NEXT: return %arg0, %arg0, [[ADD]], %arg1, %arg1, [[MUL]] : tensor<3xi64>, tensor<3xi64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi64>
func.func @identities(%i: tensor<3xi64>, %f: tensor<3xf32>, %s: tensor<i64>)
    -> (tensor<3xi64>, tensor<3xi64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi64>) {
  %zi = nn.constant dense<0> : tensor<3xi64>
  %zf = nn.constant dense<0.0> : tensor<3xf32>
  %of = nn.constant dense<1.0> : tensor<3xf32>
  %oi = nn.constant dense<1> : tensor<3xi64>
  %0 = nn.add %i, %zi : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %1 = nn.sub %i, %zi : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %2 = nn.add %f, %zf : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %3 = nn.mul %f, %of : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %4 = nn.div %f, %of : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %5 = nn.mul %s, %oi : (tensor<i64>, tensor<3xi64>) -> tensor<3xi64>
  return %0, %1, %2, %3, %4, %5 : tensor<3xi64>, tensor<3xi64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi64>
}

// -----

// CHECK-LABEL: func.func @equal(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<[false, true, false]> : tensor<3xi1>
// CHECK-NEXT: return [[CST]] : tensor<3xi1>
func.func @equal() -> tensor<3xi1> {
  %a = nn.constant dense<[1, 2, 3]> : tensor<3xi64>
  %b = nn.constant dense<2> : tensor<i64>
  %0 = nn.equal %a, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// CHECK-LABEL: func.func @cast_int_to_float(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<[1.000000e+00, -2.000000e+00, 0x4B800000]> : tensor<3xf32>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf16>
// CHECK-NEXT: return [[CST]], [[CST_1]] : tensor<3xf32>, tensor<2xf16>
func.func @cast_int_to_float() -> (tensor<3xf32>, tensor<2xf16>) {
  %a = nn.constant dense<[1, -2, 16777217]> : tensor<3xi64>
  %0 = nn.cast %a : (tensor<3xi64>) -> tensor<3xf32>
  %b = nn.constant dense<[true, false]> : tensor<2xi1>
  %1 = nn.cast %b : (tensor<2xi1>) -> tensor<2xf16>
  return %0, %1 : tensor<3xf32>, tensor<2xf16>
}

// -----

// Float to integer truncates toward zero.
// CHECK-LABEL: func.func @cast_float_to_int(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<[1, -1, 2, 0]> : tensor<4xi32>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<[false, true, true]> : tensor<3xi1>
// CHECK-NEXT: [[CST_2:%.+]] = nn.constant dense<[127, -128]> : tensor<2xi8>
// CHECK-NEXT: return [[CST]], [[CST_1]], [[CST_2]] : tensor<4xi32>, tensor<3xi1>, tensor<2xi8>
func.func @cast_float_to_int() -> (tensor<4xi32>, tensor<3xi1>, tensor<2xi8>) {
  %a = nn.constant dense<[1.9, -1.9, 2.5, -0.5]> : tensor<4xf32>
  %0 = nn.cast %a : (tensor<4xf32>) -> tensor<4xi32>
  %b = nn.constant dense<[0.0, -0.25, 3.0]> : tensor<3xf32>
  %1 = nn.cast %b : (tensor<3xf32>) -> tensor<3xi1>
  %c = nn.constant dense<[127.9, -128.9]> : tensor<2xf64>
  %2 = nn.cast %c : (tensor<2xf64>) -> tensor<2xi8>
  return %0, %1, %2 : tensor<4xi32>, tensor<3xi1>, tensor<2xi8>
}

// -----

// CHECK-LABEL: func.func @cast_int_and_float(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<[1, -1, 1]> : tensor<3xi32>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<[false, true]> : tensor<2xi1>
// CHECK-NEXT: [[CST_2:%.+]] = nn.constant dense<[1.000000e+00, 0x7C00]> : tensor<2xf16>
// CHECK-NEXT: return [[CST]], [[CST_1]], [[CST_2]], %arg0 : tensor<3xi32>, tensor<2xi1>, tensor<2xf16>, tensor<2xf32>
func.func @cast_int_and_float(%x: tensor<2xf32>) -> (tensor<3xi32>, tensor<2xi1>, tensor<2xf16>, tensor<2xf32>) {
  %a = nn.constant dense<[1, -1, 4294967297]> : tensor<3xi64>
  %0 = nn.cast %a : (tensor<3xi64>) -> tensor<3xi32>
  %b = nn.constant dense<[0, 7]> : tensor<2xi32>
  %1 = nn.cast %b : (tensor<2xi32>) -> tensor<2xi1>
  %c = nn.constant dense<[1.0, 65536.0]> : tensor<2xf32>
  %2 = nn.cast %c : (tensor<2xf32>) -> tensor<2xf16>
  %3 = nn.cast %x : (tensor<2xf32>) -> tensor<2xf32>
  return %0, %1, %2, %3 : tensor<3xi32>, tensor<2xi1>, tensor<2xf16>, tensor<2xf32>
}

// -----

// Not folded: out of the integer range, NaN, and a dynamic result type.
// CHECK-LABEL: func.func @cast_no_fold(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<[1, 2]> : tensor<2xi32>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<0x7FC00000> : tensor<1xf32>
// CHECK-NEXT: [[CST_2:%.+]] = nn.constant dense<3.000000e+10> : tensor<1xf32>
// CHECK-NEXT: [[CAST:%.+]] = nn.cast [[CST_2]] : (tensor<1xf32>) -> tensor<1xi32>
// CHECK-NEXT: [[CAST_1:%.+]] = nn.cast [[CST_1]] : (tensor<1xf32>) -> tensor<1xi64>
// CHECK-NEXT: [[CAST_2:%.+]] = nn.cast [[CST]] : (tensor<2xi32>) -> tensor<?xf32>
// CHECK-NEXT: return [[CAST]], [[CAST_1]], [[CAST_2]] : tensor<1xi32>, tensor<1xi64>, tensor<?xf32>
func.func @cast_no_fold() -> (tensor<1xi32>, tensor<1xi64>, tensor<?xf32>) {
  %a = nn.constant dense<3.0e10> : tensor<1xf32>
  %0 = nn.cast %a : (tensor<1xf32>) -> tensor<1xi32>
  %b = nn.constant dense<0x7FC00000> : tensor<1xf32>
  %1 = nn.cast %b : (tensor<1xf32>) -> tensor<1xi64>
  %c = nn.constant dense<[1, 2]> : tensor<2xi32>
  %2 = nn.cast %c : (tensor<2xi32>) -> tensor<?xf32>
  return %0, %1, %2 : tensor<1xi32>, tensor<1xi64>, tensor<?xf32>
}

// -----

// CHECK-LABEL: func.func @where_splat(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<true> : tensor<2x3xi1>
// CHECK-NEXT: [[WHERE:%.+]] = nn.where [[CST]], %arg2, %arg1 : (tensor<2x3xi1>, tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %arg0, %arg1, [[WHERE]] : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
func.func @where_splat(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %t = nn.constant dense<true> : tensor<2x3xi1>
  %f = nn.constant dense<false> : tensor<1xi1>
  %0 = nn.where %t, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = nn.where %f, %a, %b : (tensor<1xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // The chosen value broadcasts to the result: it is not the result.
  %2 = nn.where %t, %c, %b : (tensor<2x3xi1>, tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @where_constant(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<{{\[\[}}1, 2], [-1, -1]]> : tensor<2x2xi64>
// CHECK-NEXT: return [[CST]] : tensor<2x2xi64>
func.func @where_constant() -> tensor<2x2xi64> {
  %c = nn.constant dense<[[true], [false]]> : tensor<2x1xi1>
  %a = nn.constant dense<[1, 2]> : tensor<2xi64>
  %b = nn.constant dense<-1> : tensor<i64>
  %0 = nn.where %c, %a, %b : (tensor<2x1xi1>, tensor<2xi64>, tensor<i64>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}

// -----

// CHECK-LABEL: func.func @gather_concat_expand(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<[30, 10, 30]> : tensor<3xi64>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<{{\[\[}}1, 3], [2, 4]]> : tensor<2x2xi64>
// CHECK-NEXT: [[CST_2:%.+]] = nn.constant dense<2.500000e+00> : tensor<2x3xf32>
// CHECK-NEXT: return [[CST]], [[CST_1]], [[CST_2]] : tensor<3xi64>, tensor<2x2xi64>, tensor<2x3xf32>
func.func @gather_concat_expand() -> (tensor<3xi64>, tensor<2x2xi64>, tensor<2x3xf32>) {
  %c = nn.constant dense<[10, 20, 30]> : tensor<3xi64>
  %i = nn.constant dense<[2, 0, -1]> : tensor<3xi64>
  %0 = nn.gather %c, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %a = nn.constant dense<[[1], [2]]> : tensor<2x1xi64>
  %b = nn.constant dense<[[3], [4]]> : tensor<2x1xi64>
  %1 = nn.concat %a, %b {axis = 1 : i64} : (tensor<2x1xi64>, tensor<2x1xi64>) -> tensor<2x2xi64>
  %s = nn.constant dense<2.5> : tensor<1xf32>
  %2 = nn.expand %s : (tensor<1xf32>) -> tensor<2x3xf32>
  return %0, %1, %2 : tensor<3xi64>, tensor<2x2xi64>, tensor<2x3xf32>
}

// -----

// An out-of-range gather index is a run-time error, not a fold.
// CHECK-LABEL: func.func @gather_out_of_range(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<[10, 20, 30]> : tensor<3xi64>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<3> : tensor<1xi64>
// CHECK-NEXT: [[GATHER:%.+]] = nn.gather [[CST]], [[CST_1]] {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
// CHECK-NEXT: return [[GATHER]] : tensor<1xi64>
func.func @gather_out_of_range() -> tensor<1xi64> {
  %c = nn.constant dense<[10, 20, 30]> : tensor<3xi64>
  %i = nn.constant dense<[3]> : tensor<1xi64>
  %0 = nn.gather %c, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %0 : tensor<1xi64>
}

// -----

// Constants above 16384 elements are weights, not shape arithmetic: they are
// not evaluated. 128x128 is at the limit and folds; 128x129 does not.
// CHECK-LABEL: func.func @fold_size_limit(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<1> : tensor<128x129xi32>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<2> : tensor<128x128xi32>
// CHECK-NEXT: [[ADD:%.+]] = nn.add [[CST]], [[CST]] : (tensor<128x129xi32>, tensor<128x129xi32>) -> tensor<128x129xi32>
// CHECK-NEXT: return [[CST_1]], [[ADD]] : tensor<128x128xi32>, tensor<128x129xi32>
func.func @fold_size_limit() -> (tensor<128x128xi32>, tensor<128x129xi32>) {
  %a = nn.constant dense<1> : tensor<128x128xi32>
  %0 = nn.add %a, %a : (tensor<128x128xi32>, tensor<128x128xi32>) -> tensor<128x128xi32>
  %b = nn.constant dense<1> : tensor<128x129xi32>
  %1 = nn.add %b, %b : (tensor<128x129xi32>, tensor<128x129xi32>) -> tensor<128x129xi32>
  return %0, %1 : tensor<128x128xi32>, tensor<128x129xi32>
}

// -----

// Small operands whose result is above the limit are not evaluated either.
// CHECK-LABEL: func.func @fold_size_limit_result(
// CHECK-NEXT: [[CST:%.+]] = nn.constant dense<[0, 1, 0]> : tensor<3xi64>
// CHECK-NEXT: [[CST_1:%.+]] = nn.constant dense<3> : tensor<2x8193xi32>
// CHECK-NEXT: [[CST_2:%.+]] = nn.constant dense<{{\[\[}}true], [false]]> : tensor<2x1xi1>
// CHECK-NEXT: [[CST_3:%.+]] = nn.constant dense<1> : tensor<8193xi32>
// CHECK-NEXT: [[CST_4:%.+]] = nn.constant dense<2> : tensor<i32>
// CHECK-NEXT: [[WHERE:%.+]] = nn.where [[CST_2]], [[CST_3]], [[CST_4]] : (tensor<2x1xi1>, tensor<8193xi32>, tensor<i32>) -> tensor<2x8193xi32>
// CHECK-NEXT: [[GATHER:%.+]] = nn.gather [[CST_1]], [[CST]] {axis = 0 : i64} : (tensor<2x8193xi32>, tensor<3xi64>) -> tensor<3x8193xi32>
// CHECK-NEXT: return [[WHERE]], [[GATHER]] : tensor<2x8193xi32>, tensor<3x8193xi32>
func.func @fold_size_limit_result() -> (tensor<2x8193xi32>, tensor<3x8193xi32>) {
  %c = nn.constant dense<[[true], [false]]> : tensor<2x1xi1>
  %a = nn.constant dense<1> : tensor<8193xi32>
  %b = nn.constant dense<2> : tensor<i32>
  %0 = nn.where %c, %a, %b : (tensor<2x1xi1>, tensor<8193xi32>, tensor<i32>) -> tensor<2x8193xi32>
  %m = nn.constant dense<3> : tensor<2x8193xi32>
  %i = nn.constant dense<[0, 1, 0]> : tensor<3xi64>
  %1 = nn.gather %m, %i {axis = 0 : i64} : (tensor<2x8193xi32>, tensor<3xi64>) -> tensor<3x8193xi32>
  return %0, %1 : tensor<2x8193xi32>, tensor<3x8193xi32>
}

// -----

// Pow by a constant 2, 3, 0.5 or 1 becomes multiplies, a square root or x.
// CHECK-LABEL: func.func @pow_by_constant
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
func.func @pow_by_constant(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %two = nn.constant dense<2.0> : tensor<f32>
  %three = nn.constant dense<3.0> : tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %other = nn.constant dense<2.5> : tensor<f32>
  // CHECK: %[[SQ:.*]] = nn.mul %[[X]], %[[X]]
  // CHECK: %[[SQ2:.*]] = nn.mul %[[X]], %[[X]]
  // CHECK: %[[CUBE:.*]] = nn.mul %[[SQ2]], %[[X]]
  // CHECK: %[[ROOT:.*]] = nn.sqrt %[[X]]
  // CHECK: %[[KEEP:.*]] = nn.pow %[[X]], %{{.*}}
  // CHECK: return %[[SQ]], %[[CUBE]], %[[ROOT]], %[[X]], %[[KEEP]]
  %0 = nn.pow %x, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = nn.pow %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = nn.pow %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = nn.pow %x, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %4 = nn.pow %x, %other : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Ceil, Floor and Relu of constants fold (a Range expansion's trip count).
// CHECK-LABEL: func.func @rounding(
// CHECK-NEXT: [[C:%.+]] = nn.constant dense<[2.000000e+00, -1.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT: [[F:%.+]] = nn.constant dense<[1.000000e+00, -2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT: [[R:%.+]] = nn.constant dense<[1.500000e+00, 0.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT: [[I:%.+]] = nn.constant dense<[0, 4]> : tensor<2xi64>
// CHECK-NEXT: return [[C]], [[F]], [[R]], [[I]]
func.func @rounding() -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xi64>) {
  %a = nn.constant dense<[1.5, -1.5, 3.0]> : tensor<3xf32>
  %0 = nn.ceil %a : tensor<3xf32>
  %1 = nn.floor %a : tensor<3xf32>
  %2 = nn.relu %a : tensor<3xf32>
  %i = nn.constant dense<[-3, 4]> : tensor<2xi64>
  %3 = nn.relu %i : tensor<2xi64>
  return %0, %1, %2, %3 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xi64>
}
