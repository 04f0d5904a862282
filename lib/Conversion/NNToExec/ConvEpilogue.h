#ifndef NNCC_LIB_CONVERSION_NNTOEXEC_CONVEPILOGUE_H
#define NNCC_LIB_CONVERSION_NNTOEXEC_CONVEPILOGUE_H

#include "dialects/NN/NNOps.h"

#include "mlir/IR/Builders.h"

#include <optional>
#include <utility>

namespace nncc {

/// The ops after a convolution that its kernel or GEMM call applies itself,
/// in ONNX order after the bias: the add of a residual of the output's shape,
/// then a ReLU or a constant-bound Clip. Each one folded is a kernel fewer
/// that would read and write the whole output again.
struct ConvEpilogue {
  mlir::Value residual;
  /// [min, max]: a ReLU is [0, +inf].
  std::optional<std::pair<double, double>> clamp;
  /// The nn ops folded in, first to last.
  llvm::SmallVector<mlir::Operation *, 2> ops;

  /// A GEMM's library epilogue has ReLU but no Clip.
  bool clampIsRelu() const;
  /// Moves `conv` to just before the last folded op, where every operand
  /// (the residual too) exists, and names all folded nodes in its location.
  void moveConvToItsEnd(nn::ConvOp conv) const;
  /// Replaces the last folded op's result (`conv`'s when none) with `result`
  /// and erases the folded ops and `conv`.
  void replaceConvAndOps(nn::ConvOp conv, mlir::Value result) const;
};

/// `v` (an f32 or a vector of f32) clamped to `clamp` ([min, max]): max
/// with the lower bound, then min with the upper one unless that is +inf (a
/// ReLU; a Clip's -inf max still clamps everything). The bounds are
/// constants of v's type at the start of v's block, so the max follows what
/// made `v`.
mlir::Value applyClamp(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, std::pair<double, double> clamp);

/// The epilogue `conv` can fold: an nn.add of a same-typed value (the
/// residual), then a ReLU or constant-bound Clip, each the only user of the
/// value before it. Empty when nothing that qualifies follows.
ConvEpilogue matchConvEpilogue(nn::ConvOp conv);

} // namespace nncc

#endif // NNCC_LIB_CONVERSION_NNTOEXEC_CONVEPILOGUE_H
