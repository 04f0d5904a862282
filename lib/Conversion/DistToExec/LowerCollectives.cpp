/// nncc-lower-collectives: each graph-level collective becomes its plan step.
#include "lib/Conversion/DistToExec/Passes.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace nncc {
#define GEN_PASS_DEF_LOWERCOLLECTIVESPASS
#include "lib/Conversion/DistToExec/Passes.h.inc"

namespace {

/// Whether a gather or scatter along `axis` of `type` is one the step can
/// exchange (DistOps.td); reports it when not.
LogicalResult contiguous(Operation *op, Type type, int64_t axis) {
  if (dist::partsContiguous(cast<RankedTensorType>(type), axis))
    return success();
  return op->emitOpError("cannot be lowered: along axis ")
         << axis << " of " << type
         << " the ranks' parts are not contiguous (every dim before the axis must be 1; move the axis "
            "outermost first)";
}

LogicalResult checkLowerable(Operation *op) {
  if (auto gather = dyn_cast<dist::AllGatherOp>(op))
    return contiguous(op, gather.getInput().getType(), gather.getAxis());
  if (auto scatter = dyn_cast<dist::ReduceScatterOp>(op))
    return contiguous(op, scatter.getInput().getType(), scatter.getAxis());
  return success();
}

/// `op` replaced by an op of `StepOp`: the same operands, result types and
/// attributes (each step mirrors its graph op).
template <typename StepOp> void replaceWithStep(Operation *op) {
  OpBuilder b(op);
  OperationState state(op->getLoc(), StepOp::getOperationName(), op->getOperands(), op->getResultTypes(),
                       op->getAttrs());
  Operation *step = b.create(state);
  op->replaceAllUsesWith(step->getResults());
  op->erase();
}

struct LowerCollectivesPass : impl::LowerCollectivesPassBase<LowerCollectivesPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<dist::AllReduceOp, dist::AllGatherOp, dist::ReduceScatterOp, dist::BroadcastOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (failed(checkLowerable(op)))
        return signalPassFailure();
      TypeSwitch<Operation *>(op)
          .Case([](dist::AllReduceOp op) { replaceWithStep<dist::AllReduceStepOp>(op); })
          .Case([](dist::AllGatherOp op) { replaceWithStep<dist::AllGatherStepOp>(op); })
          .Case([](dist::ReduceScatterOp op) { replaceWithStep<dist::ReduceScatterStepOp>(op); })
          .Case([](dist::BroadcastOp op) { replaceWithStep<dist::BroadcastStepOp>(op); });
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
