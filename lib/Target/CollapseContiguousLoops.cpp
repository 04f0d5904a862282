/// Contiguous loops of linalg.generic over whole buffers as one loop.
#include "lib/Target/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

namespace nncc {
#define GEN_PASS_DEF_COLLAPSECONTIGUOUSLOOPSPASS
#include "lib/Target/Passes.h.inc"
} // namespace nncc

using namespace mlir;

namespace nncc {
namespace {

/// Groups of consecutive loops of `op` that every operand reads or writes
/// as one contiguous run (same iterator type, dims adjacent and in order in
/// every indexing map, or absent from it). Empty when nothing collapses.
SmallVector<ReassociationIndices> contiguousLoopGroups(linalg::GenericOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // A diagonal (d0, d1, d1) or a window (d0 + d1) is no plain run of loops.
  if (!llvm::all_of(maps, [](AffineMap map) { return map.isProjectedPermutation(); }))
    return {};
  // Each loop must cover the whole dim it indexes in every operand.
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    ArrayRef<int64_t> shape = cast<MemRefType>(operand.get().getType()).getShape();
    for (auto [i, result] : llvm::enumerate(map.getResults()))
      if (auto dim = dyn_cast<AffineDimExpr>(result); dim && ranges[dim.getPosition()] != shape[i])
        return {};
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<ReassociationIndices> groups{{0}};
  for (int64_t d = 1, e = op.getNumLoops(); d < e; ++d) {
    ReassociationIndices grown = groups.back();
    grown.push_back(d);
    if (iterators[d] == iterators[d - 1] && linalg::areDimSequencesPreserved(maps, {grown}))
      groups.back() = grown;
    else
      groups.push_back({d});
  }
  if (groups.size() == op.getNumLoops())
    return {};
  return groups;
}

/// Whether `op` is a candidate: buffers only, each a whole static
/// identity-layout buffer, plain maps, several loops, no linalg.index.
bool isCollapsible(linalg::GenericOp op) {
  bool wholeBuffers = llvm::all_of(op->getOperands(), [](Value v) {
    auto type = dyn_cast<MemRefType>(v.getType());
    return type && type.getLayout().isIdentity() && type.hasStaticShape();
  });
  // Windows (o*s + k) are no plain runs of loops even where dropping a unit
  // dim leaves a bare k: its loop then covers less than the dim it indexes.
  // Broadcasts (c, 0, 0) are.
  bool plainMaps = llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
    return map.isProjectedPermutation(/*allowZeroInResults=*/true);
  });
  return op.hasPureBufferSemantics() && wholeBuffers && plainMaps && op.getNumLoops() > 1 &&
         op.getBody()->getOps<linalg::IndexOp>().empty();
}

struct CollapseContiguousLoopsPass : impl::CollapseContiguousLoopsPassBase<CollapseContiguousLoopsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (isKernel(func))
        func.walk([&](linalg::GenericOp op) {
          if (isCollapsible(op))
            ops.push_back(op);
        });
    IRRewriter rewriter(&getContext());
    linalg::ControlDropUnitDims dropUnitDims;
    for (linalg::GenericOp op : ops) {
      // A broadcast operand such as bias[c, 1, 1] is indexed (c, 0, 0); its
      // unit dims go first, or no loop group would be contiguous in it.
      rewriter.setInsertionPoint(op);
      if (auto dropped = linalg::dropUnitDims(rewriter, op, dropUnitDims); succeeded(dropped)) {
        rewriter.eraseOp(op);
        op = cast<linalg::GenericOp>(dropped->resultOp.getOperation());
      }
      SmallVector<ReassociationIndices> groups = contiguousLoopGroups(op);
      if (groups.empty())
        continue;
      rewriter.setInsertionPoint(op);
      if (succeeded(linalg::collapseOpIterationDims(op, groups, rewriter)))
        rewriter.eraseOp(op);
    }
  }
};

} // namespace
} // namespace nncc
