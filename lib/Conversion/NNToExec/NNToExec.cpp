#include "lib/Conversion/NNToExec/NNToExec.h"

#include "lib/Conversion/NNToExec/KernelBuilders.h"

#include "dialects/Exec/ExecOps.h"
#include "dialects/NN/NNOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace nncc {
namespace {

bool isStatic(Operation *op) {
  auto isStaticType = [](Type t) {
    auto r = dyn_cast<RankedTensorType>(t);
    return r && r.hasStaticShape();
  };
  return llvm::all_of(op->getOperandTypes(), isStaticType) &&
         llvm::all_of(op->getResultTypes(), isStaticType);
}

/// The ONNX node names a location carries (NameLoc, possibly fused).
std::string nodeNames(Location loc) {
  std::string names;
  loc->walk([&](Location l) {
    if (auto name = dyn_cast<NameLoc>(l)) {
      if (!names.empty())
        names += ",";
      names += name.getName().str();
    }
    return WalkResult::advance();
  });
  return names;
}

/// Outlines `op` into a kernel function and replaces it with a launch.
FailureOr<exec::LaunchOp> outline(Operation *op, ModuleOp module, int &counter) {
  MLIRContext *ctx = op->getContext();
  OpBuilder mb(ctx);
  mb.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> argTypes, resultTypes;
  for (Type t : op->getOperandTypes())
    argTypes.push_back(toSignless(t));
  for (Type t : op->getResultTypes()) {
    argTypes.push_back(toSignless(t));
    resultTypes.push_back(toSignless(t));
  }
  std::string name = "k" + std::to_string(counter++) + "_" +
                     op->getName().stripDialect().str();
  auto kernel = func::FuncOp::create(mb, op->getLoc(), name, mb.getFunctionType(argTypes, resultTypes));
  kernel.setPrivate();
  // Inits (destinations) may be written in place; inputs are read-only.
  for (unsigned i = op->getNumOperands(); i < argTypes.size(); ++i)
    kernel.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName, mb.getBoolAttr(true));
  Block *body = kernel.addEntryBlock();
  OpBuilder kb = OpBuilder::atBlockBegin(body);
  ValueRange args = body->getArguments().take_front(op->getNumOperands());
  ValueRange inits = body->getArguments().drop_front(op->getNumOperands());
  auto results = buildKernel(kb, op, args, inits);
  if (failed(results)) {
    kernel.erase();
    return failure();
  }
  func::ReturnOp::create(kb, op->getLoc(), *results);

  OpBuilder fb(op);
  auto launch = exec::LaunchOp::create(fb, op->getLoc(), op->getResultTypes(), name,
                                       op->getOperands(), nodeNames(op->getLoc()));
  op->replaceAllUsesWith(launch.getResults());
  op->erase();
  return launch;
}

bool isF32(Value v) { return cast<RankedTensorType>(v.getType()).getElementType().isF32(); }

/// True when `operand`'s batch dims (all but the last two) either equal the
/// result's or are all 1: the GEMM library call then walks them with a
/// constant stride (0 for a broadcast operand).
bool gemmBatchCompatible(RankedTensorType operand, RankedTensorType result) {
  auto batch = operand.getShape().drop_back(2), outBatch = result.getShape().drop_back(2);
  if (llvm::all_of(batch, [](int64_t d) { return d == 1; }))
    return true;
  return batch.size() <= outBatch.size() &&
         llvm::equal(batch, outBatch.take_back(batch.size())) &&
         llvm::all_of(outBatch.drop_back(batch.size()), [](int64_t d) { return d == 1; });
}

/// f32 matrix products become GEMM library calls; Gemm's C is broadcast to
/// the result first (by an outlined expand kernel) and accumulated with beta.
LogicalResult lowerToGemm(Operation *op, ModuleOp module, int &counter, bool &lowered) {
  lowered = false;
  OpBuilder b(op);
  if (auto mm = dyn_cast<nn::MatMulOp>(op)) {
    auto lhs = cast<RankedTensorType>(mm.getLhs().getType());
    auto rhs = cast<RankedTensorType>(mm.getRhs().getType());
    auto out = cast<RankedTensorType>(mm.getType());
    if (!isF32(mm.getLhs()) || !isF32(mm.getRhs()) || lhs.getRank() < 2 || rhs.getRank() < 2 ||
        out.getNumElements() == 0 || lhs.getShape().back() == 0 ||
        !gemmBatchCompatible(lhs, out) || !gemmBatchCompatible(rhs, out))
      return success();
    auto gemm = exec::GemmOp::create(b, op->getLoc(), out, mm.getLhs(), mm.getRhs(), Value(),
                                     false, false, APFloat(1.0), APFloat(0.0),
                                     nodeNames(op->getLoc()));
    op->replaceAllUsesWith(gemm->getResults());
    op->erase();
    lowered = true;
    return success();
  }
  auto g = dyn_cast<nn::GemmOp>(op);
  if (!g || !isF32(g.getA()) || !isF32(g.getB()))
    return success();
  auto out = cast<RankedTensorType>(g.getType());
  auto a = cast<RankedTensorType>(g.getA().getType());
  if (out.getNumElements() == 0 || a.getShape()[g.getTransA() ? 0 : 1] == 0)
    return success();
  Value c = g.getC();
  double beta = g.getBeta().convertToDouble();
  if (c && beta != 0.0 && c.getType() != out) {
    auto expand = nn::ExpandOp::create(b, op->getLoc(), out, c, Value());
    auto launch = outline(expand, module, counter);
    if (failed(launch))
      return failure();
    c = launch->getResult(0);
  }
  if (beta == 0.0)
    c = Value();
  auto gemm = exec::GemmOp::create(b, op->getLoc(), out, g.getA(), g.getB(), c, g.getTransA(),
                                   g.getTransB(), APFloat(g.getAlpha().convertToDouble()),
                                   APFloat(c ? beta : 0.0), nodeNames(op->getLoc()));
  op->replaceAllUsesWith(gemm->getResults());
  op->erase();
  lowered = true;
  return success();
}

LogicalResult lowerFunction(func::FuncOp func, ModuleOp module, int &counter) {
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front())
    if (op.getDialect() && isa<nn::NNDialect>(op.getDialect()) && !isa<nn::ConstantOp>(op))
      ops.push_back(&op);
  for (Operation *op : ops) {
    if (!isStatic(op))
      return op->emitOpError("needs static shapes for code generation (fix dynamic input "
                             "dims with --shape NAME:DIMS)");
    // A reshape of a static tensor is a view of the same bytes.
    if (isa<nn::ReshapeOp, nn::SqueezeOp, nn::UnsqueezeOp>(op) && op->getNumOperands() == 1) {
      OpBuilder b(op);
      auto view = exec::ViewOp::create(b, op->getLoc(), op->getResult(0).getType(), op->getOperand(0));
      op->replaceAllUsesWith(view->getResults());
      op->erase();
      continue;
    }
    // Results without elements need no code: they become empty constants.
    if (llvm::all_of(op->getResultTypes(), [](Type t) {
          return cast<RankedTensorType>(t).getNumElements() == 0;
        })) {
      OpBuilder b(op);
      for (Value r : op->getResults()) {
        auto type = cast<RankedTensorType>(r.getType());
        auto empty = DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>());
        r.replaceAllUsesWith(nn::ConstantOp::create(b, op->getLoc(), empty));
      }
      op->erase();
      continue;
    }
    bool lowered = false;
    if (failed(lowerToGemm(op, module, counter, lowered)))
      return failure();
    if (!lowered && failed(outline(op, module, counter)))
      return failure();
  }
  return success();
}

} // namespace

LogicalResult lowerNNToExec(ModuleOp module) {
  int counter = 0;
  SmallVector<func::FuncOp> entries;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isPrivate())
      entries.push_back(func);
  for (auto func : entries)
    if (failed(lowerFunction(func, module, counter)))
      return failure();
  return success();
}

} // namespace nncc
