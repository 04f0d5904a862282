/// Reverse-mode autodiff of an entry function: `<entry>_grad`.
#include "passes/Passes.h"

#include "dialects/NN/Gradients/GradientBuilder.h"
#include "dialects/NN/NNOps.h"
#include "dialects/NN/NNUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Regex.h"

namespace nncc {
#define GEN_PASS_DEF_DIFFERENTIATEPASS
#include "passes/Passes.h.inc"
} // namespace nncc

using namespace mlir;
using namespace nncc;

namespace {

bool isFloatTensor(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && isa<FloatType>(r.getElementType());
}

/// The name a value is known by: its `nn.name` attribute, else a position.
std::string nameOf(DictionaryAttr attrs, StringRef fallback) {
  auto name = attrs ? attrs.getAs<StringAttr>("nn.name") : StringAttr();
  return name ? name.str() : fallback.str();
}

/// The constants of `func` to differentiate: f32/f16/bf16 nn.constants whose
/// name matches `wrt` as a whole.
SmallVector<nn::ConstantOp> selectConstants(func::FuncOp func, StringRef wrt) {
  SmallVector<nn::ConstantOp> selected;
  if (wrt.empty())
    return selected;
  llvm::Regex regex(("^(" + wrt + ")$").str());
  func.walk([&](nn::ConstantOp c) {
    std::string name = nn::nodeNames(c.getLoc());
    if (!name.empty() && isFloatTensor(c.getType()) && regex.match(name))
      selected.push_back(c);
  });
  return selected;
}

/// Adds cotangent `g` to what `v` has gathered so far.
void accumulate(OpBuilder &b, DenseMap<Value, Value> &cotangents, Value v, Value g) {
  auto [it, inserted] = cotangents.try_emplace(v, g);
  if (!inserted)
    it->second = nn::AddOp::create(b, g.getLoc(), v.getType(), it->second, g);
}

/// Erases the ops of `block` (but its terminator) whose results are unused:
/// gradients nothing asked for, forward values no gradient reads.
void eraseDeadOps(Block &block) {
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (op->use_empty() && isPure(op))
      op->erase();
}

struct DifferentiatePass : nncc::impl::DifferentiatePassBase<DifferentiatePass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto entryFunc = module.lookupSymbol<func::FuncOp>(entry);
    if (!entryFunc || entryFunc.isExternal()) {
      module.emitError("nncc-differentiate: no function '") << entry << "' to differentiate";
      return signalPassFailure();
    }
    if (failed(buildGradientFunction(entryFunc, wrtConstants)))
      signalPassFailure();
  }
};

/// Turns `func`, a clone of the entry, into its gradient function.
LogicalResult differentiate(func::FuncOp entry, func::FuncOp func, StringRef wrtConstants) {
  OpBuilder b(func.getContext());
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Location loc = func.getLoc();
  auto named = [&](StringRef name) { return b.getDictionaryAttr(b.getNamedAttr("nn.name", b.getStringAttr(name))); };

  // Differentiated values: float arguments, then the selected constants
  // turned into arguments, in this order.
  SmallVector<std::pair<BlockArgument, std::string>> wrt;
  for (BlockArgument arg : body.getArguments())
    if (isFloatTensor(arg.getType()))
      wrt.push_back({arg, nameOf(func.getArgAttrDict(arg.getArgNumber()),
                                 "arg" + std::to_string(arg.getArgNumber()))});
  // Simplification may have folded several initializers into one constant
  // named after the node that did it (a BatchNorm folded into a Conv, fused
  // Q/K/V weights): names are made unique with a #k suffix.
  llvm::StringMap<unsigned> uses;
  for (auto &[arg, name] : wrt)
    ++uses[name];
  for (nn::ConstantOp c : selectConstants(func, wrtConstants)) {
    unsigned index = func.getNumArguments();
    std::string name = nn::nodeNames(c.getLoc());
    for (std::string base = name; uses[name]++ > 0;)
      name = base + "#" + std::to_string(uses[base]);
    if (failed(func.insertArgument(index, c.getType(), named(name), c.getLoc())))
      return failure();
    c.getResult().replaceAllUsesWith(body.getArgument(index));
    c.erase();
    wrt.push_back({body.getArgument(index), name});
  }
  for (auto &[arg, name] : wrt)
    if (!cast<RankedTensorType>(arg.getType()).hasStaticShape())
      return entry.emitError("nncc-differentiate: '")
             << name << "' has a dynamic shape; gradients need static ones (fix the dims with --shape)";

  // One cotangent argument per float result.
  DenseMap<Value, Value> cotangents;
  b.setInsertionPoint(ret);
  for (auto [i, result] : llvm::enumerate(ret.getOperands())) {
    if (!isFloatTensor(result.getType()))
      continue;
    unsigned index = func.getNumArguments();
    std::string name = "d_" + nameOf(entry.getResultAttrDict(i), "output" + std::to_string(i));
    if (failed(func.insertArgument(index, result.getType(), named(name), loc)))
      return failure();
    accumulate(b, cotangents, result, body.getArgument(index));
  }

  // Values that depend on a differentiated one: only their producers need
  // backward rules.
  llvm::DenseSet<Value> active;
  for (auto &[arg, name] : wrt)
    active.insert(arg);
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(), [&](Value v) { return active.contains(v); }))
      for (Value r : op.getResults())
        if (isFloatTensor(r.getType()))
          active.insert(r);

  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.push_back(&op);
  auto dynamic = [](Type t) {
    auto r = dyn_cast<RankedTensorType>(t);
    return !r || !r.hasStaticShape();
  };
  for (Operation *op : llvm::reverse(forward)) {
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value r : op->getResults()) {
      resultGrads.push_back(active.contains(r) ? cotangents.lookup(r) : Value());
      any |= bool(resultGrads.back());
    }
    if (!any)
      continue;
    std::string node = nn::nodeNames(op->getLoc());
    if (node.empty())
      node = "?";
    auto rule = dyn_cast<nn::GradientOpInterface>(op);
    if (!rule)
      return op->emitError("node '") << node << "' (" << op->getName() << "): no gradient rule for this op";
    // The rules work out shapes at compile time.
    if (llvm::any_of(op->getOperandTypes(), dynamic) || llvm::any_of(op->getResultTypes(), dynamic))
      return op->emitError("node '") << node << "' (" << op->getName()
                                     << "): gradients need static shapes (fix the input dims with --shape)";
    SmallVector<Value> operandGrads;
    if (failed(rule.buildGradients(b, resultGrads, operandGrads)))
      return failure();
    if (operandGrads.size() != op->getNumOperands())
      return op->emitError("gradient rule built ") << operandGrads.size() << " cotangents for "
                                                   << op->getNumOperands() << " operands";
    for (auto [operand, g] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!g || !active.contains(operand))
        continue;
      if (g.getType() != operand.getType())
        return op->emitError("gradient rule built a cotangent of type ")
               << g.getType() << " for an operand of type " << operand.getType();
      accumulate(b, cotangents, operand, g);
    }
  }

  SmallVector<Value> grads;
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  for (auto &[arg, name] : wrt) {
    Value g = cotangents.lookup(arg);
    grads.push_back(g ? g : nn::grad::GradBuilder(b, loc).zeros(cast<RankedTensorType>(arg.getType())));
    types.push_back(arg.getType());
    attrs.push_back(named("d_" + name));
  }
  func::ReturnOp::create(b, ret.getLoc(), grads);
  ret.erase();
  func.setType(b.getFunctionType(body.getArgumentTypes(), types));
  func.setAllResultAttrs(attrs);
  eraseDeadOps(body);
  return success();
}

} // namespace

FailureOr<func::FuncOp> nncc::buildGradientFunction(func::FuncOp entry, StringRef wrtConstants) {
  std::string gradName = (entry.getName() + "_grad").str();
  auto module = entry->getParentOfType<ModuleOp>();
  if (module.lookupSymbol(gradName))
    return entry.emitError("nncc-differentiate: '") << gradName << "' exists already";
  if (!llvm::hasSingleElement(entry.getBody()))
    return entry.emitError("nncc-differentiate: expects a single-block function");
  std::string regexError;
  if (!wrtConstants.empty() && !llvm::Regex(wrtConstants).isValid(regexError))
    return entry.emitError("nncc-differentiate: wrt-constants '") << wrtConstants << "': " << regexError;
  OpBuilder b(entry.getContext());
  b.setInsertionPointAfter(entry);
  auto func = cast<func::FuncOp>(b.clone(*entry));
  func.setName(gradName);
  func.setPublic();
  // A failure leaves the module as it was.
  if (failed(differentiate(entry, func, wrtConstants))) {
    func.erase();
    return failure();
  }
  return func;
}
