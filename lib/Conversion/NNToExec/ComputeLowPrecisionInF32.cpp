/// f16/bf16 arithmetic on the CPU target: every nn op that computes on
/// low-precision floats is rewritten to compute in f32 between casts, so a
/// kernel reads f16/bf16, computes and accumulates in f32, and rounds to
/// nearest even once per op result. GEMM library calls take the f16/bf16
/// operands themselves and also round once (module ABI dtype_a/b/c). This is
/// where the GPU plan rounds too (cuBLASLt with an f32 compute type; generated
/// kernels round each op's result), so CPU numerics check the GPU plan.
/// Fusion then merges the casts with their neighbours.
#include "lib/Conversion/NNToExec/Contractions.h"
#include "lib/Conversion/NNToExec/PassDetail.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace nncc {
#define GEN_PASS_DEF_COMPUTELOWPRECISIONINF32PASS
#include "lib/Conversion/NNToExec/Passes.h.inc"

namespace {

bool isLowPrecisionFloat(Type t) {
  Type e = getElementTypeOrSelf(t);
  return e.isF16() || e.isBF16();
}

/// Ops whose results are exact copies or selections of operand elements
/// (data movement, Where, MaxPool, TopK) give the same bits in any type:
/// they stay in the low type and move half the bytes.
bool movesValuesOnly(Operation *op) {
  if (isa<nn::CastOp, nn::ConstantOp, nn::WhereOp, nn::ExpandOp, nn::MaxPoolOp, nn::TopKOp,
          nn::ShapeOp, nn::SizeOp, nn::ConstantOfShapeOp>(op))
    return true;
  auto kind = dyn_cast<nn::FusionKindOpInterface>(op);
  // Resize interpolates (an injective op that computes).
  return kind && kind.getFusionKind() == nn::FusionKind::Injective && !isa<nn::ResizeOp>(op);
}

/// `v` as f32: a constant is converted at compile time (exactly: f32 holds
/// every f16/bf16 value), anything else gets one cast, named after the op
/// `loc` that first reads it (for profiles).
Value widen(OpBuilder &b, Location loc, Value v, DenseMap<Value, Value> &widened) {
  if (Value known = widened.lookup(v))
    return known;
  auto type = cast<RankedTensorType>(v.getType());
  auto f32Type = type.clone(b.getF32Type());
  Value wide;
  DenseElementsAttr attr;
  if (matchPattern(v, m_Constant(&attr)) && type.hasStaticShape()) {
    SmallVector<APFloat> values;
    for (APFloat x : attr.getValues<APFloat>()) {
      bool lost;
      x.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(x);
    }
    wide = nn::ConstantOp::create(b, v.getLoc(), DenseElementsAttr::get(f32Type, values));
  } else {
    wide = nn::CastOp::create(b, loc, f32Type, v);
  }
  widened[v] = wide;
  return wide;
}

/// Replaces `op` by the same op on f32 operands between casts.
void computeInF32(Operation *op, DenseMap<Value, Value> &widened) {
  OpBuilder b(op);
  SmallVector<Value> operands;
  for (Value v : op->getOperands())
    operands.push_back(isLowPrecisionFloat(v.getType()) ? widen(b, op->getLoc(), v, widened) : v);
  SmallVector<Type> resultTypes;
  for (Type t : op->getResultTypes())
    resultTypes.push_back(isLowPrecisionFloat(t) ? cast<RankedTensorType>(t).clone(b.getF32Type())
                                                 : t);
  OperationState state(op->getLoc(), op->getName(), operands, resultTypes, op->getAttrs());
  Operation *wide = b.create(state);
  for (auto [old, now] : llvm::zip(op->getResults(), wide->getResults())) {
    Value result = now;
    if (old.getType() != now.getType())
      result = nn::CastOp::create(b, op->getLoc(), old.getType(), now);
    old.replaceAllUsesWith(result);
  }
  op->erase();
}

/// Rewrites every nn op of `func` that computes on f16/bf16 values as the
/// same op on f32 between casts, but the GEMM library contractions; a
/// convolution among them gives up its bias to an add, computed in f32 (the
/// GEMM rounds its product once, the add rounds the sum once, as on the GPU).
void computeLowPrecisionInF32(func::FuncOp func) {
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (op->getDialect() && isa<nn::NNDialect>(op->getDialect()) && !movesValuesOnly(op) &&
        (llvm::any_of(op->getOperandTypes(), isLowPrecisionFloat) ||
         llvm::any_of(op->getResultTypes(), isLowPrecisionFloat)))
      ops.push_back(op);
  });
  DenseMap<Value, Value> widened;
  for (Operation *op : ops) {
    if (!isLibraryContraction(op)) {
      computeInF32(op, widened);
      continue;
    }
    auto conv = dyn_cast<nn::ConvOp>(op);
    if (conv && conv.getBias() && isLowPrecisionFloat(conv.getType()))
      computeInF32(splitConvBias(conv), widened);
  }
}

struct ComputeLowPrecisionInF32Pass
    : impl::ComputeLowPrecisionInF32PassBase<ComputeLowPrecisionInF32Pass> {
  void runOnOperation() override {
    if (!getOperation().isPrivate())
      computeLowPrecisionInF32(getOperation());
  }
};

} // namespace

} // namespace nncc
