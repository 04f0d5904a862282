//===- Optimizer.h - optimizer updates of module state ----------*- C++ -*-===//
//
// The update rules of torch.optim (SGD, SGD with momentum, Adam, AdamW, and
// clip_grad_norm_) built as nn ops on module state (ml_program globals):
// used by nncc-add-optimizer's `optimizer_step` entry, and by the training
// step, which feeds it the gradients autodiff computes.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_PASSES_OPTIMIZER_H
#define NNCC_PASSES_OPTIMIZER_H

#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace nncc {

struct OptimizerOptions {
  std::string kind = "sgd"; ///< sgd, momentum, adam, adamw
  double momentum = 0.9, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weightDecay = 0; ///< L2 added to the gradient; decoupled for adamw
  double gradClip = 0;    ///< max global L2 norm of the gradients; 0: none
};

/// Whether `options.kind` names an optimizer; an error on `where`, from
/// `pass`, otherwise.
mlir::LogicalResult checkOptimizerOptions(mlir::Operation *where, llvm::StringRef pass,
                                          const OptimizerOptions &options);

/// The weights an optimizer updates: the module's mutable float globals that
/// are not optimizer state, in module order.
llvm::SmallVector<mlir::ml_program::GlobalOp> trainableGlobals(mlir::ModuleOp module);

/// The optimizer's own state for `params` (momentum buffers, Adam moments,
/// the step count), created zero-filled once per module.
struct OptimizerState {
  llvm::SmallVector<mlir::ml_program::GlobalOp> first, second; ///< per param (empty when unused)
  mlir::ml_program::GlobalOp step;                            ///< f32 scalar, steps taken
};
mlir::FailureOr<OptimizerState> getOrCreateOptimizerState(mlir::ModuleOp module,
                                                          llvm::ArrayRef<mlir::ml_program::GlobalOp> params,
                                                          const OptimizerOptions &options);

/// Builds, at `b`'s insertion point, one optimizer step: reads each param
/// and its state, applies `grads` (one per param, the param's type) with the
/// run-time learning rate `lr` (f32 scalar), and stores the new param and
/// state. Returns the new step count (f32 scalar). With `pipelineStages` > 1
/// `params` are one stage's, and the gradient norm of --grad-clip is summed
/// over the stages (an all-reduce over the pipeline group).
mlir::Value buildOptimizerStep(mlir::OpBuilder &b, mlir::Location loc,
                               llvm::ArrayRef<mlir::ml_program::GlobalOp> params,
                               const OptimizerState &state, mlir::ValueRange grads, mlir::Value lr,
                               const OptimizerOptions &options, int64_t pipelineStages = 1);

} // namespace nncc

#endif // NNCC_PASSES_OPTIMIZER_H
