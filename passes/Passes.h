#ifndef NNCC_PASSES_PASSES_H
#define NNCC_PASSES_PASSES_H

#include "dialects/Dist/DistOps.h"
#include "dialects/NN/NNDialect.h"

#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace nncc {

/// Unit attribute nncc-add-train-step puts on the forward ops of
/// train_step (not on the backward and update ops), for `--stats`.
constexpr llvm::StringLiteral kForwardOpAttr = "nncc.forward";

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Patterns folding BatchNormalization into the preceding convolution.
void populateFoldBatchNormPatterns(mlir::RewritePatternSet &patterns);

/// Patterns recomposing LayerNorm, GELU, Softmax and attention.
void populateRecomposePatterns(mlir::RewritePatternSet &patterns);

/// Adds `<entry>_grad` (nncc-differentiate) beside `entry` and returns it;
/// constants whose name matches `wrtConstants` (whole name; empty: none)
/// become arguments and get gradients. Errors are emitted on the op at fault.
mlir::FailureOr<mlir::func::FuncOp> buildGradientFunction(mlir::func::FuncOp entry,
                                                          llvm::StringRef wrtConstants);

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace nncc

#endif // NNCC_PASSES_PASSES_H
