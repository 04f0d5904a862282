/// The gradient rules of the graph-level collectives (nncc-differentiate):
/// Megatron's conjugate pair. Tensor parallelism (nncc-tensor-parallel)
/// keeps every value outside its split regions replicated over the tensor
/// group, so the cotangent of a replicated value is the same on every rank.
#include "dialects/Dist/DistOps.h"
#include "dialects/NN/Gradients/GradientBuilder.h"

using namespace mlir;
using namespace nncc;
using namespace nncc::dist;

namespace {

using Grads = SmallVectorImpl<Value>;

/// `g`: a sum over the tensor group of the partial products of a
/// row-parallel layer. Its result is replicated, so each partial's
/// cotangent is the result's (the same on every rank). A mean, or a sum over
/// the data group, sits after the backward (gradient averaging) and has no
/// rule.
LogicalResult allReduceRule(AllReduceOp op, nn::grad::GradBuilder &, ArrayRef<Value> dys, Grads &dxs) {
  if (op.getGroup() != "tensor" || op.getReduction() != "sum")
    return op.emitOpError("gradient: only a sum over the tensor group has a rule, not a ")
           << op.getReduction() << " over the " << op.getGroup() << " group";
  dxs.append(dys.begin(), dys.end());
  return success();
}

/// The collectives below have rules over the tensor group only, where the
/// loss, and so the cotangent of a replicated value, is the same on every
/// rank (the convention of allReduceRule).
LogicalResult tensorGroupOnly(Operation *op, StringRef group) {
  if (group == "tensor")
    return success();
  return op->emitOpError("gradient: only a collective over the tensor group has a rule, not one over the ")
         << group << " group";
}

/// A reduce-scatter "mean" of `x` along `axis`: on a value every rank holds
/// alike, rank r's part r of it (the IR names no rank, so this is how a
/// rule takes one).
Value ownPart(nn::grad::GradBuilder &g, Value x, int64_t axis, IntegerAttr groupSize, StringAttr group) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] /= groupSize.getInt();
  return ReduceScatterOp::create(g.b, g.loc, type.clone(shape), x, g.b.getStringAttr("mean"),
                                 g.b.getI64IntegerAttr(axis), groupSize, group);
}

/// All-gather: the replicated result's cotangent, part r for rank r.
LogicalResult allGatherRule(AllGatherOp op, nn::grad::GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  if (failed(tensorGroupOnly(op, op.getGroup())))
    return failure();
  dxs.push_back(dys[0] ? ownPart(g, dys[0], op.getAxis(), op.getGroupSizeAttr(), op.getGroupAttr()) : Value());
  return success();
}

/// Reduce-scatter (a sum): each operand is a partial of the whole sum, whose
/// cotangent is the ranks' parts gathered.
LogicalResult reduceScatterRule(ReduceScatterOp op, nn::grad::GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  if (failed(tensorGroupOnly(op, op.getGroup())))
    return failure();
  if (op.getReduction() != "sum")
    return op.emitOpError("gradient: only a sum has a rule, not a ") << op.getReduction();
  if (!dys[0]) {
    dxs.push_back(Value());
    return success();
  }
  auto gather = AllGatherOp::create(g.b, g.loc, op.getInput().getType(), dys[0], op.getAxisAttr(),
                                    op.getGroupSizeAttr(), op.getGroupAttr());
  dxs.push_back(gather);
  return success();
}

/// Broadcast: the cotangent on root, zeros elsewhere. Entry `root` of a
/// new leading axis of group_size entries holds the cotangent (the others
/// zeros); each rank keeps its own entry.
LogicalResult broadcastRule(BroadcastOp op, nn::grad::GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  if (failed(tensorGroupOnly(op, op.getGroup())))
    return failure();
  if (!dys[0]) {
    dxs.push_back(Value());
    return success();
  }
  ArrayRef<int64_t> shape = g.shape(dys[0]);
  int64_t n = op.getGroupSize(), rank = static_cast<int64_t>(shape.size());
  SmallVector<int64_t> lifted{1};
  lifted.append(shape.begin(), shape.end());
  SmallVector<int64_t> pads(2 * (rank + 1), 0);
  pads[0] = op.getRoot();
  pads[rank + 1] = n - 1 - op.getRoot();
  Value stacked = g.pad(g.reshape(dys[0], lifted), pads);
  dxs.push_back(g.reshape(ownPart(g, stacked, 0, op.getGroupSizeAttr(), op.getGroupAttr()), shape));
  return success();
}

/// `f`: the replicated input of column-parallel layers. Each rank's
/// cotangent is what its own columns contribute; the input's is their sum.
LogicalResult replicateRule(ReplicateOp op, nn::grad::GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  if (!dys[0]) {
    dxs.push_back(Value());
    return success();
  }
  auto sum = AllReduceOp::create(g.b, g.loc, TypeRange{dys[0].getType()}, ValueRange{dys[0]},
                                 g.b.getStringAttr("sum"), op.getGroupSizeAttr(), op.getGroupAttr());
  dxs.push_back(sum.getResult(0));
  return success();
}

} // namespace

void dist::registerGradientModels(MLIRContext *context) {
  nn::grad::attach<AllReduceOp, allReduceRule>(context);
  nn::grad::attach<ReplicateOp, replicateRule>(context);
  nn::grad::attach<AllGatherOp, allGatherRule>(context);
  nn::grad::attach<ReduceScatterOp, reduceScatterRule>(context);
  nn::grad::attach<BroadcastOp, broadcastRule>(context);
}
