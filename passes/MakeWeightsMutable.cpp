/// Weights as module state: nn.constant -> ml_program.global + global_load.
#include "passes/Passes.h"

#include "dialects/NN/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Regex.h"

namespace nncc {
#define GEN_PASS_DEF_MAKEWEIGHTSMUTABLEPASS
#include "passes/Passes.h.inc"
} // namespace nncc

using namespace mlir;
using namespace nncc;

namespace {

struct MakeWeightsMutablePass : nncc::impl::MakeWeightsMutablePassBase<MakeWeightsMutablePass> {
  using MakeWeightsMutablePassBase::MakeWeightsMutablePassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::Regex regex("^(" + names + ")$"), excluded("^(" + exclude + ")$");
    std::string why;
    for (auto [option, value, re] : {std::tuple<const char *, std::string, llvm::Regex *>{"names", names, &regex},
                                     {"exclude", exclude, &excluded}})
      if (!re->isValid(why)) {
        module.emitError("nncc-make-weights-mutable: ") << option << " '" << value
                                                        << "' is no regular expression: " << why;
        return signalPassFailure();
      }
    SymbolTable symbols(module);
    // One global per weight name (and value: folding may give two constants
    // one name), created in first-use order at the top of the module.
    llvm::DenseMap<std::pair<StringAttr, Attribute>, ml_program::GlobalOp> globals;
    OpBuilder top(module.getBodyRegion());
    top.setInsertionPointToStart(module.getBody());
    SmallVector<nn::ConstantOp> constants;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isPrivate())
        func.walk([&](nn::ConstantOp c) { constants.push_back(c); });
    for (nn::ConstantOp c : constants) {
      auto name = dyn_cast<NameLoc>(c.getLoc());
      auto type = cast<RankedTensorType>(c.getType());
      if (!name || !isa<FloatType>(type.getElementType()) || !regex.match(name.getName().strref()) ||
          (!exclude.empty() && excluded.match(name.getName().strref())))
        continue;
      auto &global = globals[{name.getName(), c.getValue()}];
      if (!global) {
        global = ml_program::GlobalOp::create(top, c.getLoc(), name.getName().strref(), type,
                                              /*is_mutable=*/true, c.getValue(),
                                              top.getStringAttr("private"));
        symbols.insert(global); // renamed when the name is taken
        top.setInsertionPointAfter(global);
      }
      OpBuilder b(c);
      auto load = ml_program::GlobalLoadOp::create(b, c.getLoc(), type,
                                                   FlatSymbolRefAttr::get(global.getSymNameAttr()));
      c.replaceAllUsesWith(load.getResult());
      c.erase();
    }
  }
};

} // namespace
