//===- TrainStep.h - pieces of the training entries -------------*- C++ -*-===//
//
// What nncc-add-train-step and nncc-pipeline-parallel both build training
// entries from.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_PASSES_TRAINSTEP_H
#define NNCC_PASSES_TRAINSTEP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"

namespace nncc {

/// A clone of `loss` named `name` with each trainable weight it loads
/// turned into a trailing argument (so autodiff differentiates it): the new
/// function and the weights in argument order.
std::pair<mlir::func::FuncOp, llvm::SmallVector<mlir::ml_program::GlobalOp>>
withWeightsAsArguments(mlir::func::FuncOp loss, llvm::ArrayRef<mlir::ml_program::GlobalOp> trainable,
                       llvm::StringRef name);

/// Clones `callee`'s body at `b`'s insertion point with its arguments
/// replaced by `operands`; the values it returns.
llvm::SmallVector<mlir::Value> inlineBody(mlir::OpBuilder &b, mlir::func::FuncOp callee, mlir::ValueRange operands);

/// `v` through an all-reduce (mean) over a group of one: the identity, which
/// canonicalization drops, and the point where nncc-data-parallel averages a
/// gradient or the loss over the ranks.
mlir::Value synchronized(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);

} // namespace nncc

#endif // NNCC_PASSES_TRAINSTEP_H
