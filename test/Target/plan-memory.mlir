// RUN: nncc-opt %s -nncc-plan-buffers -split-input-file | FileCheck %s

// Buffers whose lifetimes are disjoint share an offset; buffers live at the
// same time never overlap; the entry's result is written in place.
func.func private @k(%a: tensor<256xf32>, %init: tensor<256xf32>) -> tensor<256xf32> {
  return %init : tensor<256xf32>
}
// CHECK-LABEL: func.func @chain
// CHECK-SAME: nncc.arena_bytes = 2048
func.func @chain(%x: tensor<256xf32>) -> tensor<256xf32> {
  // CHECK: exec.launch @k({{.*}}nncc.buffers = [#exec.arena<0>]
  %0 = exec.launch @k(%x) {nodes = "a"} : (tensor<256xf32>) -> tensor<256xf32>
  // CHECK: exec.launch @k({{.*}}nncc.buffers = [#exec.arena<1024>]
  %1 = exec.launch @k(%0) {nodes = "b"} : (tensor<256xf32>) -> tensor<256xf32>
  // %0 is dead after b: c reuses its offset.
  // CHECK: exec.launch @k({{.*}}nncc.buffers = [#exec.arena<0>]
  %2 = exec.launch @k(%1) {nodes = "c"} : (tensor<256xf32>) -> tensor<256xf32>
  // CHECK: exec.launch @k({{.*}}nncc.buffers = [#exec.output<0>]
  %3 = exec.launch @k(%2) {nodes = "d"} : (tensor<256xf32>) -> tensor<256xf32>
  return %3 : tensor<256xf32>
}

// -----

// A value read later stays live: the second result must not take its place.
func.func private @k(%a: tensor<256xf32>, %init: tensor<256xf32>) -> tensor<256xf32> {
  return %init : tensor<256xf32>
}
func.func private @add(%a: tensor<256xf32>, %b: tensor<256xf32>, %init: tensor<256xf32>) -> tensor<256xf32> {
  return %init : tensor<256xf32>
}
// CHECK-LABEL: func.func @residual
// CHECK-SAME: nncc.arena_bytes = 3072
func.func @residual(%x: tensor<256xf32>) -> tensor<256xf32> {
  // CHECK: exec.launch @k({{.*}}nncc.buffers = [#exec.arena<0>]
  %0 = exec.launch @k(%x) {nodes = "a"} : (tensor<256xf32>) -> tensor<256xf32>
  // CHECK: exec.launch @k({{.*}}nncc.buffers = [#exec.arena<1024>]
  %1 = exec.launch @k(%0) {nodes = "b"} : (tensor<256xf32>) -> tensor<256xf32>
  // CHECK: exec.launch @k({{.*}}nncc.buffers = [#exec.arena<2048>]
  %2 = exec.launch @k(%1) {nodes = "c"} : (tensor<256xf32>) -> tensor<256xf32>
  // CHECK: exec.launch @add({{.*}}nncc.buffers = [#exec.output<0>]
  %3 = exec.launch @add(%0, %2) {nodes = "d"} : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  return %3 : tensor<256xf32>
}

// -----

// In place: an elementwise kernel may write over an operand that dies there,
// but only over one it lists in inplace_operands, and only when it dies.
func.func private @k(%a: tensor<256xf32>, %init: tensor<256xf32>) -> tensor<256xf32> {
  return %init : tensor<256xf32>
}
func.func private @add(%a: tensor<256xf32>, %b: tensor<256xf32>, %init: tensor<256xf32>) -> tensor<256xf32> {
  return %init : tensor<256xf32>
}
// CHECK-LABEL: func.func @inplace
// CHECK-SAME: nncc.arena_bytes = 3072
func.func @inplace(%x: tensor<256xf32>) -> tensor<256xf32> {
  // CHECK: exec.launch @k({{.*}}nncc.buffers = [#exec.arena<[[A:[0-9]+]]>]
  %0 = exec.launch @k(%x) {nodes = "a"} : (tensor<256xf32>) -> tensor<256xf32>
  // CHECK: exec.launch @k({{.*}}nncc.buffers = [#exec.arena<[[B:[0-9]+]]>]
  %1 = exec.launch @k(%0) {nodes = "b"} : (tensor<256xf32>) -> tensor<256xf32>
  // %1 dies here and is in place: the result takes its buffer.
  // CHECK: exec.launch @add({{.*}}nncc.buffers = [#exec.arena<[[B]]>]
  %2 = exec.launch @add(%0, %1) {nodes = "c", inplace_operands = array<i64: 1>} : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  // %0 is still read below, so it cannot be overwritten here even if listed.
  // CHECK: exec.launch @add({{.*}}nncc.buffers = [#exec.arena<[[C:[0-9]+]]>]
  %3 = exec.launch @add(%0, %2) {nodes = "d", inplace_operands = array<i64: 0>} : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  // CHECK: exec.launch @add({{.*}}nncc.buffers = [#exec.output<0>]
  %4 = exec.launch @add(%0, %3) {nodes = "e"} : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  return %4 : tensor<256xf32>
}

// -----

// Views alias their source: the source stays live while the view is read.
func.func private @k(%a: tensor<256xf32>, %init: tensor<256xf32>) -> tensor<256xf32> {
  return %init : tensor<256xf32>
}
func.func private @k2(%a: tensor<16x16xf32>, %init: tensor<16x16xf32>) -> tensor<16x16xf32> {
  return %init : tensor<16x16xf32>
}
// CHECK-LABEL: func.func @view
func.func @view(%x: tensor<256xf32>) -> tensor<16x16xf32> {
  // CHECK: exec.launch @k({{.*}}nncc.buffers = [#exec.arena<[[A:[0-9]+]]>]
  %0 = exec.launch @k(%x) {nodes = "a"} : (tensor<256xf32>) -> tensor<256xf32>
  %1 = exec.view %0 : tensor<256xf32> -> tensor<16x16xf32>
  // CHECK: exec.launch @k2({{.*}}nncc.buffers = [#exec.output<0>]
  %2 = exec.launch @k2(%1) {nodes = "b"} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  return %2 : tensor<16x16xf32>
}

// -----

// A GEMM accumulates into the buffer of a C operand that dies there (the
// residual of a convolution), with no copy step; a C read later, or one the
// GEMM also reads as A, keeps its own buffer.
func.func private @k(%a: tensor<16x16xf32>, %init: tensor<16x16xf32>) -> tensor<16x16xf32> {
  return %init : tensor<16x16xf32>
}
func.func private @k2(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>, %init: tensor<16x16xf32>) -> tensor<16x16xf32> {
  return %init : tensor<16x16xf32>
}
// CHECK-LABEL: func.func @accumulator_dies
// CHECK-SAME: nncc.arena_bytes = 1024
func.func @accumulator_dies(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // CHECK: exec.launch @k({{.*}}nncc.buffers = [#exec.arena<0>]
  %0 = exec.launch @k(%x) {nodes = "r"} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  // CHECK: exec.gemm {{.*}}nncc.buffers = [#exec.arena<0>]
  %1 = exec.gemm %x, %w acc %0 {alpha = 1.0 : f64, beta = 1.0 : f64, nodes = "g", trans_a = false, trans_b = false} : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  // CHECK: exec.launch @k({{.*}}nncc.buffers = [#exec.output<0>]
  %2 = exec.launch @k(%1) {nodes = "o"} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  return %2 : tensor<16x16xf32>
}
// CHECK-LABEL: func.func @accumulator_read_later
func.func @accumulator_read_later(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // CHECK: exec.launch @k({{.*}}nncc.buffers = [#exec.arena<0>]
  %0 = exec.launch @k(%x) {nodes = "r"} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  // CHECK: exec.gemm {{.*}}nncc.buffers = [#exec.arena<1024>]
  %1 = exec.gemm %x, %w acc %0 {alpha = 1.0 : f64, beta = 1.0 : f64, nodes = "g", trans_a = false, trans_b = false} : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  // CHECK: exec.launch @k2({{.*}}nncc.buffers = [#exec.output<0>]
  %2 = exec.launch @k2(%1, %0) {nodes = "o"} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %2 : tensor<16x16xf32>
}
// CHECK-LABEL: func.func @accumulator_also_a
// CHECK-SAME: nncc.arena_bytes = 2048
func.func @accumulator_also_a(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %0 = exec.launch @k(%x) {nodes = "r"} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  // CHECK: exec.launch @k({{.*}}nncc.buffers = [#exec.arena<0>]
  // CHECK: exec.gemm {{.*}}nncc.buffers = [#exec.arena<1024>]
  %1 = exec.gemm %0, %w acc %0 {alpha = 1.0 : f64, beta = 1.0 : f64, nodes = "g", trans_a = false, trans_b = false} : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %2 = exec.launch @k(%1) {nodes = "o"} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  return %2 : tensor<16x16xf32>
}
