/// Vectorizable f32 math approximations and bf16 conversions as integer ops.
#include "lib/Target/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nncc {
#define GEN_PASS_DEF_EXPANDHOSTMATHPASS
#include "lib/Target/Passes.h.inc"
} // namespace nncc

using namespace mlir;

namespace nncc {
namespace {

struct ExpandHostMathPass : impl::ExpandHostMathPassBase<ExpandHostMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return llvm::is_contained({"math.tanh", "math.erf", "math.exp", "math.expm1", "math.log",
                                 "math.log1p", "math.log2"},
                                name);
    });
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation().emitError("math approximation did not converge");
      signalPassFailure();
    }
  }
};

} // namespace
} // namespace nncc
