#ifndef NNCC_LIB_CONVERSION_NNTOEXEC_IMPLICITGEMMCONV_H
#define NNCC_LIB_CONVERSION_NNTOEXEC_IMPLICITGEMMCONV_H

#include "dialects/NN/NNOps.h"
#include "lib/Conversion/NNToExec/DirectConv.h"

#include "mlir/IR/Builders.h"

#include <optional>

namespace nncc {

/// The tile of an implicit-GEMM convolution: `positions` consecutive output
/// positions of an image's plane (row-major, so a tile may span rows) x
/// `vectors` vectors of `lanes` output channels. When the positions do not
/// divide the plane, the plane's last tile starts `positions` before its end
/// and computes again some of its neighbour's positions (the same values).
/// `blocksOuter`: the tiles walk the channel blocks outside the images (each
/// block's weights are read for every image before the next block's), else
/// images outside.
struct ImplicitGemmTiling {
  int64_t lanes, positions, vectors;
  bool blocksOuter;
};

/// The tiling of `conv` as an implicit GEMM on `unit`, or none: an ungrouped
/// 2-D f32 convolution with constant weights, static shapes, a window of at
/// most 64 taps (1x1 ones included), output channels in whole vectors and
/// output rows too narrow for a direct kernel's lanes (rowsFillVectors),
/// filling them so partly that the idle lanes cost more than the transpose
/// after this kernel, or a direct tile that issues more loads than FMAs
/// (implicitBeatsDirect), with a tile of at least 4
/// accumulators. The tile a cycle model says is cheapest (implicitGemmCycles:
/// FMAs, loads, FMA latency, the positions a plane's overlapping last tile
/// computes again, and the weight stream a channel block's first tile waits
/// for), of those whose accumulators fit (implicitGemmAccumulators); between
/// equals, the most accumulators.
std::optional<ImplicitGemmTiling> implicitGemmTiling(nn::ConvOp conv, const VectorUnit &unit);

/// The zero-padded input copy the kernel reads: [N, C, padded H, padded W];
/// the input's own type when the window needs no padding (it is then read
/// as it lies).
mlir::RankedTensorType implicitGemmInputType(nn::ConvOp conv);
/// The zero frame around the input in that copy (ONNX-style [top, left,
/// bottom, right]), so that the kernel producing the input can write the
/// copy itself; empty when the input is read as it lies.
llvm::SmallVector<int64_t> implicitGemmInputFrame(nn::ConvOp conv);
/// The copy kernel body: `x` padded into `init`, each element written once.
mlir::Value buildImplicitGemmInputCopy(mlir::OpBuilder &b, mlir::Location loc, nn::ConvOp conv, mlir::Value x,
                                       mlir::Value init);

/// `conv`'s constant weights [M, C, KH, KW] laid out for the kernel:
/// [M / (vectors * lanes), C * KH * KW, vectors * lanes], each tile's
/// channel block one contiguous run per tap.
mlir::DenseElementsAttr implicitGemmWeights(nn::ConvOp conv, const ImplicitGemmTiling &t);

/// The kernel body: out[n, p, m] (positions major, channels in the lanes)
/// = sum over the input channels and taps of `xPadded` times `weights`
/// (implicitGemmWeights), + bias[m] when `bias` is set, then clamped to
/// `clamp` when set; into `init` [N, OH * OW, M], as one scf.forall of
/// vector code.
mlir::Value buildImplicitGemmConvolution(mlir::OpBuilder &b, mlir::Location loc, nn::ConvOp conv,
                                         mlir::Value xPadded, mlir::Value weights, mlir::Value bias,
                                         std::optional<std::pair<double, double>> clamp, mlir::Value init,
                                         const ImplicitGemmTiling &t);

/// The transpose kernel body after the kernel: its result [N, OH * OW, M]
/// (`byPosition`) as [N, M, OH, OW], plus `residual` [N, M, OH, OW] when set
/// (read inside `residualFrame` when that is not empty: a copy another
/// kernel wrote for a convolution, see InputCopies) and then clamped to
/// `clamp` when set, inside a zero `frame` of `init` (a later convolution's
/// padded input copy, its inputCopyFrame or implicitGemmInputFrame; `init`
/// is the plain result when `frame` is empty). By 8 x 8 blocks where rows
/// have 8+ columns (a row's last block writes some of its neighbour's
/// columns again, the same values), else each element written once.
mlir::Value buildTransposeEpilogue(mlir::OpBuilder &b, mlir::Location loc, nn::ConvOp conv, mlir::Value byPosition,
                                   mlir::Value residual, llvm::ArrayRef<int64_t> residualFrame,
                                   std::optional<std::pair<double, double>> clamp, mlir::Value init,
                                   llvm::ArrayRef<int64_t> frame);

} // namespace nncc

#endif // NNCC_LIB_CONVERSION_NNTOEXEC_IMPLICITGEMMCONV_H
