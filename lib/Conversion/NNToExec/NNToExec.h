#ifndef NNCC_LIB_CONVERSION_NNTOEXEC_NNTOEXEC_H
#define NNCC_LIB_CONVERSION_NNTOEXEC_NNTOEXEC_H

#include "mlir/IR/BuiltinOps.h"

namespace nncc {

/// Lowers every `func.func` of nn ops in `module` to the exec level: library
/// calls (f32 GEMMs), views (static reshapes) and launches of outlined
/// kernels (`func.func private @k<N>` holding linalg on tensors, in
/// destination-passing style). nn.constant stays: constants are weights.
struct LoweringOptions {
  /// Fuse chains and DAGs of elementwise/broadcast ops into single kernels.
  bool fuse = true;
  /// Bias and activation in the GEMM's library epilogue. cuBLASLt fuses them;
  /// the CPU runtime runs a scalar pass over C, slower than reading the bias
  /// inside the consumer's generated kernel, so CPU-only modules keep them
  /// in kernels.
  bool gemmEpilogues = true;
  /// The module runs on the CPU alone, so the lowering may pick what is
  /// fastest there: 2-D f32 convolutions as generated direct kernels (vector
  /// code blocked over output channels, rows and columns; DirectConv.cpp),
  /// the others' im2col from a padded copy. With a GPU in the targets,
  /// convolutions stay im2col + GEMM (cuBLASLt fills the device; a direct
  /// kernel would run one thread per tile).
  bool cpuOnly = false;
};

mlir::LogicalResult lowerNNToExec(mlir::ModuleOp module, const LoweringOptions &options = {});

} // namespace nncc

#endif // NNCC_LIB_CONVERSION_NNTOEXEC_NNTOEXEC_H
