/// nncc-decompose-attention: short f32 attentions of the CPU plan as the
/// batched GEMMs and the softmax they were recomposed from (Passes.td says
/// why and when).
#include "lib/Conversion/NNToExec/PassDetail.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace nncc {
#define GEN_PASS_DEF_DECOMPOSEATTENTIONPASS
#include "lib/Conversion/NNToExec/Passes.h.inc"

namespace {

/// The score matrix of one (batch..., head) is no larger than its query and
/// output rows: Sk <= D + Dv.
bool scoresAreShort(nn::AttentionOp op) {
  auto q = cast<RankedTensorType>(op.getQ().getType()), k = cast<RankedTensorType>(op.getK().getType()),
       v = cast<RankedTensorType>(op.getV().getType());
  auto out = cast<RankedTensorType>(op.getType());
  if (!q.hasStaticShape() || !k.hasStaticShape() || !v.hasStaticShape() || !out.hasStaticShape() ||
      !out.getElementType().isF32() || q.getRank() < 2)
    return false;
  int64_t keys = k.getShape()[k.getRank() - 2];
  return keys <= q.getShape().back() + v.getShape().back();
}

void decompose(nn::AttentionOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto k = cast<RankedTensorType>(op.getK().getType());
  auto q = cast<RankedTensorType>(op.getQ().getType());
  int64_t rank = k.getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  SmallVector<int64_t> kTShape(k.getShape());
  std::swap(kTShape[rank - 1], kTShape[rank - 2]);
  Type f32 = b.getF32Type();
  Value kT = nn::TransposeOp::create(b, loc, RankedTensorType::get(kTShape, f32), op.getK(),
                                     b.getDenseI64ArrayAttr(perm));
  SmallVector<int64_t> scoresShape(q.getShape().drop_back());
  scoresShape.push_back(k.getShape()[rank - 2]);
  auto scoresType = RankedTensorType::get(scoresShape, f32);
  Value scores = nn::MatMulOp::create(b, loc, scoresType, op.getQ(), kT);
  if (double scale = op.getScale().convertToDouble(); scale != 1.0) {
    auto scalar = RankedTensorType::get({}, f32);
    Value c = nn::ConstantOp::create(
        b, loc, DenseElementsAttr::get(scalar, b.getF32FloatAttr(static_cast<float>(scale))));
    scores = nn::MulOp::create(b, loc, scoresType, scores, c);
  }
  if (Value mask = op.getMask())
    scores = nn::AddOp::create(b, loc, scoresType, scores, mask);
  Value probs = nn::SoftmaxOp::create(b, loc, scoresType, scores, b.getI64IntegerAttr(rank - 1));
  Value out = nn::MatMulOp::create(b, loc, op.getType(), probs, op.getV());
  op.replaceAllUsesWith(out);
  op.erase();
}

struct DecomposeAttentionPass : impl::DecomposeAttentionPassBase<DecomposeAttentionPass> {
  void runOnOperation() override {
    SmallVector<nn::AttentionOp> short_;
    getOperation().walk([&](nn::AttentionOp op) {
      if (scoresAreShort(op))
        short_.push_back(op);
    });
    for (nn::AttentionOp op : short_)
      decompose(op);
  }
};

} // namespace
} // namespace nncc
