// RUN: nncc-opt %s -nncc-autocast=precision=bf16 -split-input-file | FileCheck %s
// RUN: nncc-opt %s -nncc-autocast=precision=fp16 -split-input-file | FileCheck %s --check-prefix=FP16
// RUN: nncc-opt %s -nncc-autocast=precision=mixed -split-input-file | FileCheck %s --check-prefix=MIXED

// The MLP layer: the GEMM and the bias add and ReLU that follow it run in
// the low type, weights are converted at compile time (0.1 rounds to
// nearest even), softmax runs in f32 and the graph keeps its f32 types.
// One cast in, one cast out.
// CHECK-LABEL: func.func @mlp(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32>
// CHECK-DAG: %[[B:.*]] = nn.constant dense<[1.000980e-01, 2.001950e-01, 3.007810e-01]> : tensor<3xbf16>
// CHECK-DAG: %[[W:.*]] = nn.constant {{.*}} : tensor<4x3xbf16>
// CHECK: %[[X:.*]] = nn.cast %arg0 : (tensor<2x4xf32>) -> tensor<2x4xbf16>
// CHECK: %[[M:.*]] = nn.matmul %[[X]], %[[W]] : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
// CHECK: %[[A:.*]] = nn.add %[[M]], %[[B]] : (tensor<2x3xbf16>, tensor<3xbf16>) -> tensor<2x3xbf16>
// CHECK: %[[R:.*]] = nn.relu %[[A]] : tensor<2x3xbf16>
// CHECK: %[[F:.*]] = nn.cast %[[R]] : (tensor<2x3xbf16>) -> tensor<2x3xf32>
// CHECK: %[[S:.*]] = nn.softmax %[[F]] {axis = 1 : i64} : tensor<2x3xf32>
// CHECK: return %[[S]] : tensor<2x3xf32>
// FP16-LABEL: func.func @mlp
// FP16: nn.matmul {{.*}} : (tensor<2x4xf16>, tensor<4x3xf16>) -> tensor<2x3xf16>
// FP16: nn.relu {{.*}} : tensor<2x3xf16>
// FP16: nn.softmax {{.*}} : tensor<2x3xf32>
// Mixed: bf16 GEMM operands, an f32 result, everything else f32.
// MIXED-LABEL: func.func @mlp
// MIXED-DAG: nn.constant dense<[1.000000e-01, 2.000000e-01, 3.000000e-01]> : tensor<3xf32>
// MIXED: nn.matmul {{.*}} : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xf32>
// MIXED: nn.add {{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// MIXED-NOT: nn.cast
// MIXED: return
func.func @mlp(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = nn.constant dense<[[1.0, 2.0, 3.0], [0.1, 0.2, 0.3], [1.0, 1.0, 1.0], [-1.0, 0.5, 0.25]]> : tensor<4x3xf32>
  %b = nn.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %m = nn.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %a = nn.add %m, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %r = nn.relu %a : tensor<2x3xf32>
  %s = nn.softmax %r {axis = 1 : i64} : tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}

// -----

// Reductions, normalizations and exp read the GEMM result through one
// shared f32 cast; an add of a low and an f32 activation runs in f32 (the
// widest non-constant input); data movement follows its input.
// CHECK-LABEL: func.func @fp32_ops
// CHECK: %[[M:.*]] = nn.matmul {{.*}} -> tensor<2x4xbf16>
// CHECK: %[[F:.*]] = nn.cast %[[M]] : (tensor<2x4xbf16>) -> tensor<2x4xf32>
// CHECK: %[[T:.*]] = nn.transpose %[[M]] {{.*}} -> tensor<4x2xbf16>
// CHECK: %[[TF:.*]] = nn.cast %[[T]] : (tensor<4x2xbf16>) -> tensor<4x2xf32>
// CHECK-NOT: nn.cast
// CHECK: nn.reduce_mean %[[F]] {{.*}} -> tensor<2x1xf32>
// CHECK: nn.layer_norm %[[F]], {{.*}} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK: nn.exp %[[F]] : tensor<2x4xf32>
// CHECK: nn.add %[[F]], %arg0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: return %[[TF]],
func.func @fp32_ops(%x: tensor<2x4xf32>) -> (tensor<4x2xf32>, tensor<2x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %w = nn.constant dense<0.5> : tensor<4x4xf32>
  %g = nn.constant dense<1.0> : tensor<4xf32>
  %m = nn.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %t = nn.transpose %m {perm = array<i64: 1, 0>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
  %mean = nn.reduce_mean %m {axes = array<i64: 1>, keepdims = true} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %n = nn.layer_norm %m, %g {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %e = nn.exp %m : tensor<2x4xf32>
  %a = nn.add %m, %x : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %t, %mean, %n, %e, %a : tensor<4x2xf32>, tensor<2x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// --keep-fp32 by ONNX node name (the location) and by op type.
// RUN: nncc-opt %s -nncc-autocast="precision=bf16 keep-fp32=first,Gemm" -split-input-file | FileCheck %s --check-prefix=KEEP
// KEEP-LABEL: func.func @keep
// KEEP: nn.matmul {{.*}} : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
// KEEP: nn.matmul {{.*}} : (tensor<2x4xbf16>, tensor<4x4xbf16>) -> tensor<2x4xbf16>
// KEEP: nn.gemm {{.*}} : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
func.func @keep(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = nn.constant dense<0.5> : tensor<4x4xf32>
  %a = nn.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("first")
  %b = nn.matmul %a, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("second")
  %c = nn.gemm %b, %w {alpha = 1.0 : f64, beta = 1.0 : f64, trans_a = false, trans_b = false} : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %c : tensor<2x4xf32>
}

// -----

// A constant that overflows f16 (an attention mask of -1e9) keeps its op in
// f32; in bf16 it fits.
// FP16-LABEL: func.func @overflow
// FP16: %[[M:.*]] = nn.matmul {{.*}} -> tensor<2x4xf16>
// FP16: %[[F:.*]] = nn.cast %[[M]] : (tensor<2x4xf16>) -> tensor<2x4xf32>
// FP16: nn.add %[[F]], {{.*}} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-LABEL: func.func @overflow
// CHECK: nn.add {{.*}} : (tensor<2x4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
func.func @overflow(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = nn.constant dense<0.5> : tensor<4x4xf32>
  %mask = nn.constant dense<[0.0, 0.0, -1.0e9, -1.0e9]> : tensor<4xf32>
  %m = nn.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %a = nn.add %m, %mask : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %a : tensor<2x4xf32>
}

// -----

// No cast pairs: a bf16 input the model widens feeds the bf16 GEMM directly
// (bf16 -> f32 -> bf16 is the identity), and in fp16 it is cast once
// (bf16 -> f16, not through f32). A lossy f32 -> f16 -> f32 round trip of
// the model changes values and stays; the add of the GEMM result and that
// f32 value runs in f32.
// CHECK-LABEL: func.func @cast_pairs(%arg0: tensor<2x4xbf16>, %arg1: tensor<2x4xf32>)
// CHECK: %[[M:.*]] = nn.matmul %arg0, {{.*}} : (tensor<2x4xbf16>, tensor<4x4xbf16>) -> tensor<2x4xbf16>
// CHECK: %[[MF:.*]] = nn.cast %[[M]] : (tensor<2x4xbf16>) -> tensor<2x4xf32>
// CHECK: %[[H:.*]] = nn.cast %arg1 : (tensor<2x4xf32>) -> tensor<2x4xf16>
// CHECK: %[[B:.*]] = nn.cast %[[H]] : (tensor<2x4xf16>) -> tensor<2x4xf32>
// CHECK: %[[A:.*]] = nn.add %[[MF]], %[[B]] : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: return %[[A]]
// FP16-LABEL: func.func @cast_pairs
// FP16: %[[X:.*]] = nn.cast %arg0 : (tensor<2x4xbf16>) -> tensor<2x4xf16>
// FP16: nn.matmul %[[X]]
func.func @cast_pairs(%x: tensor<2x4xbf16>, %y: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = nn.constant dense<0.5> : tensor<4x4xf32>
  %f = nn.cast %x : (tensor<2x4xbf16>) -> tensor<2x4xf32>
  %m = nn.matmul %f, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %h = nn.cast %y : (tensor<2x4xf32>) -> tensor<2x4xf16>
  %b = nn.cast %h : (tensor<2x4xf16>) -> tensor<2x4xf32>
  %a = nn.add %m, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %a : tensor<2x4xf32>
}

// -----

// Attention is a GEMM: q, k and v in the low type (all three in mixed too);
// its additive mask stays f32.
// CHECK-LABEL: func.func @attention
// CHECK: nn.attention {{.*}} : (tensor<2x4x8xbf16>, tensor<2x6x8xbf16>, tensor<2x6x3xbf16>, tensor<4x6xf32>) -> tensor<2x4x3xbf16>
// FP16-LABEL: func.func @attention
// FP16: nn.attention {{.*}} : (tensor<2x4x8xf16>, tensor<2x6x8xf16>, tensor<2x6x3xf16>, tensor<4x6xf32>) -> tensor<2x4x3xf16>
// MIXED-LABEL: func.func @attention
// MIXED: nn.attention {{.*}} : (tensor<2x4x8xbf16>, tensor<2x6x8xbf16>, tensor<2x6x3xbf16>, tensor<4x6xf32>) -> tensor<2x4x3xf32>
func.func @attention(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x3xf32>, %m: tensor<4x6xf32>) -> tensor<2x4x3xf32> {
  %0 = nn.attention %q, %k, %v, %m {scale = 0.5 : f64} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x3xf32>, tensor<4x6xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}
