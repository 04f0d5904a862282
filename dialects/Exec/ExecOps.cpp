#include "dialects/Exec/ExecOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace nncc::exec;

#include "dialects/Exec/ExecDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Exec/ExecAttrs.cpp.inc"

void ExecDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Exec/ExecOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Exec/ExecAttrs.cpp.inc"
      >();
}

/// Kernels see unsigned integers as signless (arith works on signless).
static bool sameModuloSignedness(Type a, Type b) {
  auto ta = cast<RankedTensorType>(a), tb = cast<RankedTensorType>(b);
  if (ta.getShape() != tb.getShape())
    return false;
  Type ea = ta.getElementType(), eb = tb.getElementType();
  if (ea == eb)
    return true;
  auto ia = dyn_cast<IntegerType>(ea), ib = dyn_cast<IntegerType>(eb);
  return ia && ib && ia.getWidth() == ib.getWidth();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto kernel = symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getKernelAttr());
  if (!kernel)
    return emitOpError("kernel '") << getKernel() << "' is not a func.func in scope";
  FunctionType type = kernel.getFunctionType();
  size_t expectedInputs = getArgs().size() + getResults().size();
  if (type.getNumInputs() != expectedInputs || type.getNumResults() != getResults().size())
    return emitOpError("kernel '") << getKernel() << "' has type " << type
                                   << ", which does not take the operands plus one init per result";
  for (auto [arg, expected] : llvm::zip(getArgs(), type.getInputs()))
    if (!sameModuloSignedness(arg.getType(), expected))
      return emitOpError("operand type ") << arg.getType() << " differs from the kernel's " << expected;
  for (auto [result, expected] : llvm::zip(getResults(), type.getResults()))
    if (!sameModuloSignedness(result.getType(), expected))
      return emitOpError("result type ") << result.getType() << " differs from the kernel's " << expected;
  return success();
}

LogicalResult GemmOp::verify() {
  auto a = cast<RankedTensorType>(getA().getType()), b = cast<RankedTensorType>(getB().getType());
  auto out = cast<RankedTensorType>(getOutput().getType());
  if (a.getRank() < 2 || b.getRank() < 2 || out.getRank() < 2)
    return emitOpError("operands and result need rank >= 2");
  Type ea = a.getElementType(), eb = b.getElementType(), eo = out.getElementType();
  if (!(ea.isF32() || ea.isF16() || ea.isBF16()) || ea != eb || !(eo == ea || eo.isF32()))
    return emitOpError("A and B must both be f32, f16 or bf16 and the result f32 or their type, got ")
           << ea << " x " << eb << " -> " << eo;
  int64_t ka = a.getShape()[a.getRank() - (getTransA() ? 2 : 1)];
  int64_t kb = b.getShape()[b.getRank() - (getTransB() ? 1 : 2)];
  if (ka != kb)
    return emitOpError("contraction dims differ: ") << ka << " vs " << kb;
  if (getC() && getC().getType() != out)
    return emitOpError("C must have the result type");
  if (Value bias = getBias()) {
    auto type = cast<RankedTensorType>(bias.getType());
    int64_t count = getBiasPerRow() ? out.getShape()[out.getRank() - 2] : out.getShape().back();
    if (type.getNumElements() != count || type.getElementType() != out.getElementType())
      return emitOpError("bias must hold ") << (getBiasPerRow() ? "M = " : "N = ") << count
                                            << " elements of the result type";
  } else if (getBiasPerRow()) {
    return emitOpError("bias_per_row without a bias");
  }
  StringRef act = getActivation();
  if (act != "none" && act != "relu" && act != "gelu" && act != "clip")
    return emitOpError("activation must be none, relu, gelu or clip, got '") << act << "'";

  return success();
}

LogicalResult ViewOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getOutput().getType());
  if (!in.hasStaticShape() || !out.hasStaticShape() ||
      in.getNumElements() != out.getNumElements() || in.getElementType() != out.getElementType())
    return emitOpError("must keep the element type and count of a static shape");
  return success();
}

#define GET_OP_CLASSES
#include "dialects/Exec/ExecOps.cpp.inc"
