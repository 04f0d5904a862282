/// nncc-add-train-step: forward, loss, backward and update in one entry.
#include "passes/Loss.h"
#include "passes/Optimizer.h"
#include "passes/TrainStep.h"
#include "passes/Passes.h"

#include "dialects/Dist/DistOps.h"
#include "dialects/NN/NNOps.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace nncc {
#define GEN_PASS_DEF_ADDTRAINSTEPPASS
#include "passes/Passes.h.inc"
} // namespace nncc

using namespace mlir;
using namespace nncc;

std::pair<func::FuncOp, SmallVector<ml_program::GlobalOp>>
nncc::withWeightsAsArguments(func::FuncOp loss, ArrayRef<ml_program::GlobalOp> trainable, StringRef name) {
  OpBuilder b(loss);
  auto func = cast<func::FuncOp>(b.clone(*loss));
  func.setName(name);
  Block &body = func.getBody().front();
  llvm::DenseMap<StringAttr, BlockArgument> argOf;
  SmallVector<ml_program::GlobalOp> weights;
  SmallVector<ml_program::GlobalLoadOp> loads(body.getOps<ml_program::GlobalLoadOp>());
  for (ml_program::GlobalLoadOp load : loads) {
    StringAttr symbol = load.getGlobal().getLeafReference();
    auto it = llvm::find_if(trainable, [&](ml_program::GlobalOp g) { return g.getSymNameAttr() == symbol; });
    if (it == trainable.end())
      continue;
    auto [slot, inserted] = argOf.try_emplace(symbol, BlockArgument());
    if (inserted) {
      unsigned index = func.getNumArguments();
      (void)func.insertArgument(index, load.getType(),
                                b.getDictionaryAttr(b.getNamedAttr("nn.name", symbol)), load.getLoc());
      slot->second = body.getArgument(index);
      weights.push_back(*it);
    }
    load.getResult().replaceAllUsesWith(slot->second);
    load.erase();
  }
  return {func, weights};
}

SmallVector<Value> nncc::inlineBody(OpBuilder &b, func::FuncOp callee, ValueRange operands) {
  IRMapping map;
  map.map(callee.getArguments(), operands);
  for (Operation &op : callee.getBody().front().without_terminator())
    b.clone(op, map);
  SmallVector<Value> results;
  for (Value v : callee.getBody().front().getTerminator()->getOperands())
    results.push_back(map.lookup(v));
  return results;
}

Value nncc::synchronized(OpBuilder &b, Location loc, Value v) {
  return dist::AllReduceOp::create(b, loc, TypeRange{v.getType()}, ValueRange{v}, b.getStringAttr("mean"),
                                   b.getI64IntegerAttr(1))
      .getResult(0);
}

namespace {

struct AddTrainStepPass : nncc::impl::AddTrainStepPassBase<AddTrainStepPass> {
  using AddTrainStepPassBase::AddTrainStepPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = SymbolTable(module).lookup<func::FuncOp>("forward");
    if (!forward) {
      module.emitError("nncc-add-train-step: the module has no entry 'forward'");
      return signalPassFailure();
    }
    OptimizerOptions o{optimizer, momentum, beta1, beta2, eps, weightDecay, gradClip};
    if (failed(checkOptimizerOptions(module, "nncc-add-train-step", o)))
      return signalPassFailure();
    SmallVector<ml_program::GlobalOp> trainable = trainableGlobals(module);
    if (trainable.empty()) {
      module.emitError("nncc-add-train-step: the model has no trainable weights (--trainable "
                       "matches no float initializer)");
      return signalPassFailure();
    }
    LossOptions lossOptions{loss, output, labelName};
    if (failed(buildLossFunction(module, forward, "eval_step", lossOptions)))
      return signalPassFailure();
    FailureOr<func::FuncOp> lossFn = buildLossFunction(module, forward, "train_step.loss", lossOptions);
    if (failed(lossFn))
      return signalPassFailure();
    auto [differentiable, weights] = withWeightsAsArguments(*lossFn, trainable, "train_step.fn");
    unsigned numData = lossFn->getNumArguments();
    (*lossFn).erase();
    if (weights.empty()) {
      differentiable.erase();
      module.emitError("nncc-add-train-step: the loss depends on no trainable weight");
      return signalPassFailure();
    }
    // The forward ops keep the mark through cloning: the backward rules'
    // ops are the ones without it.
    for (Operation &op : differentiable.getBody().front().without_terminator())
      op.setAttr(kForwardOpAttr, UnitAttr::get(&getContext()));
    FailureOr<func::FuncOp> grad = buildGradientFunction(differentiable, "");
    if (failed(grad)) {
      differentiable.erase();
      return signalPassFailure();
    }
    FailureOr<OptimizerState> state = getOrCreateOptimizerState(module, weights, o);
    if (failed(state))
      return signalPassFailure();

    // train_step(data..., lr): the loss, its gradients, the update.
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    SmallVector<Type> inputs(differentiable.getArgumentTypes().take_front(numData));
    inputs.push_back(scalar);
    Location loc = NameLoc::get(b.getStringAttr("train_step"));
    auto step = func::FuncOp::create(b, loc, "train_step", b.getFunctionType(inputs, differentiable.getResultTypes()));
    for (unsigned i = 0; i < numData; ++i)
      step.setArgAttrs(i, differentiable.getArgAttrDict(i));
    step.setArgAttr(numData, "nn.name", b.getStringAttr("lr"));
    for (unsigned i = 0; i < differentiable.getNumResults(); ++i)
      step.setResultAttrs(i, differentiable.getResultAttrDict(i));
    SymbolTable(module).insert(step);
    Block *body = step.addEntryBlock();
    OpBuilder sb = OpBuilder::atBlockBegin(body);
    SmallVector<Value> args(body->getArguments().take_front(numData));
    for (ml_program::GlobalOp w : weights)
      args.push_back(ml_program::GlobalLoadOp::create(sb, loc, w.getType(), FlatSymbolRefAttr::get(w.getSymNameAttr())));
    SmallVector<Value> lossResults = inlineBody(sb, differentiable, args);
    // d loss / d loss = 1; the gradient function's other cotangents (none:
    // the loss is the only float result).
    SmallVector<Value> gradArgs(args);
    for (Type t : grad->getArgumentTypes().drop_front(args.size()))
      gradArgs.push_back(nn::ConstantOp::create(sb, loc, cast<RankedTensorType>(t),
                                                DenseElementsAttr::get(cast<RankedTensorType>(t), sb.getF32FloatAttr(1.0))));
    SmallVector<Value> grads = inlineBody(sb, *grad, gradArgs);
    // The gradients of the weights are the last results (after the float data inputs').
    SmallVector<Value> weightGrads;
    for (Value g : ValueRange(grads).take_back(weights.size()))
      weightGrads.push_back(synchronized(sb, loc, g));
    for (Value &l : lossResults) // the loss; not the labels' range check (an i32 flag)
      if (isa<FloatType>(cast<RankedTensorType>(l.getType()).getElementType()))
        l = synchronized(sb, loc, l);
    buildOptimizerStep(sb, loc, weights, *state, weightGrads, body->getArgument(numData), o);
    func::ReturnOp::create(sb, loc, lossResults);
    grad->erase();
    differentiable.erase();
  }
};

} // namespace
