// RUN: nncc-opt %s -split-input-file -nncc-form-conv-kernels=plan=cpu | FileCheck %s --check-prefix=CPU
// RUN: nncc-opt %s -split-input-file -nncc-form-conv-kernels="plan=cpu fuse-epilogues=false" | FileCheck %s --check-prefix=BARE
// RUN: nncc-opt %s -split-input-file -nncc-form-conv-kernels=plan=gpu | FileCheck %s --check-prefix=GPU
// RUN: nncc-opt %s -split-input-file -nncc-form-conv-kernels="plan=cpu packed-weights=true" | FileCheck %s --check-prefix=PACKED

// CPU plan: a 3x3 convolution becomes a padded copy and one direct kernel
// that also applies the residual add and the ReLU after it; without
// epilogue fusion they stay nn ops. GPU plan: im2col and one GEMM call with
// the residual as C and ReLU as the library's activation.
// CPU-LABEL: func.func @direct
// CPU: %[[P:.*]] = exec.launch @k0_pad(%arg0) {nodes = "conv,res,act"} : (tensor<1x8x16x16xf32>) -> tensor<1x8x18x18xf32>
// CPU: %[[C:.*]] = exec.launch @k0_conv(%[[P]], %arg1, %arg2) {nodes = "conv,res,act"}
// CPU-NOT: nn.
// CPU: return %[[C]]
// CPU: func.func private @k0_pad
// CPU: func.func private @k0_conv
// CPU: scf.forall
// BARE-LABEL: func.func @direct
// BARE: exec.launch @k0_conv({{.*}}) {nodes = "conv"}
// BARE: nn.add
// BARE: nn.relu
// GPU-LABEL: func.func @direct
// GPU: %[[COL:.*]] = exec.launch @k0_im2col(%arg0) {nodes = "conv,res,act"} : (tensor<1x8x16x16xf32>) -> tensor<1x8x3x3x16x16xf32>
// GPU: %[[B:.*]] = exec.view %[[COL]] : tensor<1x8x3x3x16x16xf32> -> tensor<1x72x256xf32>
// GPU: %[[A:.*]] = exec.view %arg1 : tensor<8x8x3x3xf32> -> tensor<8x72xf32>
// GPU: %[[R:.*]] = exec.view %arg2 : tensor<1x8x16x16xf32> -> tensor<1x8x256xf32>
// GPU: exec.gemm %[[A]], %[[B]] acc %[[R]] {activation = "relu", {{.*}}beta = 1.000000e+00 : f64, nodes = "conv,res,act"
// GPU-NOT: nn.
func.func @direct(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>, %r: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> {
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> loc("conv")
  %1 = nn.add %0, %r : (tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> loc("res")
  %2 = nn.relu %1 : tensor<1x8x16x16xf32> loc("act")
  return %2 : tensor<1x8x16x16xf32>
}

// -----

// GPU plan with constant weights and bias: the bias becomes one more weight
// column (3x18 + 1) against a row of ones that im2col appends.
// GPU-LABEL: func.func @bias_column
// GPU: exec.launch @k0_im2col(%arg0) {{.*}} -> tensor<1x19x4x4xf32>
// GPU: %[[W:.*]] = nn.constant dense<{{.*}}> : tensor<3x19xf32>
// GPU: exec.gemm %[[W]], %{{.*}} {activation = "relu", {{.*}}beta = 0.000000e+00 : f64
// GPU: func.func private @k0_im2col
// GPU: linalg.fill
// Rows of 4 columns are too narrow for a direct kernel: the CPU plan takes
// the GEMM form (weights as A, one GEMM per image) with the bias, one per
// row (output channel), and the ReLU on the GEMM step.
// CPU-LABEL: func.func @bias_column
// CPU-NOT: nn.conv
// CPU: %[[COL:.*]] = exec.launch @k0_im2col(%arg0)
// CPU: %[[C:.*]] = exec.view %[[COL]] : tensor<1x2x3x3x4x4xf32> -> tensor<1x18x16xf32>
// CPU: %[[W:.*]] = exec.view %{{.*}} : tensor<3x2x3x3xf32> -> tensor<3x18xf32>
// CPU: %[[G:.*]] = exec.gemm %[[W]], %[[C]] bias %{{.*}} {activation = "relu", {{.*}}bias_per_row = true
// CPU-SAME: -> tensor<1x3x16xf32>
// CPU: %[[R:.*]] = exec.view %[[G]] : tensor<1x3x16xf32> -> tensor<1x3x4x4xf32>
// CPU: return %[[R]]
// BARE-LABEL: func.func @bias_column
// BARE: nn.conv
// BARE-NOT: exec.gemm
func.func @bias_column(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %w = nn.constant dense<1.0> : tensor<3x2x3x3xf32>
  %b = nn.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %0 = nn.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32> loc("conv")
  %1 = nn.relu %0 : tensor<1x3x4x4xf32> loc("act")
  return %1 : tensor<1x3x4x4xf32>
}

// -----

// CPU plan: a 2-D f32 max pool becomes the direct kernel's in-place vector
// code (the depthwise tiling: -inf for padding, max for the FMA); one with
// indices stays an nn op (its loop kernel). The GPU plan keeps both.
// CPU-LABEL: func.func @max_pool
// CPU: %[[P:.*]] = exec.launch @k0_max_pool(%arg0) {nodes = "pool"} : (tensor<2x4x56x56xf32>) -> tensor<2x4x28x28xf32>
// CPU: nn.max_pool %arg0 {{.*}} -> (tensor<2x4x28x28xf32>, tensor<2x4x28x28xi64>)
// CPU: func.func private @k0_max_pool
// CPU: arith.constant dense<0xFF800000> : vector<8xf32>
// CPU: scf.forall
// CPU: vector.transfer_read
// CPU: arith.maximumf {{.*}} : vector<8xf32>
// CPU-NOT: vector.fma
// CPU: vector.transfer_write
// GPU-LABEL: func.func @max_pool
// GPU-NOT: exec.launch
// GPU: nn.max_pool
func.func @max_pool(%x: tensor<2x4x56x56xf32>) -> (tensor<2x4x28x28xf32>, tensor<2x4x28x28xf32>) {
  %0 = nn.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x56x56xf32>) -> tensor<2x4x28x28xf32> loc("pool")
  %1, %2 = nn.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x56x56xf32>) -> (tensor<2x4x28x28xf32>, tensor<2x4x28x28xi64>) loc("indices")
  return %0, %1 : tensor<2x4x28x28xf32>, tensor<2x4x28x28xf32>
}

// -----

// CPU plan, a 1x1 convolution over a large image (one GEMM per image, the
// weights as A): the bias per row, the residual add as the accumulator C
// (beta 1) and the Clip (ReLU6) all ride on the GEMM step; nothing is left
// after it (a clip_min of 0, the attribute's default, is not printed). The
// same with packed weights (the form is the per-image one).
// CPU-LABEL: func.func @pointwise_residual_clip
// CPU-NOT: nn.conv
// CPU: %[[X:.*]] = exec.view %arg0 : tensor<2x16x28x28xf32> -> tensor<2x16x784xf32>
// CPU: %[[W:.*]] = exec.view %{{.*}} : tensor<16x16x1x1xf32> -> tensor<16x16xf32>
// CPU: %[[ACC:.*]] = exec.view %arg1 : tensor<2x16x28x28xf32> -> tensor<2x16x784xf32>
// CPU: %[[G:.*]] = exec.gemm %[[W]], %[[X]] acc %[[ACC]] bias %{{.*}} {activation = "clip", alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64, bias_per_row = true, clip_max = 6.000000e+00 : f64, nodes = "conv,res,act"
// CPU-NOT: nn.
// CPU: %[[R:.*]] = exec.view %[[G]] : tensor<2x16x784xf32> -> tensor<2x16x28x28xf32>
// CPU: return %[[R]]
// PACKED-LABEL: func.func @pointwise_residual_clip
// PACKED: exec.gemm {{.*}} acc {{.*}} bias {{.*}}activation = "clip"{{.*}}beta = 1.000000e+00 : f64, bias_per_row = true
// PACKED-NOT: exec.launch
// BARE-LABEL: func.func @pointwise_residual_clip
// BARE: nn.conv
func.func @pointwise_residual_clip(%x: tensor<2x16x28x28xf32>, %r: tensor<2x16x28x28xf32>) -> tensor<2x16x28x28xf32> {
  %w = nn.constant dense<0.5> : tensor<16x16x1x1xf32>
  %b = nn.constant dense<0.25> : tensor<16xf32>
  %lo = nn.constant dense<0.0> : tensor<f32>
  %hi = nn.constant dense<6.0> : tensor<f32>
  %0 = nn.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x28x28xf32>, tensor<16x16x1x1xf32>, tensor<16xf32>) -> tensor<2x16x28x28xf32> loc("conv")
  %1 = nn.add %0, %r : (tensor<2x16x28x28xf32>, tensor<2x16x28x28xf32>) -> tensor<2x16x28x28xf32> loc("res")
  %2 = nn.clip %1, %lo, %hi : (tensor<2x16x28x28xf32>, tensor<f32>, tensor<f32>) -> tensor<2x16x28x28xf32> loc("act")
  return %2 : tensor<2x16x28x28xf32>
}

// -----

// Packed weights and one small image with P < K: the transposed product
// [P, M] = col^T W^T and a transpose kernel. The bias (one per column of
// that product) rides on the GEMM; the residual, which the transposed layout
// cannot take as C, stays an add after the transpose, with the ReLU (no
// bias_per_row and no activation: their defaults, not printed).
// PACKED-LABEL: func.func @transposed_residual
// PACKED: %[[G:.*]] = exec.gemm %{{.*}}, %{{.*}} bias %{{.*}} {alpha = 1.000000e+00 : f64, beta = 0.000000e+00 : f64, nodes = "conv", trans_a = true, trans_b = true} : (tensor<1x64x16xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
// PACKED: exec.launch @k0_transpose(%[[G]])
// PACKED: nn.add
// PACKED: nn.relu
func.func @transposed_residual(%x: tensor<1x64x4x4xf32>, %r: tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32> {
  %w = nn.constant dense<0.5> : tensor<32x64x1x1xf32>
  %b = nn.constant dense<0.25> : tensor<32xf32>
  %0 = nn.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x64x4x4xf32>, tensor<32x64x1x1xf32>, tensor<32xf32>) -> tensor<1x32x4x4xf32> loc("conv")
  %1 = nn.add %0, %r : (tensor<1x32x4x4xf32>, tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32> loc("res")
  %2 = nn.relu %1 : tensor<1x32x4x4xf32> loc("act")
  return %2 : tensor<1x32x4x4xf32>
}

// -----

// CPU plan: a direct convolution whose result (after its ReLU) only the next
// direct convolution reads writes that convolution's padded copy itself: its
// launch returns the copy (the output inside a zero frame, which the tasks
// on the frame's edges zero: scf.if, linalg.fill) and no copy kernel runs
// between the two. The first still reads a copy of its own input.
// CPU-LABEL: func.func @writes_next_copy
// CPU: %[[P:.*]] = exec.launch @k0_pad(%arg0) {nodes = "conv1,act1"} : (tensor<1x8x16x16xf32>) -> tensor<1x8x18x18xf32>
// CPU: %[[A:.*]] = exec.launch @k0_conv(%[[P]], %arg1) {nodes = "conv1,act1"} : (tensor<1x8x18x18xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x18x18xf32>
// CPU-NOT: _pad
// CPU: %[[B:.*]] = exec.launch @k1_conv(%[[A]], %arg2) {nodes = "conv2"} : (tensor<1x8x18x18xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
// CPU-NEXT: return %[[B]]
// CPU: func.func private @k0_conv
// CPU: scf.forall
// CPU: scf.if
// CPU: linalg.fill
// CPU: tensor.parallel_insert_slice {{.*}} [1, 4, %{{.*}}, %{{.*}}] [1, 1, 1, 1] : tensor<4x?x?xf32> into tensor<1x8x18x18xf32>
// CPU: func.func private @k1_conv
// CPU-NOT: scf.if
// CPU: tensor.parallel_insert_slice {{.*}} : tensor<4x{{[0-9]+}}x16xf32> into tensor<1x8x16x16xf32>
func.func @writes_next_copy(%x: tensor<1x8x16x16xf32>, %w1: tensor<8x8x3x3xf32>, %w2: tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %0 = nn.conv %x, %w1 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> loc("conv1")
  %1 = nn.relu %0 : tensor<1x8x16x16xf32> loc("act1")
  %2 = nn.conv %1, %w2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> loc("conv2")
  return %2 : tensor<1x8x16x16xf32>
}

// -----

// A result that something else reads too (here the function's return, not
// a residual a direct kernel folds) stays a plain output: the second
// convolution copies it.
// CPU-LABEL: func.func @shared_result_is_copied
// CPU: %[[A:.*]] = exec.launch @k0_conv({{.*}}) {nodes = "conv1,act1"} : ({{.*}}) -> tensor<1x8x16x16xf32>
// CPU: %[[P:.*]] = exec.launch @k1_pad(%[[A]])
// CPU: %[[B:.*]] = exec.launch @k1_conv(%[[P]], %arg2) {nodes = "conv2"}
// CPU: return %[[B]], %[[A]]
func.func @shared_result_is_copied(%x: tensor<1x8x16x16xf32>, %w1: tensor<8x8x3x3xf32>, %w2: tensor<8x8x3x3xf32>) -> (tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) {
  %0 = nn.conv %x, %w1 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> loc("conv1")
  %1 = nn.relu %0 : tensor<1x8x16x16xf32> loc("act1")
  %2 = nn.conv %1, %w2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> loc("conv2")
  return %2, %1 : tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>
}

// -----

// An implicit-GEMM kernel's result read by another one alone: the transpose
// after the first writes the second's padded copy (zeros on the frame, NCHW
// inside it), and no copy kernel runs between them. Rows of 12 columns: the
// transpose goes by 8 x 8 blocks (8 vector loads, 24 shuffles, 8 runs of 8
// columns stored inside the frame), a row's second block starting at column
// 4, and 12 rows x 2 blocks x 8 channel blocks tasks.
// CPU-LABEL: func.func @transpose_writes_next_copy
// CPU: %[[A:.*]] = exec.launch @k0_conv(%arg0, %{{.*}}) {nodes = "conv1,act1"} : (tensor<1x64x14x14xf32>, {{.*}}) -> tensor<1x144x64xf32>
// CPU: %[[T:.*]] = exec.launch @k0_transpose(%[[A]]) {nodes = "conv1,act1"} : (tensor<1x144x64xf32>) -> tensor<1x64x16x16xf32>
// CPU-NOT: _pad
// CPU: exec.launch @k1_conv(%[[T]], %{{.*}}) {nodes = "conv2"} : (tensor<1x64x16x16xf32>, {{.*}}) -> tensor<1x196x64xf32>
// CPU: func.func private @k0_transpose
// CPU: linalg.fill
// CPU: scf.forall (%{{.*}}) in (192)
// CPU: %[[X0:.*]] = arith.minui %{{.*}}, %c4 : index
// CPU-COUNT-8: vector.transfer_read %arg0
// CPU-COUNT-24: vector.shuffle
// CPU-NOT: vector.shuffle
// CPU: %[[COL:.*]] = arith.addi %[[X0]], %c2{{.*}} : index
// CPU: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[COL]]] [1, 8, 1, 8] [1, 1, 1, 1] : tensor<8x8xf32> into tensor<1x64x16x16xf32>
func.func @transpose_writes_next_copy(%x: tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32> {
  %w1 = nn.constant dense<0.5> : tensor<64x64x3x3xf32>
  %w2 = nn.constant dense<0.25> : tensor<64x64x3x3xf32>
  %0 = nn.conv %x, %w1 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x64x14x14xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x12x12xf32> loc("conv1")
  %1 = nn.relu %0 : tensor<1x64x12x12xf32> loc("act1")
  %2 = nn.conv %1, %w2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 1>} : (tensor<1x64x12x12xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x14x14xf32> loc("conv2")
  return %2 : tensor<1x64x14x14xf32>
}

// -----

// ResNet's block: the max pool's output is read by the first convolution
// and, as the residual that the second one's kernel folds, by the second.
// The pool's kernel writes the first convolution's padded copy, and the
// second reads its residual inside that frame; no copy kernel runs.
// CPU-LABEL: func.func @residual_read_through_frame
// CPU-NOT: _pad
// CPU: %[[P:.*]] = exec.launch @k0_max_pool(%arg0) {nodes = "pool"} : (tensor<1x8x32x32xf32>) -> tensor<1x8x18x18xf32>
// CPU: %[[A:.*]] = exec.launch @k0_conv(%[[P]], %arg1) {nodes = "conv1,act1"} : ({{.*}}) -> tensor<1x8x18x18xf32>
// CPU: exec.launch @k1_conv(%[[A]], %arg2, %[[P]]) {nodes = "conv2,res,act2"} : (tensor<1x8x18x18xf32>, tensor<8x8x3x3xf32>, tensor<1x8x18x18xf32>) -> tensor<1x8x16x16xf32>
// CPU-NOT: _pad
// CPU: func.func private @k1_conv
// CPU: vector.transfer_read %arg2[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}], %{{.*}} : tensor<1x8x18x18xf32>, vector<8xf32>
func.func @residual_read_through_frame(%x: tensor<1x8x32x32xf32>, %w1: tensor<8x8x3x3xf32>, %w2: tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %p = nn.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x32x32xf32>) -> tensor<1x8x16x16xf32> loc("pool")
  %0 = nn.conv %p, %w1 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> loc("conv1")
  %1 = nn.relu %0 : tensor<1x8x16x16xf32> loc("act1")
  %2 = nn.conv %1, %w2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> loc("conv2")
  %3 = nn.add %2, %p : (tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> loc("res")
  %4 = nn.relu %3 : tensor<1x8x16x16xf32> loc("act2")
  return %4 : tensor<1x8x16x16xf32>
}

// -----

// ResNet's 14x14 stage: implicit-GEMM kernels. The block input %b, conv0's
// result, is read by conv1 and, as the residual conv2's Add takes, by that
// Add. conv0's transpose writes conv1's padded copy; conv2's transpose folds
// the Add and the Relu, reads the residual inside that copy's frame, and
// writes conv3's copy: one copy kernel in all (conv0's), no nn.add left.
// CPU-LABEL: func.func @transpose_folds_residual
// CPU: exec.launch @k0_pad(%arg0)
// CPU: %[[T0:.*]] = exec.launch @k0_transpose(%{{.*}}) {nodes = "conv0,act0"} : (tensor<1x196x64xf32>) -> tensor<1x64x16x16xf32>
// CPU: %[[A:.*]] = exec.launch @k1_conv(%[[T0]], %{{.*}}) {nodes = "conv1,act1"}
// CPU: %[[TA:.*]] = exec.launch @k1_transpose(%[[A]]) {nodes = "conv1,act1"} : (tensor<1x196x64xf32>) -> tensor<1x64x16x16xf32>
// CPU: %[[B:.*]] = exec.launch @k2_conv(%[[TA]], %{{.*}}) {nodes = "conv2,res,act2"}
// CPU: %[[TB:.*]] = exec.launch @k2_transpose(%[[B]], %[[T0]]) {nodes = "conv2,res,act2"} : (tensor<1x196x64xf32>, tensor<1x64x16x16xf32>) -> tensor<1x64x16x16xf32>
// CPU: exec.launch @k3_conv(%[[TB]], %{{.*}}) {nodes = "conv3"}
// CPU-NOT: _pad
// CPU-NOT: nn.add
// CPU: return
// CPU: func.func private @k2_transpose
// CPU: scf.forall (%{{.*}}) in (224)
// CPU: %[[X0:.*]] = arith.minui %{{.*}}, %c6 : index
// CPU-COUNT-8: vector.transfer_read %arg0
// CPU: %[[RCOL:.*]] = arith.addi %[[X0]], %c1{{.*}} : index
// CPU-NEXT: %[[R:.*]] = vector.transfer_read %arg1[%{{.*}}, %{{.*}}, %{{.*}}, %[[RCOL]]], %{{.*}} {in_bounds = [true]} : tensor<1x64x16x16xf32>, vector<8xf32>
// CPU-NEXT: %[[SUM:.*]] = arith.addf %{{.*}}, %[[R]] : vector<8xf32>
// CPU-NEXT: arith.maximumf %[[SUM]], %{{.*}} : vector<8xf32>
// CPU: tensor.parallel_insert_slice %{{.*}} [1, 8, 1, 8] [1, 1, 1, 1] : tensor<8x8xf32> into tensor<1x64x16x16xf32>
func.func @transpose_folds_residual(%x: tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32> {
  %w0 = nn.constant dense<1.0> : tensor<64x64x3x3xf32>
  %w1 = nn.constant dense<0.5> : tensor<64x64x3x3xf32>
  %w2 = nn.constant dense<0.25> : tensor<64x64x3x3xf32>
  %w3 = nn.constant dense<0.125> : tensor<64x64x3x3xf32>
  %c = nn.conv %x, %w0 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x14x14xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x14x14xf32> loc("conv0")
  %b = nn.relu %c : tensor<1x64x14x14xf32> loc("act0")
  %0 = nn.conv %b, %w1 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x14x14xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x14x14xf32> loc("conv1")
  %1 = nn.relu %0 : tensor<1x64x14x14xf32> loc("act1")
  %2 = nn.conv %1, %w2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x14x14xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x14x14xf32> loc("conv2")
  %3 = nn.add %2, %b : (tensor<1x64x14x14xf32>, tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32> loc("res")
  %4 = nn.relu %3 : tensor<1x64x14x14xf32> loc("act2")
  %5 = nn.conv %4, %w3 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x14x14xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x14x14xf32> loc("conv3")
  return %5 : tensor<1x64x14x14xf32>
}
