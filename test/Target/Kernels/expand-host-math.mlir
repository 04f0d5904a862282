// RUN: nncc-opt %s -nncc-expand-host-math | FileCheck %s

// f32 tanh becomes a polynomial (vectorizable); sin is not in the list and
// stays for libm; the bf16 truncation becomes integer arithmetic (no
// __truncsfbf2 call).
// CHECK-LABEL: func.func @math
// CHECK-NOT: math.tanh
// CHECK: math.sin
// CHECK-NOT: arith.truncf
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: return
func.func @math(%x: f32) -> (f32, f32, bf16) {
  %t = math.tanh %x : f32
  %s = math.sin %x : f32
  %b = arith.truncf %x : f32 to bf16
  return %t, %s, %b : f32, f32, bf16
}
