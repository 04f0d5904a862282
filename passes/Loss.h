//===- Loss.h - training losses on a model's output -------------*- C++ -*-===//
//
// The loss of a training or evaluation step, built as nn ops after a copy
// of the model's `forward`: nncc-add-loss's `eval_step` entry, and the
// function autodiff differentiates for `train_step`.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_PASSES_LOSS_H
#define NNCC_PASSES_LOSS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace nncc {

struct LossOptions {
  /// cross-entropy: integer class labels [N] and logits [N, C] (a Softmax or
  ///   LogSoftmax producing the output is folded into a stable log-softmax);
  /// mse: labels of the output's type, mean of squared differences;
  /// output: the output is the loss (one f32 element), no labels.
  std::string kind = "cross-entropy";
  /// The model output the loss reads; empty: the only one.
  std::string output;
  /// The name of the labels input.
  std::string labelName = "labels";
};

/// Adds to `module` the public function `name`(forward's inputs..., labels)
/// -> (loss f32[]) computing `forward` and the loss of its chosen output
/// (cross-entropy adds a run-time check that every label lies in [0, C)).
/// Errors (an unknown output, logits that are not [N, C]) are emitted on
/// `forward`.
mlir::FailureOr<mlir::func::FuncOp> buildLossFunction(mlir::ModuleOp module, mlir::func::FuncOp forward,
                                                      llvm::StringRef name, const LossOptions &options);

} // namespace nncc

#endif // NNCC_PASSES_LOSS_H
