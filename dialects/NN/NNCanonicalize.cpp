/// Canonicalization patterns of the nn ops: ONNX inputs that hold shapes or
/// axes move into attributes (or disappear, when the result type says it
/// all) as soon as they are constants.
#include "dialects/NN/NNOps.h"
#include "dialects/NN/ShapeUtils.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace nncc::nn;

namespace {

bool allResultsStatic(Operation *op) {
  return llvm::all_of(op->getResultTypes(), [](Type t) {
    return cast<RankedTensorType>(t).hasStaticShape();
  });
}

/// Reads a constant integer operand as int64 values.
std::optional<SmallVector<int64_t>> constantInts(Value v) {
  DenseIntElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &x : attr.getValues<APInt>())
    values.push_back(x.getSExtValue());
  return values;
}

/// Drops the shape-like operand at `index` of an op whose results are static.
template <typename OpTy>
struct DropShapeOperand : OpRewritePattern<OpTy> {
  DropShapeOperand(MLIRContext *ctx, unsigned index)
      : OpRewritePattern<OpTy>(ctx), index(index) {}
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    if (op->getNumOperands() <= index || !allResultsStatic(op))
      return failure();
    rewriter.modifyOpInPlace(op, [&] { op->eraseOperand(index); });
    return success();
  }
  unsigned index;
};

/// squeeze/unsqueeze with a static result are reshapes.
template <typename OpTy>
struct SqueezeToReshape : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    if (!allResultsStatic(op))
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getInput(), Value());
    return success();
  }
};

/// Constant reduction axes become the normalized `axes` attribute.
template <typename OpTy>
struct ReduceAxesToAttr : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    auto axes = constantInts(op.getAxesTensor());
    if (!axes)
      return failure();
    if (axes->empty() && op.getNoopWithEmptyAxes()) {
      if (op.getInput().getType() != op.getType())
        return failure();
      rewriter.replaceOp(op, op.getInput());
      return success();
    }
    auto rank = cast<RankedTensorType>(op.getInput().getType()).getRank();
    auto resolved = resolveReduceAxes(*axes, rank);
    if (!resolved) {
      llvm::consumeError(resolved.takeError());
      return failure();
    }
    rewriter.modifyOpInPlace(op, [&] {
      op.setAxes(*resolved);
      op->eraseOperand(1);
    });
    return success();
  }
};

struct CumSumAxisToAttr : OpRewritePattern<CumSumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CumSumOp op, PatternRewriter &rewriter) const override {
    auto axis = constantInts(op.getAxisTensor());
    if (!axis || axis->size() != 1)
      return failure();
    auto rank = cast<RankedTensorType>(op.getInput().getType()).getRank();
    auto normalized = normalizeAxis((*axis)[0], rank);
    if (!normalized)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.setAxis(*normalized);
      op->eraseOperand(1);
    });
    return success();
  }
};

struct PadsToAttr : OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PadOp op, PatternRewriter &rewriter) const override {
    auto pads = constantInts(op.getPadsTensor());
    auto rank = cast<RankedTensorType>(op.getInput().getType()).getRank();
    if (!pads || (int64_t)pads->size() != 2 * rank)
      return failure();
    rewriter.replaceOpWithNewOp<PadOp>(op, op.getType(), op.getInput(), Value(),
                                       op.getValue(), rewriter.getDenseI64ArrayAttr(*pads),
                                       op.getModeAttr());
    return success();
  }
};

struct SliceParamsToAttr : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op, PatternRewriter &rewriter) const override {
    if (op.getStarts())
      return failure();
    auto starts = constantInts(op.getStartsTensor());
    auto ends = constantInts(op.getEndsTensor());
    auto axes = op.getAxesTensor() ? constantInts(op.getAxesTensor())
                                   : std::optional<SmallVector<int64_t>>(SmallVector<int64_t>());
    auto steps = op.getStepsTensor() ? constantInts(op.getStepsTensor())
                                     : std::optional<SmallVector<int64_t>>(SmallVector<int64_t>());
    if (!starts || !ends || !axes || !steps)
      return failure();
    auto shape = cast<RankedTensorType>(op.getInput().getType()).getShape();
    auto params = resolveSlice(shape, *starts, *ends, *axes, *steps);
    if (!params) {
      llvm::consumeError(params.takeError());
      return failure();
    }
    rewriter.replaceOpWithNewOp<SliceOp>(
        op, op.getType(), op.getInput(), Value(), Value(), Value(), Value(),
        rewriter.getDenseI64ArrayAttr(params->starts), rewriter.getDenseI64ArrayAttr(params->ends),
        rewriter.getDenseI64ArrayAttr(params->steps));
    return success();
  }
};

/// x^2, x^3, x^0.5 and x^1 with a constant float exponent become
/// multiplies, a square root or x: exact, and much cheaper than powf.
struct PowByConstant : OpRewritePattern<PowOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PowOp op, PatternRewriter &rewriter) const override {
    DenseFPElementsAttr exponent;
    if (!matchPattern(op.getRhs(), m_Constant(&exponent)) || !exponent.isSplat() ||
        op.getLhs().getType() != op.getType() || !isa<FloatType>(getElementTypeOrSelf(op.getType())))
      return failure();
    double e = exponent.getSplatValue<APFloat>().convertToDouble();
    Value x = op.getLhs();
    Type type = op.getType();
    Location loc = op.getLoc();
    if (e == 1.0) {
      rewriter.replaceOp(op, x);
    } else if (e == 2.0) {
      rewriter.replaceOpWithNewOp<MulOp>(op, type, x, x);
    } else if (e == 3.0) {
      Value square = MulOp::create(rewriter, loc, type, x, x);
      rewriter.replaceOpWithNewOp<MulOp>(op, type, square, x);
    } else if (e == 0.5) {
      rewriter.replaceOpWithNewOp<SqrtOp>(op, type, x);
    } else {
      return failure();
    }
    return success();
  }
};

} // namespace

void PowOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<PowByConstant>(ctx);
}

#define NN_REDUCE_CANONICALIZER(OP)                                            \
  void OP::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) { \
    results.add<ReduceAxesToAttr<OP>>(ctx);                                    \
  }
NN_REDUCE_CANONICALIZER(ReduceMeanOp)
NN_REDUCE_CANONICALIZER(ReduceSumOp)
NN_REDUCE_CANONICALIZER(ReduceMaxOp)
NN_REDUCE_CANONICALIZER(ReduceMinOp)
NN_REDUCE_CANONICALIZER(ReduceProdOp)
NN_REDUCE_CANONICALIZER(ReduceL2Op)
#undef NN_REDUCE_CANONICALIZER

void CumSumOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<CumSumAxisToAttr>(ctx);
}

void PadOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<PadsToAttr>(ctx);
}

void SliceOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<SliceParamsToAttr>(ctx);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<DropShapeOperand<ReshapeOp>>(ctx, 1);
}
void ExpandOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<DropShapeOperand<ExpandOp>>(ctx, 1);
}
void TileOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<DropShapeOperand<TileOp>>(ctx, 1);
}
void SplitOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<DropShapeOperand<SplitOp>>(ctx, 1);
}
void TopKOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<DropShapeOperand<TopKOp>>(ctx, 1);
}
void ConstantOfShapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                    MLIRContext *ctx) {
  results.add<DropShapeOperand<ConstantOfShapeOp>>(ctx, 0);
}
void SqueezeOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<SqueezeToReshape<SqueezeOp>>(ctx);
}
void UnsqueezeOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<SqueezeToReshape<UnsqueezeOp>>(ctx);
}
