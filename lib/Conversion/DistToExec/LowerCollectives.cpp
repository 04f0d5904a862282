/// nncc-lower-collectives: dist.all_reduce becomes the collective plan step.
#include "lib/Conversion/DistToExec/Passes.h"

using namespace mlir;

namespace nncc {
#define GEN_PASS_DEF_LOWERCOLLECTIVESPASS
#include "lib/Conversion/DistToExec/Passes.h.inc"

namespace {

struct LowerCollectivesPass : impl::LowerCollectivesPassBase<LowerCollectivesPass> {
  void runOnOperation() override {
    SmallVector<dist::AllReduceOp> ops;
    getOperation().walk([&](dist::AllReduceOp op) { ops.push_back(op); });
    for (dist::AllReduceOp op : ops) {
      OpBuilder b(op);
      auto step = dist::AllReduceStepOp::create(b, op.getLoc(), op.getResultTypes(), op.getInputs(),
                                                op.getReductionAttr(), op.getGroupSizeAttr(),
                                                op.getGroupAttr());
      op.replaceAllUsesWith(step.getResults());
      op.erase();
    }
    // dist.replicate only marks a gradient: the forward is its operand.
    getOperation().walk([&](dist::ReplicateOp op) {
      op.replaceAllUsesWith(op.getInput());
      op.erase();
    });
  }
};

} // namespace
} // namespace nncc
