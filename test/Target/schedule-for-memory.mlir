// RUN: nncc-opt %s -nncc-schedule-for-memory -split-input-file | FileCheck %s

// Two independent branches, each a large value reduced to a small one: run
// each branch to its end before starting the next, so only one large value
// is live at a time.
func.func private @grow(%a: tensor<16xf32>, %init: tensor<4096xf32>) -> tensor<4096xf32> {
  return %init : tensor<4096xf32>
}
func.func private @shrink(%a: tensor<4096xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  return %init : tensor<16xf32>
}
func.func private @join(%a: tensor<16xf32>, %b: tensor<16xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  return %init : tensor<16xf32>
}
// CHECK-LABEL: func.func @branches
// CHECK: exec.launch @grow({{.*}}nodes = "a1"
// CHECK-NEXT: exec.launch @shrink({{.*}}nodes = "a2"
// CHECK-NEXT: exec.launch @grow({{.*}}nodes = "b1"
// CHECK-NEXT: exec.launch @shrink({{.*}}nodes = "b2"
// CHECK-NEXT: exec.launch @join
func.func @branches(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a1 = exec.launch @grow(%x) {nodes = "a1"} : (tensor<16xf32>) -> tensor<4096xf32>
  %b1 = exec.launch @grow(%x) {nodes = "b1"} : (tensor<16xf32>) -> tensor<4096xf32>
  %a2 = exec.launch @shrink(%a1) {nodes = "a2"} : (tensor<4096xf32>) -> tensor<16xf32>
  %b2 = exec.launch @shrink(%b1) {nodes = "b2"} : (tensor<4096xf32>) -> tensor<16xf32>
  %j = exec.launch @join(%a2, %b2) {nodes = "j"} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %j : tensor<16xf32>
}

// -----

// An order that does not lower the peak is kept as written.
func.func private @k(%a: tensor<256xf32>, %init: tensor<256xf32>) -> tensor<256xf32> {
  return %init : tensor<256xf32>
}
func.func private @add(%a: tensor<256xf32>, %b: tensor<256xf32>, %init: tensor<256xf32>) -> tensor<256xf32> {
  return %init : tensor<256xf32>
}
// CHECK-LABEL: func.func @kept
// CHECK: nodes = "b"
// CHECK-NEXT: nodes = "a"
// CHECK-NEXT: nodes = "c"
func.func @kept(%x: tensor<256xf32>) -> tensor<256xf32> {
  %b = exec.launch @k(%x) {nodes = "b"} : (tensor<256xf32>) -> tensor<256xf32>
  %a = exec.launch @k(%x) {nodes = "a"} : (tensor<256xf32>) -> tensor<256xf32>
  %c = exec.launch @add(%a, %b) {nodes = "c"} : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  return %c : tensor<256xf32>
}
