/// nncc-form-row-kernels: every row-kernel root (layer_norm, softmax over the
/// last axis, row reductions, attention) as one kernel with the producers
/// and consumers only it touches.
#include "lib/Conversion/NNToExec/Outline.h"
#include "lib/Conversion/NNToExec/PassDetail.h"
#include "lib/Conversion/NNToExec/RowKernels.h"

using namespace mlir;

namespace nncc {
#define GEN_PASS_DEF_FORMROWKERNELSPASS
#include "lib/Conversion/NNToExec/Passes.h.inc"

namespace {

/// A user of a row root's f32 result that casts it to f16/bf16 (the operand
/// of the next GEMM): the kernel writes the low type itself, instead of or
/// next to the f32 result, rounding each element once as the cast would, so
/// no cast kernel re-reads the result.
nn::CastOp absorbableCast(Value result) {
  for (Operation *user : result.getUsers()) {
    auto c = dyn_cast<nn::CastOp>(user);
    Type e = c ? getElementTypeOrSelf(c.getType()) : Type();
    if (c && (e.isF16() || e.isBF16()))
      return c;
  }
  return {};
}

/// The single user of `attention`'s result (or of its output cast) when it
/// is a transpose that keeps the last dim last: the attention kernel then
/// writes its rows there.
nn::TransposeOp absorbableTranspose(Operation *attention, Value result) {
  if (!isa<nn::AttentionOp>(attention) || !result.hasOneUse())
    return {};
  auto transpose = dyn_cast<nn::TransposeOp>(*result.getUsers().begin());
  if (!transpose || transpose.getPerm().back() != (int64_t)transpose.getPerm().size() - 1 ||
      !cast<RankedTensorType>(transpose.getType()).hasStaticShape())
    return {};
  return transpose;
}

/// Builds every row-kernel root (layer_norm, softmax over the last axis,
/// attention) as one kernel together with the elementwise, transpose and
/// reshape producers only it reads (a residual add before a layer norm, the
/// bias add and head split before attention), and attention's output
/// transpose. Runs before elementwise fusion, which then groups the rest.
LogicalResult formRowKernels(func::FuncOp func, SymbolTable &symbols) {
  SmallVector<Operation *> roots;
  for (Operation &op : func.getBody().front())
    if (isRowKernelRoot(&op))
      roots.push_back(&op);
  for (Operation *root : roots) {
    llvm::SetVector<Operation *> producers = inlinableProducers(root, isa<nn::AttentionOp>(root));
    // Consumers replaced by the kernel's result: the output cast when it is
    // the only user, then attention's head-merge transpose. A cast next to
    // other users becomes a second result.
    nn::CastOp outCast = absorbableCast(root->getResult(0));
    nn::CastOp secondOutput = outCast && !root->hasOneUse() ? outCast : nn::CastOp();
    if (secondOutput)
      outCast = {};
    nn::TransposeOp transpose = absorbableTranspose(root, outCast ? outCast->getResult(0) : root->getResult(0));
    SmallVector<Operation *> consumers;
    if (outCast)
      consumers.push_back(outCast);
    if (transpose)
      consumers.push_back(transpose);
    SmallVector<Value> leaves;
    for (Operation *op : llvm::concat<Operation *const>(producers.getArrayRef(), ArrayRef<Operation *>(root)))
      for (Value operand : op->getOperands())
        if ((!operand.getDefiningOp() || !producers.contains(operand.getDefiningOp())) &&
            !llvm::is_contained(leaves, operand))
          leaves.push_back(operand);
    Operation *last = consumers.empty() ? root : consumers.back();
    SmallVector<Location> locs;
    for (Operation *op : producers)
      locs.push_back(op->getLoc());
    locs.push_back(root->getLoc());
    for (Operation *op : consumers)
      locs.push_back(op->getLoc());
    SmallVector<Type> resultTypes(last->getResultTypes());
    if (secondOutput) {
      locs.push_back(secondOutput.getLoc());
      resultTypes.push_back(secondOutput.getType());
    }
    last->setLoc(FusedLoc::get(root->getContext(), locs));
    std::string suffix = root->getName().stripDialect().str();
    size_t fused = producers.size() + 1 + consumers.size() + (secondOutput ? 1 : 0);
    if (fused > 1)
      suffix = "fused_" + suffix + "_" + std::to_string(fused);
    auto launch = outlineKernel(
        last, symbols, suffix, leaves, resultTypes,
        [&](OpBuilder &kb, ValueRange args, ValueRange inits) {
          IRMapping arguments;
          arguments.map(leaves, args);
          return buildRowKernel(kb, root, ElementReader(producers, arguments), inits,
                                transpose ? transpose.getPerm() : ArrayRef<int64_t>());
        });
    if (failed(launch))
      return failure();
    remark::passed(root->getLoc(), fusionRemark("row-kernel", func))
        << remark::reason("{0} producer(s) recomputed in the row loop, {1} consumer(s) written by it{2}",
                          producers.size(), consumers.size(), secondOutput ? ", a second f16/bf16 result" : "");
    last->getResult(0).replaceAllUsesWith(launch->getResult(0));
    if (secondOutput) {
      secondOutput.getResult().replaceAllUsesWith(launch->getResult(1));
      secondOutput->erase();
    }
    for (Operation *op : llvm::reverse(consumers))
      op->erase();
    root->erase();
    for (Operation *op : llvm::reverse(producers))
      op->erase();
  }
  return success();
}

struct FormRowKernelsPass : impl::FormRowKernelsPassBase<FormRowKernelsPass> {
  void runOnOperation() override {
    SymbolTable symbols(getOperation());
    for (func::FuncOp func : entryFunctions(getOperation()))
      if (failed(formRowKernels(func, symbols)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace nncc
