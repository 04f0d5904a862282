#ifndef NNCC_PASSES_AUTOCAST_H
#define NNCC_PASSES_AUTOCAST_H

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace nncc {

/// The compute precision of a compilation (`nncc --precision`).
enum class Precision {
  FP32,  ///< everything in f32 (the default)
  TF32,  ///< f32 tensors; GEMMs may use TF32 tensor cores
  BF16,  ///< GEMMs and the elementwise ops that follow them in bf16
  FP16,  ///< the same in f16
  Mixed, ///< GEMM operands in bf16, their results and everything else in f32
};

/// Parses "fp32", "tf32", "bf16", "fp16" or "mixed".
std::optional<Precision> parsePrecision(llvm::StringRef name);

/// The spelling `parsePrecision` accepts.
llvm::StringRef precisionName(Precision precision);

/// Patterns that remove cast pairs the autocast pass or the model leaves:
/// cast(cast(x)) becomes one cast, or x itself, when the inner cast is
/// exact (it widens), so no value changes.
void populateAutocastCleanupPatterns(mlir::RewritePatternSet &patterns);

} // namespace nncc

#endif // NNCC_PASSES_AUTOCAST_H
