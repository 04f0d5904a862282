/// nncc-add-optimizer: the `optimizer_step` entry.
#include "passes/Optimizer.h"
#include "passes/Passes.h"

#include "dialects/NN/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace nncc {
#define GEN_PASS_DEF_ADDOPTIMIZERPASS
#include "passes/Passes.h.inc"
} // namespace nncc

using namespace mlir;
using namespace nncc;

namespace {

struct AddOptimizerPass : nncc::impl::AddOptimizerPassBase<AddOptimizerPass> {
  using AddOptimizerPassBase::AddOptimizerPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OptimizerOptions o{optimizer, momentum, beta1, beta2, eps, weightDecay, gradClip};
    if (failed(checkOptimizerOptions(module, "nncc-add-optimizer", o)))
      return signalPassFailure();
    SmallVector<ml_program::GlobalOp> params = trainableGlobals(module);
    if (params.empty()) {
      module.emitError("nncc-add-optimizer: the module has no trainable weights (mutable f32 "
                       "globals: compile with --mutable-weights)");
      return signalPassFailure();
    }
    FailureOr<OptimizerState> state = getOrCreateOptimizerState(module, params, o);
    if (failed(state))
      return signalPassFailure();

    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    SmallVector<Type> inputs{scalar};
    SmallVector<Attribute> inputNames{b.getDictionaryAttr(b.getNamedAttr("nn.name", b.getStringAttr("lr")))};
    for (ml_program::GlobalOp p : params) {
      inputs.push_back(p.getType());
      inputNames.push_back(b.getDictionaryAttr(
          b.getNamedAttr("nn.name", b.getStringAttr("grad." + p.getSymName().str()))));
    }
    Location loc = NameLoc::get(b.getStringAttr("optimizer_step"));
    auto func = func::FuncOp::create(b, loc, "optimizer_step", b.getFunctionType(inputs, {scalar}));
    func.setAllArgAttrs(inputNames);
    func.setResultAttr(0, "nn.name", b.getStringAttr("step"));
    SymbolTable(module).insert(func);
    Block *body = func.addEntryBlock();
    OpBuilder fb = OpBuilder::atBlockBegin(body);
    Value step = buildOptimizerStep(fb, loc, params, *state, body->getArguments().drop_front(),
                                    body->getArgument(0), o);
    func::ReturnOp::create(fb, loc, step);
  }
};

} // namespace
