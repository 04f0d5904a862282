/// Vectorizable f32 math approximations and bf16 conversions as integer ops.
#include "lib/Target/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nncc {
#define GEN_PASS_DEF_EXPANDHOSTMATHPASS
#include "lib/Target/Passes.h.inc"
} // namespace nncc

using namespace mlir;

namespace nncc {
namespace {

/// A select of bf16 values picks bits: done on i16, it stays a bit move.
/// On bfloat, LLVM's x86 backend promotes vectorized selects to f32 and
/// truncates back with __truncsfbf2 calls (a select in the backward of Relu
/// or Max computed in bf16).
struct SelectBFloat16AsInteger : OpRewritePattern<arith::SelectOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::SelectOp op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isBF16())
      return failure();
    Type bits = rewriter.getI16Type();
    if (auto vector = dyn_cast<VectorType>(type))
      bits = vector.clone(bits);
    else if (!type.isBF16())
      return failure();
    Location loc = op.getLoc();
    Value a = arith::BitcastOp::create(rewriter, loc, bits, op.getTrueValue());
    Value b = arith::BitcastOp::create(rewriter, loc, bits, op.getFalseValue());
    Value picked = arith::SelectOp::create(rewriter, loc, op.getCondition(), a, b);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, type, picked);
    return success();
  }
};

struct ExpandHostMathPass : impl::ExpandHostMathPassBase<ExpandHostMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return llvm::is_contained({"math.tanh", "math.erf", "math.exp", "math.expm1", "math.log",
                                 "math.log1p", "math.log2"},
                                name);
    });
    arith::populateExpandBFloat16Patterns(patterns);
    patterns.add<SelectBFloat16AsInteger>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation().emitError("math approximation did not converge");
      signalPassFailure();
    }
  }
};

} // namespace
} // namespace nncc
