/// nncc-split-conv-bias: the bias of the f32 convolutions that
/// nncc-form-conv-kernels left becomes an nn.add, so elementwise fusion
/// merges it with the activation and residual add that follow into one
/// epilogue kernel after the GEMM.
#include "lib/Conversion/NNToExec/Contractions.h"
#include "lib/Conversion/NNToExec/PassDetail.h"

using namespace mlir;

namespace nncc {
#define GEN_PASS_DEF_SPLITCONVBIASPASS
#include "lib/Conversion/NNToExec/Passes.h.inc"

namespace {

struct SplitConvBiasPass : impl::SplitConvBiasPassBase<SplitConvBiasPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isPrivate())
      return;
    SmallVector<nn::ConvOp> convs;
    func.walk([&](nn::ConvOp conv) {
      auto type = cast<RankedTensorType>(conv.getType());
      if (conv.getBias() && type.getElementType().isF32() && type.hasStaticShape() &&
          type.getNumElements() > 0)
        convs.push_back(conv);
    });
    for (nn::ConvOp conv : convs)
      splitConvBias(conv);
  }
};

} // namespace
} // namespace nncc
