// RUN: nncc-opt %s -nncc-map-kernels-to-gpu -verify-diagnostics

// A value one launch computes (on one thread) and another reads (in every
// thread) cannot be passed between launches.
// expected-error @+1 {{kernel 'crossing': a value defined by 'arith.addf' is used by another launch}}
func.func private @crossing(%a: memref<4xf32>, %b: memref<4xf32>) attributes {nncc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %x = memref.load %a[%c0] : memref<4xf32>
  %y = arith.addf %x, %x : f32
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %y, %b[%i] : memref<4xf32>
  }
  return
}
