// RUN: nncc-opt %s -nncc-gpu-codegen='archs=sm_80,sm_90' | FileCheck %s

// One PTX object per architecture in one gpu.binary; the kernel, now a
// declaration, keeps its launches (4 blocks of 256 threads for 1000 elements).
// CHECK: llvm.func @k({{.*}}) attributes {nncc.gpu_launches = [{block = 256 : i64, grid = 4 : i64, name = "k_0"}]
// CHECK: gpu.binary @nncc_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">
// CHECK-SAME: .target sm_80
// CHECK-SAME: .visible .entry k_0(
// CHECK-SAME: #gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">
// CHECK-SAME: .target sm_90
// CHECK-SAME: .visible .entry k_0(
func.func private @k(%a: memref<1000xf32>, %b: memref<1000xf32>) attributes {nncc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1000 = arith.constant 1000 : index
  scf.parallel (%i) = (%c0) to (%c1000) step (%c1) {
    %x = memref.load %a[%i] : memref<1000xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %b[%i] : memref<1000xf32>
  }
  return
}
