/// BatchNormalization folded into the preceding convolution at compile time.
#include "passes/Passes.h"

#include "dialects/NN/NNOps.h"
#include "dialects/NN/NNUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace nncc {
#define GEN_PASS_DEF_FOLDBATCHNORMPASS
#include "passes/Passes.h.inc"
} // namespace nncc

using namespace mlir;
using namespace nncc;

namespace {

struct FoldBatchNormIntoConv : OpRewritePattern<nn::BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(nn::BatchNormOp bn, PatternRewriter &rewriter) const override {
    auto conv = bn.getInput().getDefiningOp<nn::ConvOp>();
    if (!conv || !conv->hasOneUse())
      return failure();
    auto weight = nn::constantFloats(conv.getWeight());
    auto scale = nn::constantFloats(bn.getScale()), shift = nn::constantFloats(bn.getBias()),
         mean = nn::constantFloats(bn.getMean()), var = nn::constantFloats(bn.getVariance());
    if (!weight || !scale || !shift || !mean || !var)
      return failure();
    std::optional<SmallVector<float>> bias;
    if (conv.getBias() && !(bias = nn::constantFloats(conv.getBias())))
      return failure();
    auto weightType = cast<RankedTensorType>(conv.getWeight().getType());
    int64_t m = weightType.getShape()[0];
    if ((int64_t)scale->size() != m)
      return failure();
    int64_t perChannel = weightType.getNumElements() / std::max<int64_t>(m, 1);
    double eps = bn.getEpsilon().convertToDouble();
    std::vector<float> newBias(m);
    for (int64_t c = 0; c < m; ++c) {
      double s = (*scale)[c] / std::sqrt((double)(*var)[c] + eps);
      for (int64_t i = 0; i < perChannel; ++i)
        (*weight)[c * perChannel + i] = (float)((*weight)[c * perChannel + i] * s);
      double b = bias ? (*bias)[c] : 0.0;
      newBias[c] = (float)((b - (*mean)[c]) * s + (*shift)[c]);
    }
    Location loc = FusedLoc::get(getContext(), {conv.getLoc(), bn.getLoc()});
    auto biasType = RankedTensorType::get({m}, rewriter.getF32Type());
    Value w = nn::ConstantOp::create(rewriter, loc,
                                     DenseElementsAttr::get(weightType, ArrayRef<float>(*weight)));
    Value b = nn::ConstantOp::create(rewriter, loc,
                                     DenseElementsAttr::get(biasType, ArrayRef<float>(newBias)));
    auto folded = nn::ConvOp::create(rewriter, loc, conv.getType(), conv.getInput(), w, b,
                                     conv.getStridesAttr(), conv.getPadsAttr(),
                                     conv.getDilationsAttr(), conv.getGroupAttr());
    rewriter.replaceOp(bn, folded.getResult());
    rewriter.eraseOp(conv);
    return success();
  }
};

struct FoldBatchNormPass : nncc::impl::FoldBatchNormPassBase<FoldBatchNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFoldBatchNormPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void nncc::populateFoldBatchNormPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldBatchNormIntoConv>(patterns.getContext());
}
