#ifndef NNCC_LIB_CONVERSION_NNTOEXEC_IM2COL_H
#define NNCC_LIB_CONVERSION_NNTOEXEC_IM2COL_H

#include "dialects/NN/NNOps.h"

#include "mlir/IR/Builders.h"

namespace nncc {

/// im2col of an N-d convolution input, as col[n, c, k..., o...]: the input
/// element under kernel tap k for output position o, 0 in the padding.
/// Iterating taps outside and output positions inside keeps the innermost
/// loop a unit-stride walk along the input row (stride 1), which vectorizes.
/// With `batchInner` the layout is col[c, k..., n, o...]: the columns of all
/// images side by side, one GEMM operand for the whole batch.
mlir::Value im2col(mlir::OpBuilder &b, mlir::Location loc, nn::ConvOp conv, mlir::Value x, mlir::Value init, bool batchInner);

/// The same im2col from a zero-padded copy of the input: every element is a
/// plain affine read (x[n, c, o*s + k*d]), no bounds check or select, which
/// runs faster on the CPU for one more input-sized scratch buffer, so
/// CPU-only modules use it (measurements: docs/performance.md, "Measurements
/// behind kernel choices").
mlir::Value im2colFromPadded(mlir::OpBuilder &b, mlir::Location loc, nn::ConvOp conv, mlir::Value x, mlir::Value init, bool batchInner);

/// im2col as col[n, row, o...] (row: channel and kernel taps; o: output
/// position) with one more row of ones at the end: a GEMM of the weights
/// with the bias as their last column against it adds the bias. The rows
/// before it are im2col's own loops (taps outside, unit-stride walks along
/// input rows inside) over a view of them; decoding each row into channel
/// and taps inside one loop nest instead ran several times slower on the CPU
/// (docs/performance.md, "Measurements behind kernel choices").
mlir::Value im2colWithOnesRow(mlir::OpBuilder &b, mlir::Location loc, nn::ConvOp conv, mlir::Value x, mlir::Value init);

/// col2im of a transposed convolution: out[n, m, o...] = bias[m] + the sum,
/// over the kernel taps k whose source i = (o + pad - k*dilation) / stride is
/// integral and inside the input, of col[n, m, k..., i...] (`col` is the GEMM
/// Wᵀ·x: every input position's contribution to every tap). Gathering per
/// output element instead of scattering per column keeps the kernel free of
/// write conflicts (GPU threads, CPU vector lanes); the taps are a reduction
/// between the channel and the output positions, so the innermost loop walks
/// an output row. `col` is f32 (the GEMM accumulates in f32); the taps and
/// the bias are summed in f32 and a low-precision result rounded once. When
/// each output element has exactly one tap (stride = kernel, no padding),
/// the kernel is a plain interleaving copy instead.
mlir::Value col2im(mlir::OpBuilder &b, mlir::Location loc, nn::ConvTransposeOp op, mlir::Value col, mlir::Value bias,
                   mlir::Value init);

} // namespace nncc

#endif // NNCC_LIB_CONVERSION_NNTOEXEC_IM2COL_H
