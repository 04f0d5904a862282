// RUN: nncc-opt %s -nncc-recompose -split-input-file | FileCheck %s

// Erf-GELU as PyTorch exports it: (x * (erf(x / √2) + 1)) * 0.5.
// CHECK-LABEL: func.func @gelu_erf
// CHECK-NEXT: %[[G:.*]] = nn.gelu %arg0 : tensor<2x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %sqrt2 = nn.constant dense<1.41421354> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %d = nn.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = nn.erf %d : tensor<2x8xf32>
  %a = nn.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = nn.mul %x, %a : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = nn.mul %m, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// The other association, with x * (1/√2): (0.5 * x) * (1 + erf(x * 0.7071)).
// CHECK-LABEL: func.func @gelu_erf_half_first
// CHECK-NEXT: %[[G:.*]] = nn.gelu %arg0 : tensor<8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf_half_first(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = nn.constant dense<0.707106769> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<1xf32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %d = nn.mul %r, %x : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %e = nn.erf %d : tensor<8xf32>
  %a = nn.add %one, %e : (tensor<1xf32>, tensor<8xf32>) -> tensor<8xf32>
  %h = nn.mul %half, %x : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %y = nn.mul %h, %a : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// Must not match: erf(x / 2) is not GELU.
// CHECK-LABEL: func.func @gelu_wrong_constant
// CHECK-NOT: nn.gelu
// CHECK: nn.erf
func.func @gelu_wrong_constant(%x: tensor<8xf32>) -> tensor<8xf32> {
  %two = nn.constant dense<2.0> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %d = nn.div %x, %two : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %e = nn.erf %d : tensor<8xf32>
  %a = nn.add %e, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %m = nn.mul %x, %a : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %y = nn.mul %m, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// Must not match: the erf value is also a result (GELU would recompute it).
// CHECK-LABEL: func.func @gelu_shared_inner
// CHECK-NOT: nn.gelu
// CHECK: nn.erf
func.func @gelu_shared_inner(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %sqrt2 = nn.constant dense<1.41421354> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %d = nn.div %x, %sqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %e = nn.erf %d : tensor<8xf32>
  %a = nn.add %e, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %m = nn.mul %x, %a : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %y = nn.mul %m, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %y, %e : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tanh-GELU (x³ as canonicalization writes it: x * x * x).
// CHECK-LABEL: func.func @gelu_tanh
// CHECK-NEXT: %[[G:.*]] = nn.gelu %arg0 {approximate = "tanh"} : tensor<8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_tanh(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = nn.constant dense<0.044715> : tensor<f32>
  %k = nn.constant dense<0.797884583> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %sq = nn.mul %x, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %cube = nn.mul %sq, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %t0 = nn.mul %cube, %c : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %t1 = nn.add %x, %t0 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %t2 = nn.mul %t1, %k : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %t3 = nn.tanh %t2 : tensor<8xf32>
  %a = nn.add %t3, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %h = nn.mul %x, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %y = nn.mul %h, %a : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// Softmax written out with the maximum subtracted, and without it.
// CHECK-LABEL: func.func @softmax_stable
// CHECK-NEXT: %[[S:.*]] = nn.softmax %arg0 {axis = 1 : i64} : tensor<2x8xf32>
// CHECK-NEXT: return %[[S]]
func.func @softmax_stable(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %mx = nn.reduce_max %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %d = nn.sub %x, %mx : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %e = nn.exp %d : tensor<2x8xf32>
  %s = nn.reduce_sum %e {axes = array<i64: 1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %y = nn.div %e, %s : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @softmax_plain
// CHECK-NEXT: %[[S:.*]] = nn.softmax %arg0 {axis = 0 : i64} : tensor<2x8xf32>
// CHECK-NEXT: return %[[S]]
func.func @softmax_plain(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %e = nn.exp %x : tensor<2x8xf32>
  %s = nn.reduce_sum %e {axes = array<i64: 0>, keepdims = true} : (tensor<2x8xf32>) -> tensor<1x8xf32>
  %y = nn.div %e, %s : (tensor<2x8xf32>, tensor<1x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Must not match: a sum over two axes; an
// exp read by a third op (the softmax would recompute the exponentials).
// CHECK-LABEL: func.func @softmax_two_axes
// CHECK-NOT: nn.softmax
func.func @softmax_two_axes(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %e = nn.exp %x : tensor<2x8xf32>
  %s = nn.reduce_sum %e {axes = array<i64: 0, 1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<1x1xf32>
  %y = nn.div %e, %s : (tensor<2x8xf32>, tensor<1x1xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @softmax_exp_shared
// CHECK-NOT: nn.softmax
func.func @softmax_exp_shared(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %e = nn.exp %x : tensor<2x8xf32>
  %s = nn.reduce_sum %e {axes = array<i64: 1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %y = nn.div %e, %s : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  return %y, %e : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Decomposed LayerNorm (Pow as canonicalization leaves it: d * d), then
// the scale and shift join the op.
// CHECK-LABEL: func.func @layer_norm
// CHECK-DAG: %[[G:.*]] = nn.constant dense<2.000000e+00> : tensor<8xf32>
// CHECK-DAG: %[[B:.*]] = nn.constant dense<3.000000e+00> : tensor<8xf32>
// CHECK: %[[L:.*]] = nn.layer_norm %arg0, %[[G]], %[[B]] {axis = 1 : i64, epsilon = 9.99999974{{.*}}E-6 : f64}
// CHECK-NOT: nn.reduce_mean
// CHECK: return %[[L]]
func.func @layer_norm(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %eps = nn.constant dense<9.99999974E-6> : tensor<f32>
  %g = nn.constant dense<2.0> : tensor<8xf32>
  %b = nn.constant dense<3.0> : tensor<8xf32>
  %mean = nn.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = nn.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = nn.mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ve = nn.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %sd = nn.sqrt %ve : tensor<4x1xf32>
  %n = nn.div %d, %sd : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %s = nn.mul %n, %g : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = nn.add %s, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Must not match: the mean is over a leading axis (not the trailing ones),
// and (second function) the centered value is also a result.
// CHECK-LABEL: func.func @layer_norm_leading_axis
// CHECK-NOT: nn.layer_norm
func.func @layer_norm_leading_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %eps = nn.constant dense<1.0E-5> : tensor<f32>
  %mean = nn.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %d = nn.sub %x, %mean : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %sq = nn.mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 0>, keepdims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %ve = nn.add %var, %eps : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %sd = nn.sqrt %ve : tensor<1x8xf32>
  %n = nn.div %d, %sd : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @layer_norm_centered_shared
// CHECK-NOT: nn.layer_norm
func.func @layer_norm_centered_shared(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %eps = nn.constant dense<1.0E-5> : tensor<f32>
  %mean = nn.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = nn.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = nn.mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ve = nn.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %sd = nn.sqrt %ve : tensor<4x1xf32>
  %n = nn.div %d, %sd : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n, %d : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Scaled dot-product attention: MatMul(q, kᵀ) / √d + mask, Softmax, MatMul v.
// kᵀ's transpose composes with the one attention adds back.
// CHECK-LABEL: func.func @attention
// CHECK: %[[A:.*]] = nn.attention %arg0, %arg1, %arg2, %arg3 {scale = 5.000000e-01 : f64}
// CHECK-SAME: (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x3xf32>, tensor<4x6xf32>) -> tensor<2x4x3xf32>
// CHECK-NOT: nn.softmax
// CHECK: return %[[A]]
func.func @attention(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x3xf32>, %mask: tensor<4x6xf32>) -> tensor<2x4x3xf32> {
  %c = nn.constant dense<2.0> : tensor<f32>
  %kt = nn.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<2x6x8xf32>) -> tensor<2x8x6xf32>
  %s = nn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x6xf32>) -> tensor<2x4x6xf32>
  %d = nn.div %s, %c : (tensor<2x4x6xf32>, tensor<f32>) -> tensor<2x4x6xf32>
  %m = nn.add %d, %mask : (tensor<2x4x6xf32>, tensor<4x6xf32>) -> tensor<2x4x6xf32>
  %p = nn.softmax %m {axis = 2 : i64} : tensor<2x4x6xf32>
  %y = nn.matmul %p, %v : (tensor<2x4x6xf32>, tensor<2x6x3xf32>) -> tensor<2x4x3xf32>
  return %y : tensor<2x4x3xf32>
}

// -----

// A scale multiplied, no mask.
// CHECK-LABEL: func.func @attention_mul_scale
// CHECK: nn.attention %arg0, %{{.*}}, %arg2 {scale = 1.250000e-01 : f64}
func.func @attention_mul_scale(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %c = nn.constant dense<0.125> : tensor<f32>
  %s = nn.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %d = nn.mul %s, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = nn.softmax %d {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %y = nn.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// Must not match: the probabilities are also a result (attention would not
// produce them), and a softmax over another axis than the keys.
// CHECK-LABEL: func.func @attention_probs_shared
// CHECK-NOT: nn.attention
func.func @attention_probs_shared(%q: tensor<2x4x8xf32>, %kt: tensor<2x8x4xf32>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x4xf32>) {
  %s = nn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %p = nn.softmax %s {axis = 2 : i64} : tensor<2x4x4xf32>
  %y = nn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %y, %p : tensor<2x4x8xf32>, tensor<2x4x4xf32>
}

// CHECK-LABEL: func.func @attention_query_axis
// CHECK-NOT: nn.attention
func.func @attention_query_axis(%q: tensor<2x4x8xf32>, %kt: tensor<2x8x4xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %s = nn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %p = nn.softmax %s {axis = 1 : i64} : tensor<2x4x4xf32>
  %y = nn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// The Q/K/V projections of one attention merge: one MatMul over [Wq Wk Wv],
// one Add of [bq bk bv], a column slice each (the head split reads them).
// CHECK-LABEL: func.func @sibling_projections
// CHECK-DAG: %[[W:.*]] = nn.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-DAG: %[[B:.*]] = nn.constant dense<[7.000000e+00, 8.000000e+00, 9.000000e+00]> : tensor<3xf32>
// CHECK: %[[M:.*]] = nn.matmul %arg0, %[[W]] : (tensor<1x5x2xf32>, tensor<2x3xf32>) -> tensor<1x5x3xf32>
// CHECK: %[[S:.*]] = nn.add %[[M]], %[[B]]
// CHECK-DAG: nn.slice %[[S]] {ends = array<i64: 1, 5, 1>, starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>}
// CHECK-DAG: nn.slice %[[S]] {ends = array<i64: 1, 5, 2>, starts = array<i64: 0, 0, 1>, steps = array<i64: 1, 1, 1>}
// CHECK-DAG: nn.slice %[[S]] {ends = array<i64: 1, 5, 3>, starts = array<i64: 0, 0, 2>, steps = array<i64: 1, 1, 1>}
// CHECK: nn.attention
// CHECK-NOT: nn.matmul
func.func @sibling_projections(%x: tensor<1x5x2xf32>) -> tensor<1x5x1xf32> {
  %wq = nn.constant dense<[[1.0], [4.0]]> : tensor<2x1xf32>
  %wk = nn.constant dense<[[2.0], [5.0]]> : tensor<2x1xf32>
  %wv = nn.constant dense<[[3.0], [6.0]]> : tensor<2x1xf32>
  %bq = nn.constant dense<[7.0]> : tensor<1xf32>
  %bk = nn.constant dense<[8.0]> : tensor<1xf32>
  %bv = nn.constant dense<[9.0]> : tensor<1xf32>
  %mq = nn.matmul %x, %wq : (tensor<1x5x2xf32>, tensor<2x1xf32>) -> tensor<1x5x1xf32>
  %q = nn.add %mq, %bq : (tensor<1x5x1xf32>, tensor<1xf32>) -> tensor<1x5x1xf32>
  %mk = nn.matmul %x, %wk : (tensor<1x5x2xf32>, tensor<2x1xf32>) -> tensor<1x5x1xf32>
  %k = nn.add %mk, %bk : (tensor<1x5x1xf32>, tensor<1xf32>) -> tensor<1x5x1xf32>
  %mv = nn.matmul %x, %wv : (tensor<1x5x2xf32>, tensor<2x1xf32>) -> tensor<1x5x1xf32>
  %v = nn.add %mv, %bv : (tensor<1x5x1xf32>, tensor<1xf32>) -> tensor<1x5x1xf32>
  %y = nn.attention %q, %k, %v {scale = 1.0 : f64} : (tensor<1x5x1xf32>, tensor<1x5x1xf32>, tensor<1x5x1xf32>) -> tensor<1x5x1xf32>
  return %y : tensor<1x5x1xf32>
}

// -----

// Must not merge: projections of one input that no attention reads (their
// slices would have to be copied), and a weight that is not a constant.
// CHECK-LABEL: func.func @sibling_without_attention
// CHECK-COUNT-2: nn.matmul
// CHECK-NOT: nn.slice
func.func @sibling_without_attention(%x: tensor<5x2xf32>) -> (tensor<5x2xf32>, tensor<5x2xf32>) {
  %w1 = nn.constant dense<1.0> : tensor<2x2xf32>
  %w2 = nn.constant dense<2.0> : tensor<2x2xf32>
  %b = nn.constant dense<1.0> : tensor<2xf32>
  %m1 = nn.matmul %x, %w1 : (tensor<5x2xf32>, tensor<2x2xf32>) -> tensor<5x2xf32>
  %y1 = nn.add %m1, %b : (tensor<5x2xf32>, tensor<2xf32>) -> tensor<5x2xf32>
  %m2 = nn.matmul %x, %w2 : (tensor<5x2xf32>, tensor<2x2xf32>) -> tensor<5x2xf32>
  %y2 = nn.add %m2, %b : (tensor<5x2xf32>, tensor<2xf32>) -> tensor<5x2xf32>
  return %y1, %y2 : tensor<5x2xf32>, tensor<5x2xf32>
}

// CHECK-LABEL: func.func @sibling_not_constant
// CHECK-COUNT-2: nn.matmul
// CHECK-NOT: nn.slice
func.func @sibling_not_constant(%x: tensor<1x5x2xf32>, %wk: tensor<2x2xf32>) -> tensor<1x5x2xf32> {
  %wq = nn.constant dense<1.0> : tensor<2x2xf32>
  %b = nn.constant dense<1.0> : tensor<2xf32>
  %mq = nn.matmul %x, %wq : (tensor<1x5x2xf32>, tensor<2x2xf32>) -> tensor<1x5x2xf32>
  %q = nn.add %mq, %b : (tensor<1x5x2xf32>, tensor<2xf32>) -> tensor<1x5x2xf32>
  %mk = nn.matmul %x, %wk : (tensor<1x5x2xf32>, tensor<2x2xf32>) -> tensor<1x5x2xf32>
  %k = nn.add %mk, %b : (tensor<1x5x2xf32>, tensor<2xf32>) -> tensor<1x5x2xf32>
  %y = nn.attention %q, %k, %k {scale = 1.0 : f64} : (tensor<1x5x2xf32>, tensor<1x5x2xf32>, tensor<1x5x2xf32>) -> tensor<1x5x2xf32>
  return %y : tensor<1x5x2xf32>
}

// -----

// A causal Where(mask, scores, -inf) is the additive mask 0 / -inf.
// CHECK-LABEL: func.func @attention_causal_where
// CHECK: %[[M:.*]] = nn.constant dense<{{\[\[}}0.000000e+00, 0xFF800000], [0.000000e+00, 0.000000e+00]]> : tensor<2x2xf32>
// CHECK: nn.attention %arg0, %{{.*}}, %arg2, %[[M]] {scale = 1.000000e+00 : f64}
// CHECK-NOT: nn.where
func.func @attention_causal_where(%q: tensor<1x2x4xf32>, %kt: tensor<1x4x2xf32>, %v: tensor<1x2x4xf32>) -> tensor<1x2x4xf32> {
  %causal = nn.constant dense<[[true, false], [true, true]]> : tensor<2x2xi1>
  %ninf = nn.constant dense<0xFF800000> : tensor<f32>
  %s = nn.matmul %q, %kt : (tensor<1x2x4xf32>, tensor<1x4x2xf32>) -> tensor<1x2x2xf32>
  %w = nn.where %causal, %s, %ninf : (tensor<2x2xi1>, tensor<1x2x2xf32>, tensor<f32>) -> tensor<1x2x2xf32>
  %p = nn.softmax %w {axis = 2 : i64} : tensor<1x2x2xf32>
  %y = nn.matmul %p, %v : (tensor<1x2x2xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

// Must not match: a finite fill value (Where(mask, s, -1e4) is not s + mask).
// CHECK-LABEL: func.func @attention_finite_where
// CHECK-NOT: nn.attention
func.func @attention_finite_where(%q: tensor<1x2x4xf32>, %kt: tensor<1x4x2xf32>, %v: tensor<1x2x4xf32>) -> tensor<1x2x4xf32> {
  %causal = nn.constant dense<[[true, false], [true, true]]> : tensor<2x2xi1>
  %fill = nn.constant dense<-1.0e4> : tensor<f32>
  %s = nn.matmul %q, %kt : (tensor<1x2x4xf32>, tensor<1x4x2xf32>) -> tensor<1x2x2xf32>
  %w = nn.where %causal, %s, %fill : (tensor<2x2xi1>, tensor<1x2x2xf32>, tensor<f32>) -> tensor<1x2x2xf32>
  %p = nn.softmax %w {axis = 2 : i64} : tensor<1x2x2xf32>
  %y = nn.matmul %p, %v : (tensor<1x2x2xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}
