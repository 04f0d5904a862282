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

// A select of bf16 values (the backward of Relu or Max in bf16) picks bits:
// it becomes a select of i16, which LLVM does not promote to f32 and
// truncate back with __truncsfbf2; an f32 select stays.
// CHECK-LABEL: func.func @select_bf16
// CHECK: %[[A:.*]] = arith.bitcast %{{.*}} : vector<8xbf16> to vector<8xi16>
// CHECK: %[[B:.*]] = arith.bitcast %{{.*}} : vector<8xbf16> to vector<8xi16>
// CHECK: %[[S:.*]] = arith.select %{{.*}}, %[[A]], %[[B]] : vector<8xi1>, vector<8xi16>
// CHECK: %[[R:.*]] = arith.bitcast %[[S]] : vector<8xi16> to vector<8xbf16>
// CHECK: %[[SA:.*]] = arith.bitcast %{{.*}} : bf16 to i16
// CHECK: %[[SB:.*]] = arith.bitcast %{{.*}} : bf16 to i16
// CHECK: %[[SS:.*]] = arith.select %{{.*}}, %[[SA]], %[[SB]] : i16
// CHECK: %[[SR:.*]] = arith.bitcast %[[SS]] : i16 to bf16
// CHECK: %[[F:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: return %[[R]], %[[SR]], %[[F]]
func.func @select_bf16(%c: vector<8xi1>, %a: vector<8xbf16>, %b: vector<8xbf16>, %d: i1, %x: bf16, %y: bf16,
                       %u: f32, %v: f32) -> (vector<8xbf16>, bf16, f32) {
  %0 = arith.select %c, %a, %b : vector<8xi1>, vector<8xbf16>
  %1 = arith.select %d, %x, %y : bf16
  %2 = arith.select %d, %u, %v : f32
  return %0, %1, %2 : vector<8xbf16>, bf16, f32
}
