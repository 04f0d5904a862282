/// nncc-outline-kernels: the last step of nn -> exec; every nn op the
/// fusion and contraction passes left becomes a view, an empty constant or
/// a launch of its own kernel.
#include "lib/Conversion/NNToExec/Outline.h"
#include "lib/Conversion/NNToExec/PassDetail.h"

using namespace mlir;

namespace nncc {
#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#include "lib/Conversion/NNToExec/Passes.h.inc"

namespace {

/// Lowers every nn op of `func` but the constants (weights): a view, an
/// empty constant or a launch of a one-op kernel.
LogicalResult outlineKernels(func::FuncOp func, SymbolTable &symbols) {
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front())
    if (op.getDialect() && isa<nn::NNDialect>(op.getDialect()) && !isa<nn::ConstantOp>(op))
      ops.push_back(&op);
  for (Operation *op : ops) {
    if (!hasStaticShapes(op))
      return op->emitOpError("needs static shapes for code generation (fix dynamic input "
                             "dims with --shape NAME:DIMS)");
    // A reshape of a static tensor is a view of the same bytes.
    if (isa<nn::ReshapeOp, nn::SqueezeOp, nn::UnsqueezeOp>(op) && op->getNumOperands() == 1) {
      OpBuilder b(op);
      auto view = exec::ViewOp::create(b, op->getLoc(), op->getResult(0).getType(), op->getOperand(0));
      op->replaceAllUsesWith(view->getResults());
      op->erase();
      continue;
    }
    // Results without elements need no code: they become empty constants.
    if (llvm::all_of(op->getResultTypes(), [](Type t) {
          return cast<RankedTensorType>(t).getNumElements() == 0;
        })) {
      OpBuilder b(op);
      for (Value r : op->getResults()) {
        auto type = cast<RankedTensorType>(r.getType());
        auto empty = DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>());
        r.replaceAllUsesWith(nn::ConstantOp::create(b, op->getLoc(), empty));
      }
      op->erase();
      continue;
    }
    if (failed(outlineOp(op, symbols)))
      return failure();
  }
  return success();
}

struct OutlineKernelsPass : impl::OutlineKernelsPassBase<OutlineKernelsPass> {
  void runOnOperation() override {
    SymbolTable symbols(getOperation());
    for (func::FuncOp func : entryFunctions(getOperation()))
      if (failed(outlineKernels(func, symbols)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace nncc
