#ifndef NNCC_PASSES_PASSES_H
#define NNCC_PASSES_PASSES_H

#include "dialects/NN/NNDialect.h"

#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Pass/Pass.h"

namespace nncc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Patterns folding BatchNormalization into the preceding convolution.
void populateFoldBatchNormPatterns(mlir::RewritePatternSet &patterns);

/// Patterns recomposing LayerNorm, GELU, Softmax and attention.
void populateRecomposePatterns(mlir::RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace nncc

#endif // NNCC_PASSES_PASSES_H
