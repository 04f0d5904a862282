// RUN: nncc-opt %s -split-input-file -nncc-form-conv-kernels="plan=cpu vector-bits=512 vector-registers=32" -mlir-print-local-scope | FileCheck %s
// RUN: nncc-opt %s -split-input-file -nncc-form-conv-kernels="plan=cpu" -mlir-print-local-scope | FileCheck %s --check-prefix=AVX2

// Implicit-GEMM convolutions (ImplicitGemmConv.cpp): output planes too narrow
// for a direct kernel's column lanes put output channels in the lanes. A
// 7x7 output on AVX-512 (7 columns would fill 7 of 16 lanes): tiles of one
// row's 7 positions x 2 vectors of 16 channels, 14 tasks, 14 accumulators;
// per input channel 9 taps x (2 weight vectors + 7 broadcasts, 14 FMAs).
// The weights are laid out [M / 32, C*9, 32] at compile time, the input
// read through its zero-padded copy, bias and Relu applied in registers,
// and the position-major result [N, 49, M] transposed to NCHW by a kernel
// (the generic: rows of 7 are narrower than its 8 x 8 blocks).
// CHECK-LABEL: func.func @seven_by_seven_relu
// CHECK: %[[P:.*]] = exec.launch @k0_pad(%arg0) {{.*}} -> tensor<2x16x9x9xf32>
// CHECK: %[[W:.*]] = nn.constant dense<5.000000e-01> : tensor<1x144x32xf32>
// CHECK: %[[C:.*]] = exec.launch @k0_conv(%[[P]], %[[W]], %arg1) {{.*}} -> tensor<2x49x32xf32>
// CHECK: %[[T:.*]] = exec.launch @k0_transpose(%[[C]]) {{.*}} -> tensor<2x32x7x7xf32>
// CHECK: return %[[T]]
// CHECK: func.func private @k0_conv
// CHECK: scf.forall (%{{.*}}) in (14)
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: vector.transfer_read %arg1[%{{.*}}, %{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<1x144x32xf32>, vector<16xf32>
// CHECK-NEXT: arith.constant 16 : index
// CHECK-NEXT: vector.transfer_read %arg1
// CHECK-NEXT: tensor.extract %arg0[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<2x16x9x9xf32>
// CHECK-NEXT: vector.broadcast {{.*}} : f32 to vector<16xf32>
// CHECK-NEXT: vector.fma
// CHECK-NEXT: vector.fma
// CHECK-COUNT-124: vector.fma
// CHECK-NOT: vector.fma
// CHECK: scf.yield
// CHECK: vector.transfer_read %arg2[%{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<32xf32>, vector<16xf32>
// CHECK: arith.addf {{.*}} : vector<16xf32>
// CHECK-NEXT: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: tensor.extract_slice %{{.*}} [1, 7, 32] [1, 1, 1] : tensor<2x49x32xf32> to tensor<7x32xf32>
// CHECK-COUNT-14: vector.transfer_write
// CHECK: tensor.parallel_insert_slice {{.*}} [1, 7, 32] [1, 1, 1] : tensor<7x32xf32> into tensor<2x49x32xf32>
// AVX2 fills 7 of its 8 lanes with the columns, but its direct tile of 8
// channels x 1 vector loads a broadcast weight per FMA (9 loads per 8
// FMAs: directConvIsLoadBound): the implicit GEMM there too, 6 positions x
// 2 vectors.
// AVX2-LABEL: func.func @seven_by_seven_relu
// AVX2: %[[C:.*]] = exec.launch @k0_conv({{.*}}) {{.*}} -> tensor<2x49x32xf32>
// AVX2: exec.launch @k0_transpose(%[[C]])
func.func @seven_by_seven_relu(%x: tensor<2x16x7x7xf32>, %b: tensor<32xf32>) -> tensor<2x32x7x7xf32> {
  %w = nn.constant dense<0.5> : tensor<32x16x3x3xf32>
  %0 = nn.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x16x7x7xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<2x32x7x7xf32>
  %1 = nn.relu %0 : tensor<2x32x7x7xf32>
  return %1 : tensor<2x32x7x7xf32>
}

// -----

// A 4x4 output at batch 1: every weight is read from beyond L2 once a run,
// so the tile takes all 4 rows x 4 positions x 1 vector on AVX-512 (16
// channels, 16 accumulators, one task), each weight vector feeding 16 FMAs;
// on AVX2 6 consecutive positions x 2 vectors of 8 channels (12
// accumulators, implicitGemmAccumulators; 1 vector would load a broadcast
// per FMA): the positions span rows, each computed from the tile's first,
// and the last of the 3 tiles starts at position 10, computing 2 of its
// neighbour's positions again. A residual Add is folded into the transpose,
// which reads the position-major result and the residual (the tile is not
// the residual's layout).
// CHECK-LABEL: func.func @four_by_four_residual
// CHECK: nn.constant dense<2.500000e-01> : tensor<1x72x16xf32>
// CHECK: %[[C:.*]] = exec.launch @k0_conv({{.*}}) {{.*}} -> tensor<1x16x16xf32>
// CHECK: %[[T:.*]] = exec.launch @k0_transpose(%[[C]], %arg1) {{.*}} -> tensor<1x16x4x4xf32>
// CHECK-NOT: nn.add
// CHECK: return %[[T]]
// CHECK: func.func private @k0_conv
// CHECK: scf.forall (%{{.*}}) in (1)
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-COUNT-16: tensor.extract %arg0
// CHECK: tensor.extract_slice %{{.*}} [1, 16, 16] [1, 1, 1] : tensor<1x16x16xf32> to tensor<16x16xf32>
// CHECK: func.func private @k0_transpose
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2 * 4 + d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK: arith.addf
// AVX2-LABEL: func.func @four_by_four_residual
// AVX2: nn.constant dense<2.500000e-01> : tensor<1x72x16xf32>
// AVX2: exec.launch @k0_conv({{.*}}) {{.*}} -> tensor<1x16x16xf32>
// AVX2: func.func private @k0_conv
// AVX2: scf.forall (%{{.*}}) in (3)
// AVX2: %[[P0:.*]] = arith.minui %{{.*}}, %c10 : index
// AVX2: %[[LAST:.*]] = arith.addi %[[P0]], %c5{{.*}} : index
// AVX2: arith.divui %[[LAST]], %c4{{.*}} : index
// AVX2: arith.remui %[[LAST]], %c4{{.*}} : index
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2-COUNT-6: tensor.extract %arg0
// AVX2: tensor.extract_slice %{{.*}}[%{{.*}}, %[[P0]], %{{.*}}] [1, 6, 16] [1, 1, 1] : tensor<1x16x16xf32> to tensor<6x16xf32>
func.func @four_by_four_residual(%x: tensor<1x8x4x4xf32>, %r: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %w = nn.constant dense<0.25> : tensor<16x8x3x3xf32>
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x4x4xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x4x4xf32>
  %1 = nn.add %0, %r : (tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  return %1 : tensor<1x16x4x4xf32>
}

// -----

// Training modules' weights are no constants: the GEMM form stays.
// CHECK-LABEL: func.func @variable_weights
// CHECK-NOT: k0_conv
// CHECK: return
func.func @variable_weights(%x: tensor<1x8x4x4xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<1x16x4x4xf32> {
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x4x4xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x4x4xf32>
  return %0 : tensor<1x16x4x4xf32>
}

// -----

// Rows a direct kernel fills to 7/8 of its lanes (implicitBeatsDirect): the
// idle FMA lanes per output element, C*9*(1/7), against the transpose's 4L.
// 64 channels over 14x14 (82): the implicit GEMM on both CPUs.
// CHECK-LABEL: func.func @fourteen_wide_rows
// CHECK: exec.launch @k0_conv({{.*}}) {{.*}} -> tensor<1x196x64xf32>
// CHECK: exec.launch @k0_transpose
// AVX2-LABEL: func.func @fourteen_wide_rows
// AVX2: exec.launch @k0_conv({{.*}}) {{.*}} -> tensor<1x196x64xf32>
// AVX2: exec.launch @k0_transpose
func.func @fourteen_wide_rows(%x: tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32> {
  %w = nn.constant dense<0.125> : tensor<64x64x3x3xf32>
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x14x14xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x14x14xf32>
  return %0 : tensor<1x64x14x14xf32>
}

// -----

// 32 channels over 28x28 (41): the direct kernel on AVX-512 (4L = 64), the
// implicit GEMM on AVX2 (4L = 32).
// CHECK-LABEL: func.func @twenty_eight_wide_rows
// CHECK: exec.launch @k0_conv({{.*}}) {{.*}} -> tensor<1x32x28x28xf32>
// CHECK-NOT: k0_transpose
// AVX2-LABEL: func.func @twenty_eight_wide_rows
// AVX2: exec.launch @k0_conv({{.*}}) {{.*}} -> tensor<1x784x32xf32>
// AVX2: exec.launch @k0_transpose
func.func @twenty_eight_wide_rows(%x: tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32> {
  %w = nn.constant dense<0.125> : tensor<32x32x3x3xf32>
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x32x28x28xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x28x28xf32>
  return %0 : tensor<1x32x28x28xf32>
}

// -----

// ResNet's 256-channel 4x4 stage at batch 4: its 2.4 MB of weights exceed
// L2, so the tiles walk the channel blocks outside the images
// (blocksOuterIsCheaper: the batch's input, 147 KB, stays in L2) and read
// each block's weights from beyond L2 once, not once per image. The task
// index splits into the position chunk and row group (1 each: a tile is
// all 16 positions, as at batch 1), the image (4) and, slowest, the block
// of 16 channels (16).
// CHECK-LABEL: func.func @blocks_outside_images
// CHECK: nn.constant dense<1.250000e-01> : tensor<16x2304x16xf32>
// CHECK: func.func private @k0_conv
// CHECK: scf.forall (%{{.*}}) in (64)
// CHECK: %[[IMG:.*]] = arith.remui %[[Q:.*]], %c4 : index
// CHECK-NEXT: %[[QB:.*]] = arith.divui %[[Q]], %c4 : index
// CHECK: %[[BLK:.*]] = arith.remui %[[QB]], %c16 : index
// CHECK: vector.transfer_read %arg1[%[[BLK]], {{.*}} : tensor<16x2304x16xf32>, vector<16xf32>
// CHECK: tensor.extract %arg0[%[[IMG]], {{.*}} : tensor<4x256x6x6xf32>
func.func @blocks_outside_images(%x: tensor<4x256x4x4xf32>) -> tensor<4x256x4x4xf32> {
  %w = nn.constant dense<0.125> : tensor<256x256x3x3xf32>
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<4x256x4x4xf32>, tensor<256x256x3x3xf32>) -> tensor<4x256x4x4xf32>
  return %0 : tensor<4x256x4x4xf32>
}
