// RUN: nncc-opt %s -nncc-map-kernels-to-gpu | FileCheck %s
// RUN: nncc-opt %s -nncc-map-kernels-to-gpu=emulate=1 | FileCheck %s --check-prefix=EMU

// A fill and an elementwise nest over the same 1000 elements, each thread
// touching only its own element, share one launch of 4 blocks of 256
// threads; the reduction over all of them runs on one thread. Buffers are
// noalias except the in-place launch's operand and result (nncc.may_alias).
// CHECK-LABEL: func.func private @k(
// CHECK-SAME: nncc.gpu_launches = [{block = 256 : i64, grid = 4 : i64, name = "k_0"}, {block = 1 : i64, grid = 1 : i64, name = "k_1"}]
// CHECK-NOT: scf.parallel
// CHECK: gpu.module @nncc_kernels
// CHECK: gpu.func @k_0(%{{.*}}: memref<1000xf32>, %{{.*}}: memref<1000xf32> {llvm.noalias}, %{{.*}}: memref<1000xf32>, %{{.*}}: memref<f32> {llvm.noalias}) kernel
// CHECK: gpu.block_id x
// CHECK: gpu.thread_id x
// CHECK: arith.cmpi ult, %{{.*}}, %c1000
// CHECK: memref.store
// CHECK: memref.load
// CHECK: memref.store
// CHECK: gpu.return
// CHECK: gpu.func @k_1(
// CHECK: scf.for
// CHECK: gpu.return

// With emulate, the kernel stays a host function (marks included) that runs
// each launch's threads in order.
// EMU-LABEL: func.func private @k(
// EMU-SAME: nncc.kernel
// EMU-NOT: gpu.
// EMU: scf.for %[[T:.*]] = %c0 to %c1024 step %c1
// EMU: arith.cmpi ult, %[[T]], %c1000
// EMU: scf.for
// EMU: return
func.func private @k(%a: memref<1000xf32>, %b: memref<1000xf32>, %c: memref<1000xf32>, %sum: memref<f32>)
    attributes {nncc.kernel, nncc.may_alias = array<i64: 0, 2>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1000 = arith.constant 1000 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c1000) step (%c1) {
    memref.store %zero, %b[%i] : memref<1000xf32>
  }
  scf.parallel (%i) = (%c0) to (%c1000) step (%c1) {
    %x = memref.load %a[%i] : memref<1000xf32>
    memref.store %x, %c[%i] : memref<1000xf32>
  }
  scf.for %i = %c0 to %c1000 step %c1 {
    %x = memref.load %c[%i] : memref<1000xf32>
    %s = memref.load %sum[] : memref<f32>
    %t = arith.addf %s, %x : f32
    memref.store %t, %sum[] : memref<f32>
  }
  return
}
