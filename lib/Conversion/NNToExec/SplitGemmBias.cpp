/// nncc-split-gemm-bias: without library epilogues, a Gemm's column-vector
/// C (beta 1) becomes an nn.add after a C-less Gemm, which joins the
/// consumers' fused kernel instead of a broadcast kernel and a copy step
/// feeding the GEMM.
#include "lib/Conversion/NNToExec/Contractions.h"
#include "lib/Conversion/NNToExec/PassDetail.h"

using namespace mlir;

namespace nncc {
#define GEN_PASS_DEF_SPLITGEMMBIASPASS
#include "lib/Conversion/NNToExec/Passes.h.inc"

namespace {

struct SplitGemmBiasPass : impl::SplitGemmBiasPassBase<SplitGemmBiasPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isPrivate())
      return;
    SmallVector<nn::GemmOp> gemms;
    func.walk([&](nn::GemmOp g) {
      auto out = cast<RankedTensorType>(g.getType());
      if (g.getC() && isF32(g.getA()) && isF32(g.getB()) && g.getBeta().convertToDouble() == 1.0 &&
          out.hasStaticShape() && out.getNumElements() > 0 && isColumnVector(g.getC(), out))
        gemms.push_back(g);
    });
    for (nn::GemmOp g : gemms) {
      OpBuilder b(g);
      auto bare = nn::GemmOp::create(b, g.getLoc(), g.getType(), g.getA(), g.getB(), Value(), g.getAlphaAttr(),
                                     b.getF64FloatAttr(0.0), g.getTransAAttr(), g.getTransBAttr());
      Value sum = nn::AddOp::create(b, g.getLoc(), g.getType(), bare.getResult(), g.getC());
      g.getResult().replaceAllUsesWith(sum);
      g.erase();
    }
  }
};

} // namespace
} // namespace nncc
