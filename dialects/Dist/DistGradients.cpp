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
}
