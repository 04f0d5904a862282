/// nncc-add-loss: the `eval_step` entry.
#include "passes/Loss.h"
#include "passes/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace nncc {
#define GEN_PASS_DEF_ADDLOSSPASS
#include "passes/Passes.h.inc"
} // namespace nncc

using namespace mlir;
using namespace nncc;

namespace {

struct AddLossPass : nncc::impl::AddLossPassBase<AddLossPass> {
  using AddLossPassBase::AddLossPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = SymbolTable(module).lookup<func::FuncOp>("forward");
    if (!forward) {
      module.emitError("nncc-add-loss: the module has no entry 'forward'");
      return signalPassFailure();
    }
    if (failed(buildLossFunction(module, forward, "eval_step", LossOptions{loss, output, labelName})))
      signalPassFailure();
  }
};

} // namespace
