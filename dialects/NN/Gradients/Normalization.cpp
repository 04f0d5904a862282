//===- Normalization.cpp - gradients of layer, instance and batch norm ----===//
#include "dialects/NN/Gradients/GradientBuilder.h"

using namespace mlir;
using namespace nncc::nn;
using namespace nncc::nn::grad;

namespace {

using Grads = SmallVectorImpl<Value>;

/// Normalization over `axes` recomputed from x: returns x̂ = (x - μ) r and r.
std::pair<Value, Value> normalize(GradBuilder &g, Value x, ArrayRef<int64_t> axes, double eps) {
  Value centered = g.sub(x, g.reduceMean(x, axes, /*keepdims=*/true));
  Value var = g.reduceMean(g.mul(centered, centered), axes, /*keepdims=*/true);
  Value r = g.unary<ReciprocalOp>(g.unary<SqrtOp>(g.add(var, g.scalarLike(var, eps))));
  return {g.mul(centered, r), r};
}

/// dx of x̂ = (x - μ) r over `axes` given dx̂: r (dx̂ - mean(dx̂) - x̂ mean(dx̂ x̂)).
Value normalizeGrad(GradBuilder &g, Value xhat, Value r, Value dxhat, ArrayRef<int64_t> axes) {
  Value meanD = g.reduceMean(dxhat, axes, /*keepdims=*/true);
  Value meanDX = g.reduceMean(g.mul(dxhat, xhat), axes, /*keepdims=*/true);
  return g.mul(r, g.sub(g.sub(dxhat, meanD), g.mul(xhat, meanDX)));
}

/// LayerNorm: y = x̂ scale + bias over the axes from `axis` on.
LogicalResult layerNormRule(LayerNormOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput(), scale = op.getScale(), dy = dys[0];
  int64_t rank = g.type(x).getRank();
  int64_t axis = *normalizeAxis(op.getAxis(), rank);
  auto axes = llvm::to_vector(llvm::seq<int64_t>(axis, rank));
  auto [xhat, r] = normalize(g, x, axes, op.getEpsilon().convertToDouble());
  dxs.push_back(normalizeGrad(g, xhat, r, g.mul(dy, scale), axes));
  dxs.push_back(g.sumTo(g.mul(dy, xhat), scale));
  if (op.getBias())
    dxs.push_back(g.sumTo(dy, op.getBias()));
  return success();
}

/// The per-channel 1-d `v` shaped [1, C, 1, ...] against `x`.
Value channels(GradBuilder &g, Value v, Value x) {
  SmallVector<int64_t> s(g.type(x).getRank(), 1);
  s[1] = g.shape(v)[0];
  return g.reshape(v, s);
}

SmallVector<int64_t> allBut1(Value x) {
  SmallVector<int64_t> axes{0};
  llvm::append_range(axes, llvm::seq<int64_t>(2, GradBuilder::type(x).getRank()));
  return axes;
}

/// InstanceNorm: x̂ over the spatial axes of each (n, c), then per-channel
/// scale and bias.
LogicalResult instanceNormRule(InstanceNormOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput(), dy = dys[0];
  auto spatial = llvm::to_vector(llvm::seq<int64_t>(2, g.type(x).getRank()));
  auto [xhat, r] = normalize(g, x, spatial, op.getEpsilon().convertToDouble());
  dxs.push_back(normalizeGrad(g, xhat, r, g.mul(dy, channels(g, op.getScale(), x)), spatial));
  dxs.push_back(g.reduceSum(g.mul(dy, xhat), allBut1(x), /*keepdims=*/false));
  dxs.push_back(g.reduceSum(dy, allBut1(x), /*keepdims=*/false));
  return success();
}

/// Inference BatchNorm is the affine map y = (x - mean) inv scale + bias
/// per channel with inv = 1 / sqrt(var + eps).
LogicalResult batchNormRule(BatchNormOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput(), scale = op.getScale(), var = op.getVariance(), dy = dys[0];
  Value inv = g.unary<ReciprocalOp>(g.unary<SqrtOp>(
      g.add(var, g.scalarLike(var, op.getEpsilon().convertToDouble()))));
  auto axes = allBut1(x);
  Value centered = g.sub(x, channels(g, op.getMean(), x));
  Value sumDy = g.reduceSum(dy, axes, /*keepdims=*/false);
  Value sumDyC = g.reduceSum(g.mul(dy, centered), axes, /*keepdims=*/false);
  Value scaleInv = g.mul(scale, inv);
  dxs.push_back(g.mul(dy, channels(g, scaleInv, x)));
  dxs.push_back(g.mul(sumDyC, inv));
  dxs.push_back(sumDy);
  dxs.push_back(g.neg(g.mul(sumDy, scaleInv)));
  dxs.push_back(g.mul(g.mul(sumDyC, g.mul(scaleInv, g.mul(inv, inv))), -0.5));
  return success();
}

} // namespace

void grad::registerNormalization(MLIRContext *context) {
  attach<LayerNormOp, layerNormRule>(context);
  attach<InstanceNormOp, instanceNormRule>(context);
  attach<BatchNormOp, batchNormRule>(context);
}
