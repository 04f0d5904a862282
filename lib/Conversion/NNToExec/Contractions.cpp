#include "lib/Conversion/NNToExec/Contractions.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace nncc {
namespace {

/// Output positions per image up to which a convolution's weights-as-A GEMM
/// would have a narrow N that the BLAS's tiles fill poorly (measured:
/// docs/performance.md, "Measurements behind kernel choices").
constexpr int64_t kSmallImagePositions = 64;

/// True when a GEMM library call takes these operand and result types: A and
/// B both f32, f16 or bf16, the result f32 or their type (module ABI
/// dtype_a/b/c; products accumulate in f32, a low-precision result is
/// rounded once).
bool isGemmElementTypes(Value a, Value b, Value result) {
  Type ea = getElementTypeOrSelf(a.getType()), eb = getElementTypeOrSelf(b.getType()),
       er = getElementTypeOrSelf(result.getType());
  return (ea.isF32() || ea.isF16() || ea.isBF16()) && ea == eb && (er == ea || er.isF32());
}

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

} // namespace

bool isF32(Value v) { return cast<RankedTensorType>(v.getType()).getElementType().isF32(); }

bool isLibraryMatMul(nn::MatMulOp mm) {
  auto lhs = cast<RankedTensorType>(mm.getLhs().getType());
  auto rhs = cast<RankedTensorType>(mm.getRhs().getType());
  auto out = cast<RankedTensorType>(mm.getType());
  return isGemmElementTypes(mm.getLhs(), mm.getRhs(), mm.getResult()) && lhs.getRank() >= 2 && rhs.getRank() >= 2 &&
         out.hasStaticShape() && out.getNumElements() > 0 && lhs.getShape().back() != 0 &&
         gemmBatchCompatible(lhs, out) && gemmBatchCompatible(rhs, out);
}

bool isLibraryContraction(Operation *op) {
  if (auto mm = dyn_cast<nn::MatMulOp>(op))
    return isLibraryMatMul(mm);
  auto nonEmpty = [](Value v) { return cast<RankedTensorType>(v.getType()).getNumElements() > 0; };
  if (auto g = dyn_cast<nn::GemmOp>(op)) {
    auto a = cast<RankedTensorType>(g.getA().getType());
    return isGemmElementTypes(g.getA(), g.getB(), g.getResult()) && nonEmpty(g.getResult()) &&
           a.getShape()[g.getTransA() ? 0 : 1] != 0 &&
           (!g.getC() || getElementTypeOrSelf(g.getC().getType()) == getElementTypeOrSelf(g.getType()));
  }
  if (auto conv = dyn_cast<nn::ConvOp>(op))
    return conv.getGroup() == 1 && isGemmElementTypes(conv.getInput(), conv.getWeight(), conv.getResult()) && nonEmpty(conv.getResult()) &&
           nonEmpty(conv.getWeight());
  // The bias, when there is one, has the result's type (col2im adds it).
  // Grouped (and depthwise) ones are one GEMM batched over the groups, which
  // a GEMM step's single batch stride expresses for one image only.
  if (auto conv = dyn_cast<nn::ConvTransposeOp>(op))
    return (conv.getGroup() == 1 || cast<RankedTensorType>(conv.getInput().getType()).getShape()[0] == 1) &&
           isGemmElementTypes(conv.getInput(), conv.getWeight(), conv.getResult()) &&
           (!conv.getBias() ||
            getElementTypeOrSelf(conv.getBias().getType()) == getElementTypeOrSelf(conv.getType())) &&
           nonEmpty(conv.getResult()) && nonEmpty(conv.getInput()) && nonEmpty(conv.getWeight());
  return false;
}

bool readsInputAsColumns(nn::ConvOp conv) {
  auto w = cast<RankedTensorType>(conv.getWeight().getType());
  return llvm::all_of(w.getShape().drop_front(2), [](int64_t k) { return k == 1; }) &&
         llvm::all_of(conv.getStrides(), [](int64_t s) { return s == 1; }) &&
         llvm::all_of(conv.getPads(), [](int64_t p) { return p == 0; });
}

/// Small images (P <= 64 output positions: one GEMM per image would have a
/// narrow N that the BLAS's tiles fill poorly) with a materialized im2col run
/// as one GEMM over the columns of the whole batch, its [M, n, P] result
/// transposed back to [n, M, P]. Larger images gain nothing from it and pay
/// for the transpose. Measured: docs/performance.md.
bool gemmOverWholeBatch(nn::ConvOp conv) {
  auto out = cast<RankedTensorType>(conv.getType());
  int64_t n = out.getShape()[0], p = out.getNumElements() / std::max<int64_t>(n * out.getShape()[1], 1);
  return !readsInputAsColumns(conv) && n > 1 && p <= kSmallImagePositions;
}

bool weightsAsPackedB(nn::ConvOp conv) {
  if (!isF32(conv.getInput()) || !isF32(conv.getWeight()) || !isF32(conv.getResult()) ||
      !matchPattern(conv.getWeight(), m_Constant()))
    return false;
  auto out = cast<RankedTensorType>(conv.getType());
  int64_t n = out.getShape()[0], m = out.getShape()[1];
  int64_t p = out.getNumElements() / std::max<int64_t>(n * m, 1);
  int64_t k = cast<RankedTensorType>(conv.getWeight().getType()).getNumElements() / std::max<int64_t>(m, 1);
  // Both forms pack the K x columns activation operand on every call. What
  // differs is what else each moves:
  // - one GEMM over the whole batch's columns (small images): the weights-
  //   as-A form repacks the M x K weights and transposes its [M, n, P]
  //   product too; the transposed form only transposes. Always transposed.
  // - one GEMM per image (n > 1): the weights-as-A form repacks weights that
  //   the previous image's call left in the cache, the transposed form adds
  //   a pass over the whole output. Weights as A.
  // - one image: M x K weights repacked from memory against a P x M
  //   transpose, where the repacking weighs on the GEMM only while its N = P
  //   is narrow (a small image; with P = 100 OpenBLAS's GEMM with the
  //   weights as A measured faster than the own kernel's transposed one):
  //   transposed for P <= kSmallImagePositions and P < K.
  // One-row products (n*P = 1) run as sgemv in either form: left as they are.
  if (n * p < 2)
    return false;
  if (gemmOverWholeBatch(conv))
    return true;
  return n == 1 && p <= kSmallImagePositions && p < k;
}

bool isColumnVector(Value v, RankedTensorType result) {
  auto type = cast<RankedTensorType>(v.getType());
  ArrayRef<int64_t> shape = type.getShape();
  return type.hasStaticShape() && type.getElementType() == result.getElementType() && !shape.empty() &&
         shape.back() == result.getShape().back() && type.getNumElements() == shape.back() &&
         shape.size() <= (size_t)result.getRank();
}

nn::AddOp splitConvBias(nn::ConvOp conv) {
  OpBuilder b(conv);
  auto type = cast<RankedTensorType>(conv.getType());
  auto bare = nn::ConvOp::create(b, conv.getLoc(), type, conv.getInput(), conv.getWeight(), Value(),
                                 conv.getStridesAttr(), conv.getPadsAttr(), conv.getDilationsAttr(),
                                 conv.getGroupAttr());
  SmallVector<int64_t> biasShape(type.getRank() - 1, 1);
  biasShape[0] = type.getShape()[1];
  Value bias = nn::ReshapeOp::create(b, conv.getLoc(),
                                     RankedTensorType::get(biasShape, type.getElementType()),
                                     conv.getBias(), Value());
  auto add = nn::AddOp::create(b, conv.getLoc(), type, bare.getResult(), bias);
  conv.getResult().replaceAllUsesWith(add.getResult());
  conv.erase();
  return add;
}

} // namespace nncc
