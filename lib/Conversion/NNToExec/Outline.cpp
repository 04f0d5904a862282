#include "lib/Conversion/NNToExec/Outline.h"

#include "lib/Conversion/NNToExec/KernelBuilders.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

namespace nncc {

bool hasStaticShapes(Operation *op) {
  auto isStaticType = [](Type t) {
    auto r = dyn_cast<RankedTensorType>(t);
    return r && r.hasStaticShape();
  };
  return llvm::all_of(op->getOperandTypes(), isStaticType) &&
         llvm::all_of(op->getResultTypes(), isStaticType);
}

SmallVector<func::FuncOp> entryFunctions(ModuleOp module) {
  SmallVector<func::FuncOp> entries;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isPrivate())
      entries.push_back(func);
  return entries;
}

namespace {

/// Operands a kernel may overwrite with its result: the kernel is one
/// linalg.generic whose result and operand both use the identity map and
/// have the same type, so each element is read before it is written.
DenseI64ArrayAttr inplaceOperands(func::FuncOp kernel, unsigned numOperands, OpBuilder &b) {
  Block &body = kernel.getBody().front();
  if (body.getOperations().size() != 2)
    return {};
  auto generic = dyn_cast<linalg::GenericOp>(body.front());
  if (!generic || generic.getNumDpsInits() != 1)
    return {};
  Value init = generic.getDpsInits()[0];
  AffineMap initMap = generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  if (!initMap.isIdentity())
    return {};
  SmallVector<int64_t> candidates;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    auto arg = dyn_cast<BlockArgument>(input->get());
    if (!arg || arg.getOwner() != &body || arg.getArgNumber() >= numOperands ||
        arg.getType() != init.getType() || !generic.getMatchingIndexingMap(input).isIdentity())
      continue;
    candidates.push_back(arg.getArgNumber());
  }
  if (candidates.empty())
    return {};
  return b.getDenseI64ArrayAttr(candidates);
}

} // namespace

FailureOr<exec::LaunchOp> outlineKernel(Operation *at, SymbolTable &symbols, StringRef suffix,
                                        ValueRange operands, TypeRange resultTypes,
                                        KernelBodyFn buildBody) {
  MLIRContext *ctx = at->getContext();
  Location loc = at->getLoc();
  OpBuilder mb(ctx);
  SmallVector<Type> argTypes, kernelResults;
  for (Value v : operands)
    argTypes.push_back(toSignless(v.getType()));
  for (Type t : resultTypes) {
    argTypes.push_back(toSignless(t));
    kernelResults.push_back(toSignless(t));
  }
  // k<N>_<suffix> with the lowest N the module leaves free: unique without
  // a counter shared by every pass that outlines.
  std::string name;
  for (unsigned n = 0; name.empty() || symbols.lookup(name); ++n)
    name = ("k" + Twine(n) + "_" + suffix).str();
  auto kernel = func::FuncOp::create(mb, loc, name, mb.getFunctionType(argTypes, kernelResults));
  kernel.setPrivate();
  // Inits (destinations) may be written in place; inputs are read-only.
  for (unsigned i = operands.size(); i < argTypes.size(); ++i)
    kernel.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName, mb.getBoolAttr(true));
  Block *body = kernel.addEntryBlock();
  OpBuilder kb = OpBuilder::atBlockBegin(body);
  auto results = buildBody(kb, body->getArguments().take_front(operands.size()),
                           body->getArguments().drop_front(operands.size()));
  if (failed(results)) {
    kernel.erase();
    return failure();
  }
  func::ReturnOp::create(kb, loc, *results);
  // Appended at the module's end; nncc-order-kernels orders them at last.
  symbols.insert(kernel);
  OpBuilder fb(at);
  return exec::LaunchOp::create(fb, loc, resultTypes, name, operands, nodeNames(loc),
                                inplaceOperands(kernel, operands.size(), fb));
}

FailureOr<exec::LaunchOp> outlineOp(Operation *op, SymbolTable &symbols) {
  auto launch = outlineKernel(op, symbols, op->getName().stripDialect(), op->getOperands(),
                              op->getResultTypes(),
                              [&](OpBuilder &kb, ValueRange args, ValueRange inits) {
                                return buildKernel(kb, op, args, inits);
                              });
  if (failed(launch))
    return failure();
  op->replaceAllUsesWith(launch->getResults());
  op->erase();
  return launch;
}

} // namespace nncc
