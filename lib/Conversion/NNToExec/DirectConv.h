#ifndef NNCC_LIB_CONVERSION_NNTOEXEC_DIRECTCONV_H
#define NNCC_LIB_CONVERSION_NNTOEXEC_DIRECTCONV_H

#include "dialects/NN/NNOps.h"
#include "lib/Conversion/NNToExec/ConvEpilogue.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace nncc {

/// The target CPU's vector unit that direct kernels are blocked for.
struct VectorUnit {
  /// f32 lanes per vector register.
  int64_t lanes;
  /// Accumulator vectors per tile: half the register file. A tap's input
  /// vectors (one per accumulator row, shared by the tile's channels) and
  /// the broadcast weight fit in the other half, so nothing spills; and it
  /// gives 8+ independent FMA chains, what a 4-cycle FMA on two ports needs
  /// to stay busy.
  int64_t maxAccumulators;
  /// Vector registers (16 with AVX2, 32 with AVX-512).
  int64_t registers;

  static VectorUnit of(int64_t vectorBits, int64_t registers) {
    return VectorUnit{vectorBits / 32, registers / 2, registers};
  }
};

/// True when `conv` can run as a register-blocked direct convolution kernel:
/// 2-D, f32, at most 64 taps, not an ungrouped 1x1 (a plain GEMM), row chunks
/// of at least 3/4 of a vector (1/4 when grouped), column stride at most 2 unless
/// tiles have 4+ output channels.
bool isDirectConvolution(nn::ConvOp conv, const VectorUnit &unit);

/// The share of their vectors' lanes a direct kernel's row chunks fill (1
/// when the chunks are whole vectors), or 0 when `conv` has no direct kernel.
double directConvLaneFill(nn::ConvOp conv, const VectorUnit &unit);

/// True when the direct kernel of `conv` issues more loads than FMAs per
/// tap: tiles of one row of one vector, each FMA waiting for its own
/// broadcast weight (AVX2's 8-column tiles of 8 channels, such as ResNet's
/// 7x7 stem over 56 columns: 9 loads per 8 FMAs on two load ports; on
/// AVX-512, one-vector tiles of planes of an odd height).
bool directConvIsLoadBound(nn::ConvOp conv, const VectorUnit &unit);

/// True when output rows `width` wide split into chunks of at least 3/4 of
/// a vector, what an ungrouped direct kernel needs to fill its lanes.
bool rowsFillVectors(int64_t width, const VectorUnit &unit);

/// True when `pool` (2-D, f32, without indices) runs as a direct kernel: the
/// in-place tiling of a depthwise convolution, its taps combined by max with
/// -inf for padding.
bool isDirectMaxPool(nn::MaxPoolOp pool, const VectorUnit &unit);
/// The direct max pool kernel body: out = max_pool(x) into `init`, inside a
/// zero `frame` of it when set (as buildDirectConvolution's).
mlir::Value buildDirectMaxPool(mlir::OpBuilder &b, mlir::Location loc, nn::MaxPoolOp pool, mlir::Value x,
                               mlir::Value init, const VectorUnit &unit, llvm::ArrayRef<int64_t> frame = {});

/// True when the direct kernel of `conv` reads a padded copy of its input
/// (tiles of 4+ output channels) made by a kernel of its own before it: the
/// convolution kernel then stays one parallel loop that the CPU runtime
/// splits across threads.
bool readsInputCopy(nn::ConvOp conv, const VectorUnit &unit);
/// The copy: [N, C, padded H, padded W], or [N, C, padded H, s, W / s] split
/// into column phases for a column stride s > 1.
mlir::RankedTensorType inputCopyType(nn::ConvOp conv, const VectorUnit &unit);
/// The zero frame around the input in `conv`'s padded copy (ONNX-style
/// [top, left, bottom, right]) when the copy is nothing else (a column
/// stride of 1; larger strides split it into column phases), so that the
/// direct kernel producing the input can write the copy itself; else empty.
llvm::SmallVector<int64_t> inputCopyFrame(nn::ConvOp conv, const VectorUnit &unit);
/// The copy kernel body: `x` padded (and phase-split) into `init`.
mlir::Value buildInputCopy(mlir::OpBuilder &b, mlir::Location loc, nn::ConvOp conv, mlir::Value x,
                           mlir::Value init, const VectorUnit &unit);

/// The direct convolution kernel body: out = conv(x, w) (+ bias[m] when
/// `bias` is set, then `epilogue` with `residual` as its residual's value
/// inside the kernel) into `init`, as one scf.forall of vector code. `x` is
/// the input, or its copy when readsInputCopy. With a `frame` (a later
/// convolution's inputCopyFrame), `init` is that much larger and the kernel
/// writes that convolution's padded copy: the output inside, zeros on the
/// frame, and the copy kernel before it goes away. With a `residualFrame`,
/// `residual` is such a copy, read inside that frame.
mlir::Value buildDirectConvolution(mlir::OpBuilder &b, mlir::Location loc, nn::ConvOp conv, mlir::Value x,
                                   mlir::Value w, mlir::Value bias, mlir::Value residual,
                                   const ConvEpilogue &epilogue, mlir::Value init, const VectorUnit &unit,
                                   llvm::ArrayRef<int64_t> frame = {}, llvm::ArrayRef<int64_t> residualFrame = {});

} // namespace nncc

#endif // NNCC_LIB_CONVERSION_NNTOEXEC_DIRECTCONV_H
