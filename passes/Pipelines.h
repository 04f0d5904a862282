#ifndef NNCC_PASSES_PIPELINES_H
#define NNCC_PASSES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace nncc {

/// Canonicalization and constant folding of the nn dialect: shape
/// computations fold away, shape-like operands become attributes,
/// BatchNormalization folds into convolutions; with `recompose`,
/// decomposed LayerNorm/GELU/Softmax/attention become single ops (off for
/// the `--no-fusion` baseline).
void buildNNSimplifyPipeline(mlir::OpPassManager &pm, bool recompose = true);

/// Registers nncc's passes and pipelines with the pass registry (for nncc-opt).
void registerNNCCPipelines();

} // namespace nncc

#endif // NNCC_PASSES_PIPELINES_H
