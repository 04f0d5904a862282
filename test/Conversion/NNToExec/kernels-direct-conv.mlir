// RUN: nncc-opt %s -split-input-file -nncc-form-conv-kernels="plan=cpu fuse-epilogues=false vector-bits=512 vector-registers=32" -mlir-print-local-scope | FileCheck %s
// RUN: nncc-opt %s -split-input-file -nncc-form-conv-kernels="plan=cpu fuse-epilogues=false" -mlir-print-local-scope | FileCheck %s --check-prefix=AVX2

// Direct convolutions (DirectConv.cpp), reached through the CPU plan of
// nncc-form-conv-kernels: one scf.forall task per tile of output channels x
// rows x a column chunk; vector<16xf32> accumulators (AVX-512) carried over the
// input-channel loop, each tap one vector read of an input row and one
// broadcast weight per output channel feeding vector.fma.

// An ungrouped 3x3 pad-1 convolution reads a zero-padded copy of the input
// (the k0_pad kernel). A tile is 8 channels x 2 rows x 16 columns: 8 tasks,
// 16 accumulators, 8 x 2 x 9 taps = 144 FMAs per input channel.
// With AVX2's 8 lanes and 16 registers the same convolution is tiled as 4
// channels x 1 row x 16 columns: 8 accumulators, 32 tasks.
// AVX2-LABEL: func.func @padded_copy
// AVX2: func.func private @k0_conv
// AVX2: scf.forall (%{{.*}}) in (32)
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-LABEL: func.func @padded_copy
// CHECK: %[[P:.*]] = exec.launch @k0_pad(%arg0) {{.*}} : (tensor<1x8x16x16xf32>) -> tensor<1x8x18x18xf32>
// CHECK: exec.launch @k0_conv(%[[P]], %arg1) {{.*}} : (tensor<1x8x18x18xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
// CHECK: func.func private @k0_pad
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// Zeros on the border only (top and bottom rows, left and right columns),
// each element of the copy written once:
// CHECK: linalg.fill ins(%[[Z]] : f32) outs(%{{.*}} : tensor<1x8x1x18xf32>)
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 0, 0] [1, 8, 1, 18]
// CHECK: linalg.fill ins(%[[Z]] : f32) outs(%{{.*}} : tensor<1x8x1x18xf32>)
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 17, 0] [1, 8, 1, 18]
// CHECK: linalg.fill ins(%[[Z]] : f32) outs(%{{.*}} : tensor<1x8x16x1xf32>)
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 1, 0] [1, 8, 16, 1]
// CHECK: linalg.fill ins(%[[Z]] : f32) outs(%{{.*}} : tensor<1x8x16x1xf32>)
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 1, 17] [1, 8, 16, 1]
// CHECK-NOT: linalg.fill
// CHECK: tensor.insert_slice %arg0 into %{{.*}}[0, 0, 1, 1] [1, 8, 16, 16] [1, 1, 1, 1]
// CHECK: func.func private @k0_conv(%arg0: tensor<1x8x18x18xf32>, %arg1: tensor<8x8x3x3xf32>, %arg2: tensor<1x8x16x16xf32> {bufferization.writable = true})
// CHECK: %[[ZV:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK: scf.forall (%{{.*}}) in (8) shared_outs(%[[OUT:.*]] = %arg2)
// CHECK: %[[ACC:.*]]:16 = scf.for %[[C:.*]] = %{{.*}} to %[[NC:.*]] step %{{.*}} iter_args(%[[A0:[^ ]*]] = %[[ZV]], %[[A1:[^ ]*]] = %[[ZV]],
// CHECK-SAME: -> (vector<16xf32>,
// CHECK: %[[IC:.*]] = arith.addi %{{.*}}, %[[C]] : index
// CHECK: %[[R0:.*]] = vector.transfer_read %arg0[%{{.*}}, %[[IC]], %{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<1x8x18x18xf32>, vector<16xf32>
// CHECK: %[[R1:.*]] = vector.transfer_read %arg0[%{{.*}}, %[[IC]], %{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<1x8x18x18xf32>, vector<16xf32>
// CHECK: %[[W:.*]] = tensor.extract %arg1[%{{.*}}, %[[C]], %{{.*}}, %{{.*}}] : tensor<8x8x3x3xf32>
// CHECK-NEXT: %[[WB:.*]] = vector.broadcast %[[W]] : f32 to vector<16xf32>
// CHECK-NEXT: vector.fma %[[WB]], %[[R0]], %[[A0]] : vector<16xf32>
// CHECK-NEXT: vector.fma %[[WB]], %[[R1]], %[[A1]] : vector<16xf32>
// CHECK-COUNT-142: vector.fma
// CHECK-NOT: vector.fma
// CHECK: scf.yield
// CHECK: %[[TILE:.*]] = tensor.extract_slice %[[OUT]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] [1, 8, 2, 16] [1, 1, 1, 1] : tensor<1x8x16x16xf32> to tensor<8x2x16xf32>
// CHECK: vector.transfer_write %[[ACC]]#0, %[[TILE]]
// CHECK-COUNT-15: vector.transfer_write
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][{{.*}}] [1, 8, 2, 16] [1, 1, 1, 1] : tensor<8x2x16xf32> into tensor<1x8x16x16xf32>
func.func @padded_copy(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
  return %0 : tensor<1x8x16x16xf32>
}

// -----

// A depthwise convolution reads the input in place (no pad kernel): a row
// above the image (oh - 1) is clamped for the read and replaced by zeros
// through its validity flag, and the leftmost tap (column -1) shifts a zero
// into lane 0. Reading in place keeps masks, selects and the 9 weights live,
// so its tiles get half the accumulators of a padded copy's: 1 channel x 8
// rows x 16 columns, 16 tasks, 8 accumulators, 72 FMAs per body (leftmost
// and interior tiles).
// CHECK-LABEL: func.func @depthwise_in_place
// CHECK-NOT: k0_pad
// CHECK: exec.launch @k0_conv(%arg0, %arg1)
// CHECK: func.func private @k0_conv(%arg0: tensor<1x8x16x16xf32>, %arg1: tensor<8x1x3x3xf32>
// CHECK: %[[ZV:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK: scf.forall (%{{.*}}) in (16)
// CHECK: %[[M1:.*]] = arith.constant -1 : index
// CHECK: %[[UP:.*]] = arith.addi %{{.*}}, %[[M1]] : index
// CHECK: %[[H:.*]] = arith.constant 16 : index
// CHECK-NEXT: %[[LT:.*]] = arith.cmpi slt, %[[UP]], %[[H]] : index
// CHECK: %[[GE:.*]] = arith.cmpi sge, %[[UP]], %{{.*}} : index
// CHECK-NEXT: %[[OK:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK: %[[LO:.*]] = arith.maxsi %[[UP]], %{{.*}} : index
// CHECK: %[[CL:.*]] = arith.minsi %[[LO]], %{{.*}} : index
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK: %[[V:.*]] = vector.transfer_read %arg0[%{{.*}}, %{{.*}}, %[[CL]], %{{.*}}], %{{.*}} : tensor<1x8x16x16xf32>, vector<16xf32>
// CHECK-NEXT: %[[SH:.*]] = vector.shuffle %[[ZV]], %[[V]] [0, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30] : vector<16xf32>, vector<16xf32>
// CHECK-NEXT: arith.select %[[OK]], %[[SH]], %[[ZV]] : vector<16xf32>
// CHECK-COUNT-144: vector.fma
// CHECK-NOT: vector.fma
// CHECK: tensor.parallel_insert_slice
func.func @depthwise_in_place(%x: tensor<1x8x16x16xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 8 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x16x16xf32>
  return %0 : tensor<1x8x16x16xf32>
}

// -----

// A 7x7 window (49 taps, more than the 16 unrolled at most) loops over its
// kernel rows inside the input-channel loop, each row's 7 taps unrolled:
// 8 channels x 2 rows x 7 taps = 112 FMAs per kernel row, and the weight
// read at the row loop's index. (All 49 taps in one block made LLVM spill
// hoisted weight broadcasts: docs/performance.md.)
// Its copy is split into 2 column phases, [1, 3, 38, 2, 19], by one task
// per copy row (PhaseSplitCopy.cpp): the row's two phases zeroed, then,
// inside x's rows, per 32 input columns two vector loads, the even lanes
// (input column 2t, copy column 2t + 3: phase 1, column t + 1) and the odd
// ones (phase 0, column t + 2) stored; the frame's rows stay zero.
// CHECK-LABEL: func.func @stem_loops_kernel_rows
// CHECK: func.func private @k0_pad
// CHECK: scf.forall (%{{.*}}) in (114)
// CHECK: tensor.extract_slice {{.*}} [1, 1, 1, 2, 19] [1, 1, 1, 1, 1] : tensor<1x3x38x2x19xf32> to tensor<2x19xf32>
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} -> tensor<2x19xf32>
// CHECK: %[[ROW:.*]] = scf.if
// CHECK: scf.for %[[B:.*]] = %c0 to %c32{{.*}} step %c32
// CHECK: %[[V0:.*]] = vector.transfer_read %arg0{{.*}} {in_bounds = [true]} : tensor<1x3x32x32xf32>, vector<16xf32>
// CHECK: %[[V1:.*]] = vector.transfer_read %arg0
// CHECK: %[[H:.*]] = arith.divui %[[B]], %c2
// CHECK: %[[E:.*]] = vector.shuffle %[[V0]], %[[V1]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// CHECK: %[[EC:.*]] = arith.addi %[[H]], %c1
// CHECK: vector.transfer_write %[[E]], %{{.*}}[%c1{{.*}}, %[[EC]]] {in_bounds = [true]}
// CHECK: %[[O:.*]] = vector.shuffle %[[V0]], %[[V1]] [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31]
// CHECK: %[[OC:.*]] = arith.addi %[[H]], %c2
// CHECK: vector.transfer_write %[[O]], %{{.*}}[%c0{{.*}}, %[[OC]]] {in_bounds = [true]}
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[Z]]
// CHECK: tensor.parallel_insert_slice %[[ROW]]
// CHECK: func.func private @k0_conv
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<16xf32>,
// CHECK: scf.for %[[KY:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<16xf32>,
// CHECK: tensor.extract %arg1[%{{.*}}, %[[C]], %[[KY]], %{{.*}}] : tensor<8x3x7x7xf32>
// CHECK-COUNT-112: vector.fma
// CHECK-NOT: vector.fma
// CHECK: scf.yield
// CHECK-NOT: vector.fma
// CHECK: scf.yield
// CHECK-NOT: vector.fma
// CHECK: tensor.parallel_insert_slice
func.func @stem_loops_kernel_rows(%x: tensor<1x3x32x32xf32>, %w: tensor<8x3x7x7xf32>) -> tensor<1x8x16x16xf32> {
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x3x32x32xf32>, tensor<8x3x7x7xf32>) -> tensor<1x8x16x16xf32>
  return %0 : tensor<1x8x16x16xf32>
}

// -----

// The column chunk fills its vectors: an 80-wide row on 16 lanes is tiled
// as 5 chunks of 16 columns (one full vector: 8 channels x 2 rows, 20
// tasks), not 4 chunks of 20 (two vectors, 62% of their lanes); on AVX2's
// 8 lanes, 16 columns are two full vectors (4 channels x 1 row, 80 tasks).
// AVX2-LABEL: func.func @row_chunk_fills_its_vectors
// AVX2: scf.forall (%{{.*}}) in (80)
// AVX2: tensor.parallel_insert_slice {{.*}} [1, 4, 1, 16] [1, 1, 1, 1] : tensor<4x1x16xf32> into tensor<1x8x8x80xf32>
// CHECK-LABEL: func.func @row_chunk_fills_its_vectors
// CHECK: scf.forall (%{{.*}}) in (20)
// CHECK: tensor.parallel_insert_slice {{.*}} [1, 8, 2, 16] [1, 1, 1, 1] : tensor<8x2x16xf32> into tensor<1x8x8x80xf32>
func.func @row_chunk_fills_its_vectors(%x: tensor<1x8x8x80xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x8x80xf32> {
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x8x80xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x80xf32>
  return %0 : tensor<1x8x8x80xf32>
}
