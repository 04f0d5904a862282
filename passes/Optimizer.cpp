/// torch.optim's update rules as nn ops on module state.
#include "passes/Optimizer.h"

#include "dialects/Dist/DistOps.h"
#include "dialects/NN/NNOps.h"

#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace nncc {
namespace {

/// Marks a global as optimizer state (not a weight to train).
constexpr llvm::StringLiteral kOptimizerStateAttr = "nncc.optimizer_state";

/// Elementwise arithmetic on f32 tensors broadcasting rank-0 scalars, the
/// result taking the shape of the ranked operand.
struct Arith {
  OpBuilder &b;
  Location loc;

  Type resultType(Value x, Value y) {
    auto tx = cast<RankedTensorType>(x.getType()), ty = cast<RankedTensorType>(y.getType());
    return tx.getRank() >= ty.getRank() ? tx : ty;
  }
  Value scalar(double v) {
    auto type = RankedTensorType::get({}, b.getF32Type());
    return nn::ConstantOp::create(b, loc, type, DenseElementsAttr::get(type, b.getF32FloatAttr(v)));
  }
  Value add(Value x, Value y) { return nn::AddOp::create(b, loc, resultType(x, y), x, y); }
  Value sub(Value x, Value y) { return nn::SubOp::create(b, loc, resultType(x, y), x, y); }
  Value mul(Value x, Value y) { return nn::MulOp::create(b, loc, resultType(x, y), x, y); }
  Value div(Value x, Value y) { return nn::DivOp::create(b, loc, resultType(x, y), x, y); }
  Value min(Value x, Value y) { return nn::MinOp::create(b, loc, resultType(x, y), x, y); }
  Value pow(Value x, Value y) { return nn::PowOp::create(b, loc, resultType(x, y), x, y); }
  Value sqrt(Value x) { return nn::SqrtOp::create(b, loc, x.getType(), x); }
  /// The sum of every element, a scalar.
  Value sumAll(Value x) {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> axes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      axes.push_back(d);
    return nn::ReduceSumOp::create(b, loc, RankedTensorType::get({}, type.getElementType()), x, Value(),
                                   b.getDenseI64ArrayAttr(axes), b.getBoolAttr(false), b.getBoolAttr(false));
  }
  Value load(ml_program::GlobalOp g) {
    return ml_program::GlobalLoadOp::create(b, loc, g.getType(), FlatSymbolRefAttr::get(g.getSymNameAttr()));
  }
  void store(ml_program::GlobalOp g, Value v) {
    ml_program::GlobalStoreOp::create(b, loc, FlatSymbolRefAttr::get(g.getSymNameAttr()), v);
  }
};

} // namespace

LogicalResult checkOptimizerOptions(Operation *where, StringRef pass, const OptimizerOptions &o) {
  if (o.kind == "sgd" || o.kind == "momentum" || o.kind == "adam" || o.kind == "adamw")
    return success();
  return where->emitError(pass) << ": unknown optimizer '" << o.kind
                                << "' (expected sgd, momentum, adam or adamw)";
}

SmallVector<ml_program::GlobalOp> trainableGlobals(ModuleOp module) {
  SmallVector<ml_program::GlobalOp> params;
  for (auto g : module.getOps<ml_program::GlobalOp>()) {
    auto type = dyn_cast<RankedTensorType>(g.getType());
    if (g.getIsMutable() && !g->hasAttr(kOptimizerStateAttr) && type && type.getElementType().isF32())
      params.push_back(g);
  }
  return params;
}

FailureOr<OptimizerState> getOrCreateOptimizerState(ModuleOp module, ArrayRef<ml_program::GlobalOp> params,
                                                    const OptimizerOptions &options) {
  SymbolTable symbols(module);
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToEnd(module.getBody());
  auto create = [&](StringRef name, Type type, ml_program::GlobalOp like = {}) {
    if (auto existing = symbols.lookup<ml_program::GlobalOp>(name))
      return existing;
    auto g = ml_program::GlobalOp::create(b, module.getLoc(), name, type, /*is_mutable=*/true,
                                          /*value=*/Attribute(), b.getStringAttr("private"));
    g->setAttr(kOptimizerStateAttr, b.getUnitAttr());
    // A moment of a parameter split over the tensor group is split alike.
    if (auto shard = like ? like->getAttr(dist::kShardAttrName) : Attribute())
      g->setAttr(dist::kShardAttrName, shard);
    symbols.insert(g);
    return g;
  };
  OptimizerState state;
  bool momentum = options.kind == "momentum", adam = options.kind == "adam" || options.kind == "adamw";
  for (ml_program::GlobalOp p : params) {
    if (momentum || adam)
      state.first.push_back(create((p.getSymName() + (adam ? ".exp_avg" : ".momentum_buffer")).str(), p.getType(), p));
    if (adam)
      state.second.push_back(create((p.getSymName() + ".exp_avg_sq").str(), p.getType(), p));
  }
  state.step = create("optimizer.step", RankedTensorType::get({}, b.getF32Type()));
  return state;
}

Value buildOptimizerStep(OpBuilder &b, Location loc, ArrayRef<ml_program::GlobalOp> params,
                         const OptimizerState &state, ValueRange grads, Value lr,
                         const OptimizerOptions &o, int64_t pipelineStages) {
  Arith a{b, loc};
  Value step = a.add(a.load(state.step), a.scalar(1));
  a.store(state.step, step);
  SmallVector<Value> g(grads.begin(), grads.end());
  // torch.nn.utils.clip_grad_norm_: one L2 norm over every gradient,
  // scaled by max_norm / (norm + 1e-6) when that is below 1.
  if (o.gradClip > 0) {
    auto sumOver = [&](Value x, int64_t ranks, StringRef group) {
      return dist::AllReduceOp::create(b, loc, TypeRange{x.getType()}, ValueRange{x}, b.getStringAttr("sum"),
                                       b.getI64IntegerAttr(ranks), b.getStringAttr(group))
          .getResult(0);
    };
    // A parameter split over the tensor group holds part of the norm.
    Value squares = a.scalar(0), splitSquares = a.scalar(0);
    int64_t splitParts = 1;
    for (auto [p, x] : llvm::zip(params, g)) {
      auto shard = p->getAttrOfType<DenseI64ArrayAttr>(dist::kShardAttrName);
      Value &sum = shard ? splitSquares : squares;
      sum = a.add(sum, a.sumAll(a.mul(x, x)));
      if (shard)
        splitParts = shard[1];
    }
    if (splitParts > 1)
      squares = a.add(squares, sumOver(splitSquares, splitParts, "tensor"));
    // Each pipeline stage holds the gradients of its own weights.
    if (pipelineStages > 1)
      squares = sumOver(squares, pipelineStages, "pipeline");
    Value coef = a.min(a.scalar(1), a.div(a.scalar(o.gradClip), a.add(a.sqrt(squares), a.scalar(1e-6))));
    for (Value &x : g)
      x = a.mul(x, coef);
  }
  bool adam = o.kind == "adam" || o.kind == "adamw";
  Value bc1, bc2sqrt;
  if (adam) {
    bc1 = a.sub(a.scalar(1), a.pow(a.scalar(o.beta1), step));
    bc2sqrt = a.sqrt(a.sub(a.scalar(1), a.pow(a.scalar(o.beta2), step)));
  }
  for (auto [i, pg] : llvm::enumerate(params)) {
    Value p = a.load(pg), grad = g[i];
    if (o.kind == "adamw") {
      if (o.weightDecay != 0) // decoupled: p *= 1 - lr * wd
        p = a.mul(p, a.sub(a.scalar(1), a.mul(lr, a.scalar(o.weightDecay))));
    } else if (o.weightDecay != 0) { // L2: g += wd * p
      grad = a.add(grad, a.mul(p, a.scalar(o.weightDecay)));
    }
    if (o.kind == "sgd") {
      p = a.sub(p, a.mul(lr, grad));
    } else if (o.kind == "momentum") {
      // buf = momentum * buf + g (a zero buffer makes the first step buf = g,
      // as torch's clone), p -= lr * buf.
      Value buf = a.add(a.mul(a.load(state.first[i]), a.scalar(o.momentum)), grad);
      a.store(state.first[i], buf);
      p = a.sub(p, a.mul(lr, buf));
    } else {
      Value m = a.add(a.mul(a.load(state.first[i]), a.scalar(o.beta1)), a.mul(grad, a.scalar(1 - o.beta1)));
      Value v = a.add(a.mul(a.load(state.second[i]), a.scalar(o.beta2)),
                      a.mul(a.mul(grad, grad), a.scalar(1 - o.beta2)));
      a.store(state.first[i], m);
      a.store(state.second[i], v);
      // denom = sqrt(v) / sqrt(1 - beta2^t) + eps; p -= lr / (1 - beta1^t) * m / denom
      Value denom = a.add(a.div(a.sqrt(v), bc2sqrt), a.scalar(o.eps));
      p = a.sub(p, a.mul(a.div(lr, bc1), a.div(m, denom)));
    }
    a.store(pg, p);
  }
  return step;
}

} // namespace nncc
