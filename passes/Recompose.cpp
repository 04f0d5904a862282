/// Recomposes the op sequences exporters write for LayerNorm, GELU, Softmax
/// and scaled-dot-product attention into single nn ops, so kernel formation
/// sees (and fuses) the whole computation instead of a chain of tensors.
#include "passes/Passes.h"

#include "dialects/NN/NNOps.h"
#include "dialects/NN/NNUtils.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace nncc {
#define GEN_PASS_DEF_RECOMPOSEPASS
#include "passes/Passes.h.inc"
} // namespace nncc

using namespace mlir;
using namespace nncc;

namespace {

/// The value of a one-element float constant (a scalar however it is shaped).
std::optional<double> scalarConstant(Value v) {
  DenseElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) || attr.getNumElements() != 1 ||
      !isa<FloatType>(attr.getElementType()))
    return std::nullopt;
  return (*attr.getValues<APFloat>().begin()).convertToDouble();
}

bool isScalar(Value v, double expected) {
  auto c = scalarConstant(v);
  return c && std::abs(*c - expected) <= 1e-6 * std::max(1.0, std::abs(expected));
}

/// The operand of a two-operand op that is not `known`, or null when
/// `known` is not an operand.
Value otherOperand(Operation *op, Value known) {
  if (op->getOperand(0) == known)
    return op->getOperand(1);
  if (op->getOperand(1) == known)
    return op->getOperand(0);
  return {};
}

/// The single user of `v` when it has exactly one use, of type OpTy.
template <typename OpTy>
OpTy soleUser(Value v) {
  if (!v.hasOneUse())
    return {};
  return dyn_cast<OpTy>(*v.getUsers().begin());
}

bool sameType(Value a, Value b) { return a.getType() == b.getType(); }

/// Matches the common tail of both GELU forms from `inner` (erf(x/√2) or
/// tanh(...)): 0.5 * x * (1 + inner) in any association and operand order.
/// Returns the op computing the GELU, or null.
Operation *matchGeluTail(Value inner, Value x) {
  auto plusOne = soleUser<nn::AddOp>(inner);
  if (!plusOne || !isScalar(otherOperand(plusOne, inner), 1.0) || !sameType(plusOne, x))
    return nullptr;
  auto first = soleUser<nn::MulOp>(plusOne);
  if (!first)
    return nullptr;
  Value other = otherOperand(first, plusOne);
  if (other == x) { // (x * (1 + inner)) * 0.5
    auto half = soleUser<nn::MulOp>(first);
    return half && isScalar(otherOperand(half, first), 0.5) && sameType(half, x) ? half : nullptr;
  }
  if (isScalar(other, 0.5)) { // ((1 + inner) * 0.5) * x
    auto byX = soleUser<nn::MulOp>(first);
    return byX && otherOperand(byX, first) == x && sameType(byX, x) ? byX : nullptr;
  }
  auto halfX = other.getDefiningOp<nn::MulOp>(); // (0.5 * x) * (1 + inner)
  if (halfX && halfX->hasOneUse() && otherOperand(halfX, x) && isScalar(otherOperand(halfX, x), 0.5) &&
      sameType(first, x))
    return first;
  return nullptr;
}

/// x * 0.5 * (1 + erf(x / √2)) (or x * (1/√2)) → nn.gelu {approximate = "none"}.
struct RecomposeErfGelu : OpRewritePattern<nn::ErfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(nn::ErfOp erf, PatternRewriter &rewriter) const override {
    Operation *scaled = erf.getInput().getDefiningOp();
    if (!scaled || !scaled->hasOneUse() || !isa<nn::DivOp, nn::MulOp>(scaled))
      return failure();
    Value x = scaled->getOperand(0);
    double factor = isa<nn::DivOp>(scaled) ? std::sqrt(2.0) : 1 / std::sqrt(2.0);
    if (isa<nn::MulOp>(scaled) && isScalar(x, factor))
      x = scaled->getOperand(1);
    if (!isScalar(otherOperand(scaled, x), factor) || !sameType(x, erf.getInput()))
      return failure();
    Operation *root = matchGeluTail(erf, x);
    if (!root)
      return failure();
    rewriter.replaceOpWithNewOp<nn::GeluOp>(root, x.getType(), x, rewriter.getStringAttr("none"));
    return success();
  }
};

/// x³ as pow(x, 3) or a product of three x.
bool isCube(Value v, Value x) {
  Operation *op = v.getDefiningOp();
  if (isa_and_nonnull<nn::PowOp>(op))
    return op->getOperand(0) == x && isScalar(op->getOperand(1), 3.0);
  if (!isa_and_nonnull<nn::MulOp>(op))
    return false;
  Value square = otherOperand(op, x);
  auto sq = square ? square.getDefiningOp<nn::MulOp>() : nn::MulOp();
  return sq && sq.getLhs() == x && sq.getRhs() == x;
}

/// 0.5 * x * (1 + tanh(√(2/π) * (x + 0.044715 * x³))) → nn.gelu {approximate = "tanh"}.
struct RecomposeTanhGelu : OpRewritePattern<nn::TanhOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(nn::TanhOp tanh, PatternRewriter &rewriter) const override {
    auto scaled = tanh.getInput().getDefiningOp<nn::MulOp>();
    if (!scaled || !scaled->hasOneUse())
      return failure();
    Value inner = isScalar(scaled.getLhs(), std::sqrt(2 / M_PI)) ? scaled.getRhs() : scaled.getLhs();
    if (!isScalar(otherOperand(scaled, inner), std::sqrt(2 / M_PI)))
      return failure();
    auto sum = inner.getDefiningOp<nn::AddOp>();
    if (!sum || !sum->hasOneUse())
      return failure();
    for (auto [x, term] : {std::pair(sum.getLhs(), sum.getRhs()), std::pair(sum.getRhs(), sum.getLhs())}) {
      auto cubic = term.getDefiningOp<nn::MulOp>();
      if (!cubic || !sameType(x, tanh.getInput()))
        continue;
      Value cube = isScalar(cubic.getLhs(), 0.044715) ? cubic.getRhs() : cubic.getLhs();
      if (!isScalar(otherOperand(cubic, cube), 0.044715) || !isCube(cube, x))
        continue;
      Operation *root = matchGeluTail(tanh, x);
      if (!root)
        return failure();
      rewriter.replaceOpWithNewOp<nn::GeluOp>(root, x.getType(), x, rewriter.getStringAttr("tanh"));
      return success();
    }
    return failure();
  }
};

/// The single axis a keepdims reduction reduces, or nullopt.
template <typename OpTy>
std::optional<int64_t> singleKeptAxis(OpTy reduce) {
  if (!reduce || !reduce.getAxes() || reduce.getAxes()->size() != 1 || !reduce.getKeepdims())
    return std::nullopt;
  return reduce.getAxes()->front();
}

/// e / reduce_sum(e, [a]) with e = exp(x) or exp(x - reduce_max(x, [a])) →
/// nn.softmax(x, a).
struct RecomposeSoftmax : OpRewritePattern<nn::DivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(nn::DivOp div, PatternRewriter &rewriter) const override {
    auto exp = div.getLhs().getDefiningOp<nn::ExpOp>();
    auto sum = div.getRhs().getDefiningOp<nn::ReduceSumOp>();
    if (!exp || !sum || sum.getInput() != exp.getResult() || !sum->hasOneUse() ||
        !sameType(div, exp) || llvm::range_size(exp->getUsers()) != 2)
      return failure();
    auto axis = singleKeptAxis(sum);
    if (!axis)
      return failure();
    Value x = exp.getInput();
    if (auto shifted = x.getDefiningOp<nn::SubOp>(); shifted && shifted->hasOneUse()) {
      auto max = shifted.getRhs().getDefiningOp<nn::ReduceMaxOp>();
      if (max && max.getInput() == shifted.getLhs() && max->hasOneUse() && singleKeptAxis(max) == axis &&
          sameType(shifted.getLhs(), x))
        x = shifted.getLhs();
    }
    rewriter.replaceOpWithNewOp<nn::SoftmaxOp>(div, div.getType(), x, rewriter.getI64IntegerAttr(*axis));
    return success();
  }
};

/// The first axis when `axes` are the trailing axes of a rank-`rank` tensor.
std::optional<int64_t> trailingAxesStart(std::optional<ArrayRef<int64_t>> axes, int64_t rank) {
  if (!axes || axes->empty() || axes->back() != rank - 1)
    return std::nullopt;
  for (size_t i = 1; i < axes->size(); ++i)
    if ((*axes)[i] != (*axes)[i - 1] + 1)
      return std::nullopt;
  return axes->front();
}

/// (x - mean(x)) / sqrt(mean((x - mean(x))²) + eps) over the trailing axes →
/// nn.layer_norm(x, ones) (the scale and shift join by the patterns below).
struct RecomposeLayerNorm : OpRewritePattern<nn::DivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(nn::DivOp div, PatternRewriter &rewriter) const override {
    auto centered = div.getLhs().getDefiningOp<nn::SubOp>();
    auto sqrt = div.getRhs().getDefiningOp<nn::SqrtOp>();
    if (!centered || !sqrt || !sqrt->hasOneUse() || !sameType(div, centered))
      return failure();
    Value x = centered.getLhs();
    auto mean = centered.getRhs().getDefiningOp<nn::ReduceMeanOp>();
    auto type = cast<RankedTensorType>(x.getType());
    if (!mean || mean.getInput() != x || !mean->hasOneUse() || !mean.getKeepdims() || !sameType(x, div) ||
        !type.getElementType().isF32())
      return failure();
    auto axis = trailingAxesStart(mean.getAxes(), type.getRank());
    auto plusEps = sqrt.getInput().getDefiningOp<nn::AddOp>();
    if (!axis || !plusEps || !plusEps->hasOneUse())
      return failure();
    auto var = plusEps.getLhs().getDefiningOp<nn::ReduceMeanOp>();
    Value epsValue = plusEps.getRhs();
    if (!var) {
      var = plusEps.getRhs().getDefiningOp<nn::ReduceMeanOp>();
      epsValue = plusEps.getLhs();
    }
    auto eps = scalarConstant(epsValue);
    if (!var || !eps || !var->hasOneUse() || !var.getKeepdims() || var.getAxes() != mean.getAxes())
      return failure();
    Operation *square = var.getInput().getDefiningOp();
    bool isSquare = (isa_and_nonnull<nn::MulOp>(square) && square->getOperand(0) == centered.getResult() &&
                     square->getOperand(1) == centered.getResult()) ||
                    (isa_and_nonnull<nn::PowOp>(square) && square->getOperand(0) == centered.getResult() &&
                     isScalar(square->getOperand(1), 2.0));
    // The centered value feeds only the square and the division.
    if (!isSquare || !square->hasOneUse() ||
        llvm::any_of(centered->getUsers(), [&](Operation *u) { return u != square && u != div; }))
      return failure();
    SmallVector<int64_t> normalized(type.getShape().drop_front(*axis));
    auto scaleType = RankedTensorType::get(normalized, type.getElementType());
    Value ones = nn::ConstantOp::create(rewriter, div.getLoc(),
                                        DenseElementsAttr::get(scaleType, rewriter.getF32FloatAttr(1)));
    rewriter.replaceOpWithNewOp<nn::LayerNormOp>(div, div.getType(), x, ones, Value(),
                                                 rewriter.getI64IntegerAttr(*axis),
                                                 rewriter.getF64FloatAttr(*eps));
    return success();
  }
};

/// True when `v` is a tensor of the normalized shape of `ln` (a per-feature
/// scale or shift, not broadcast over the outer dims).
bool isPerFeature(nn::LayerNormOp ln, Value v) {
  auto type = cast<RankedTensorType>(ln.getType());
  auto vType = cast<RankedTensorType>(v.getType());
  ArrayRef<int64_t> normalized = type.getShape().drop_front(ln.getAxis());
  ArrayRef<int64_t> shape = vType.getShape();
  while (!shape.empty() && shape.size() > normalized.size() && shape.front() == 1)
    shape = shape.drop_front();
  return shape == normalized && vType.getElementType() == type.getElementType();
}

/// layer_norm(x, ones) * gamma → layer_norm(x, gamma); + beta → bias.
struct FoldAffineIntoLayerNorm : OpRewritePattern<nn::LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(nn::LayerNormOp ln, PatternRewriter &rewriter) const override {
    if (!ln->hasOneUse())
      return failure();
    Operation *user = *ln->getUsers().begin();
    if (!isa<nn::MulOp, nn::AddOp>(user) || !sameType(user->getResult(0), ln))
      return failure();
    Value operand = otherOperand(user, ln);
    if (!isPerFeature(ln, operand))
      return failure();
    auto normalizedType = RankedTensorType::get(
        cast<RankedTensorType>(ln.getType()).getShape().drop_front(ln.getAxis()), ln.getType().getElementType());
    Value param = operand.getType() == normalizedType
                      ? operand
                      : nn::ReshapeOp::create(rewriter, ln.getLoc(), normalizedType, operand, Value()).getResult();
    Value scale = ln.getScale(), bias = ln.getBias();
    if (isa<nn::MulOp>(user)) {
      // Only a unit scale without a shift can absorb a multiplier.
      DenseElementsAttr s;
      if (bias || !matchPattern(scale, m_Constant(&s)) || !s.isSplat() ||
          s.getSplatValue<APFloat>().convertToDouble() != 1.0)
        return failure();
      scale = param;
    } else {
      if (bias)
        return failure();
      bias = param;
    }
    rewriter.replaceOpWithNewOp<nn::LayerNormOp>(user, ln.getType(), ln.getInput(), scale, bias,
                                                 ln.getAxisAttr(), ln.getEpsilonAttr());
    return success();
  }
};

/// matmul(softmax(matmul(q, kᵀ) / c (or * c) [+ mask], last axis), v) →
/// nn.attention(q, k, v, mask, scale); k is kᵀ transposed back (a transpose
/// that folds into the one that usually produced kᵀ).
struct RecomposeAttention : OpRewritePattern<nn::MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(nn::MatMulOp out, PatternRewriter &rewriter) const override {
    auto softmax = out.getLhs().getDefiningOp<nn::SoftmaxOp>();
    if (!softmax || !softmax->hasOneUse())
      return failure();
    auto scoresType = cast<RankedTensorType>(softmax.getType());
    int64_t rank = scoresType.getRank();
    if (rank < 3 || static_cast<int64_t>(softmax.getAxis()) != rank - 1 || !scoresType.hasStaticShape() ||
        !scoresType.getElementType().isF32())
      return failure();
    Value s = softmax.getInput(), mask;
    if (auto add = s.getDefiningOp<nn::AddOp>(); add && add->hasOneUse()) {
      bool lhsScores = isa_and_nonnull<nn::MatMulOp, nn::DivOp, nn::MulOp>(add.getLhs().getDefiningOp());
      s = lhsScores ? add.getLhs() : add.getRhs();
      mask = lhsScores ? add.getRhs() : add.getLhs();
      if (!sameType(s, add))
        return failure();
    }
    // where(causal, scores, -inf) is the additive mask 0 / -inf (exact:
    // both give exp = 0 off the mask), built once the match succeeds.
    DenseElementsAttr selectMask;
    if (auto where = s.getDefiningOp<nn::WhereOp>(); where && !mask && where->hasOneUse()) {
      DenseElementsAttr condition;
      auto fill = scalarConstant(where.getRhs());
      if (matchPattern(where.getCondition(), m_Constant(&condition)) && fill && std::isinf(*fill) && *fill < 0 &&
          sameType(where.getLhs(), where)) {
        SmallVector<float> additive;
        for (bool keep : condition.getValues<bool>())
          additive.push_back(keep ? 0.0f : -std::numeric_limits<float>::infinity());
        auto type = RankedTensorType::get(condition.getType().getShape(), rewriter.getF32Type());
        selectMask = DenseElementsAttr::get(type, ArrayRef<float>(additive));
        s = where.getLhs();
      }
    }
    double scale = 1.0;
    if (Operation *scaling = s.getDefiningOp(); isa_and_nonnull<nn::DivOp, nn::MulOp>(scaling) && scaling->hasOneUse()) {
      Value product = scaling->getOperand(0);
      if (isa<nn::MulOp>(scaling) && scalarConstant(product))
        product = scaling->getOperand(1);
      auto c = scalarConstant(otherOperand(scaling, product));
      if (!c || *c == 0 || !sameType(product, s))
        return failure();
      scale = isa<nn::DivOp>(scaling) ? 1 / *c : *c;
      s = product;
    }
    auto scores = s.getDefiningOp<nn::MatMulOp>();
    if (!scores || !scores->hasOneUse())
      return failure();
    Value q = scores.getLhs(), kT = scores.getRhs(), v = out.getRhs();
    auto qType = cast<RankedTensorType>(q.getType()), kTType = cast<RankedTensorType>(kT.getType()),
         vType = cast<RankedTensorType>(v.getType());
    auto batch = scoresType.getShape().drop_back(2);
    if (qType.getRank() != rank || kTType.getRank() != rank || vType.getRank() != rank ||
        qType.getShape().drop_back(2) != batch || kTType.getShape().drop_back(2) != batch ||
        vType.getShape().drop_back(2) != batch || !vType.getElementType().isF32())
      return failure();
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[rank - 1], perm[rank - 2]);
    SmallVector<int64_t> kShape(kTType.getShape());
    std::swap(kShape[rank - 1], kShape[rank - 2]);
    Value k = nn::TransposeOp::create(rewriter, out.getLoc(), RankedTensorType::get(kShape, kTType.getElementType()),
                                      kT, rewriter.getDenseI64ArrayAttr(perm));
    Location loc = rewriter.getFusedLoc({scores.getLoc(), softmax.getLoc(), out.getLoc()});
    if (selectMask)
      mask = nn::ConstantOp::create(rewriter, loc, selectMask);
    auto attention = nn::AttentionOp::create(rewriter, loc, out.getType(), q, k, v, mask,
                                             rewriter.getF64FloatAttr(scale));
    rewriter.replaceOp(out, attention);
    return success();
  }
};

/// The Q/K/V projections of one attention, matmul(x, W_i) + b_i with the
/// same x and constant W_i ([K, N_i]) and b_i ([N_i]) (reaching the attention
/// through head-split reshapes and transposes) → matmul(x, [W_1 .. W_n]) +
/// [b_1 .. b_n] and one column slice each: one GEMM reads x once, and the
/// attention kernel reads its slices in place. Anchored on the attention, so
/// projections feeding ops that would have to copy a slice stay apart.
struct MergeSiblingProjections : OpRewritePattern<nn::AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  struct Projection {
    nn::MatMulOp matmul;
    nn::AddOp add;
    SmallVector<float> weight, bias;
  };

  static std::optional<Projection> projection(nn::MatMulOp mm) {
    auto w = dyn_cast<RankedTensorType>(mm.getRhs().getType());
    auto out = cast<RankedTensorType>(mm.getType());
    if (!w || w.getRank() != 2 || !w.getElementType().isF32() || !out.hasStaticShape() || !mm->hasOneUse())
      return std::nullopt;
    auto add = dyn_cast<nn::AddOp>(*mm->getUsers().begin());
    if (!add || add.getType() != out || add.getLhs() != mm.getResult())
      return std::nullopt;
    auto weight = nn::constantFloats(mm.getRhs()), bias = nn::constantFloats(add.getRhs());
    if (!weight || !bias || cast<RankedTensorType>(add.getRhs().getType()).getRank() != 1 ||
        (int64_t)bias->size() != w.getShape()[1])
      return std::nullopt;
    return Projection{mm, add, std::move(*weight), std::move(*bias)};
  }

  /// The projection `v` is a head split of, if any.
  static std::optional<Projection> projectionOf(Value v) {
    Operation *def = v.getDefiningOp();
    while (isa_and_nonnull<nn::TransposeOp, nn::ReshapeOp>(def) && def->hasOneUse() && def->getNumOperands() == 1)
      def = def->getOperand(0).getDefiningOp();
    auto add = dyn_cast_or_null<nn::AddOp>(def);
    auto mm = add ? add.getLhs().getDefiningOp<nn::MatMulOp>() : nn::MatMulOp();
    if (!mm)
      return std::nullopt;
    return projection(mm);
  }

  LogicalResult matchAndRewrite(nn::AttentionOp attention, PatternRewriter &rewriter) const override {
    SmallVector<Projection> group;
    for (Value operand : {attention.getQ(), attention.getK(), attention.getV()}) {
      auto p = projectionOf(operand);
      if (!p || llvm::any_of(group, [&](Projection &g) { return g.matmul == p->matmul; }))
        continue;
      if (!group.empty()) {
        nn::MatMulOp head = group.front().matmul;
        if (p->matmul.getLhs() != head.getLhs() || p->matmul->getBlock() != head->getBlock() ||
            p->matmul.getRhs().getType().getShape()[0] != head.getRhs().getType().getShape()[0] ||
            p->matmul.getType().getShape().drop_back() != head.getType().getShape().drop_back())
          continue;
      }
      group.push_back(std::move(*p));
    }
    if (group.size() < 2)
      return failure();
    // Columns in program order; built before the first, so the merged GEMM
    // dominates every use.
    llvm::sort(group, [](Projection &a, Projection &b) { return a.matmul->isBeforeInBlock(b.matmul); });
    nn::MatMulOp first = group.front().matmul;
    int64_t k = first.getRhs().getType().getShape()[0], total = 0;
    for (const Projection &p : group)
      total += p.bias.size();
    SmallVector<float> weight(k * total), bias;
    int64_t column = 0;
    for (const Projection &p : group) {
      int64_t n = p.bias.size();
      for (int64_t r = 0; r < k; ++r)
        std::copy_n(p.weight.begin() + r * n, n, weight.begin() + r * total + column);
      bias.append(p.bias.begin(), p.bias.end());
      column += n;
    }
    Location loc = first.getLoc();
    auto f32 = rewriter.getF32Type();
    auto outType = cast<RankedTensorType>(first.getType());
    SmallVector<int64_t> shape(outType.getShape());
    shape.back() = total;
    auto mergedType = RankedTensorType::get(shape, f32);
    rewriter.setInsertionPoint(first);
    Value w = nn::ConstantOp::create(rewriter, loc, DenseElementsAttr::get(RankedTensorType::get({k, total}, f32), ArrayRef<float>(weight)));
    Value b = nn::ConstantOp::create(rewriter, loc, DenseElementsAttr::get(RankedTensorType::get({total}, f32), ArrayRef<float>(bias)));
    SmallVector<Location> locs;
    for (Projection &p : group)
      locs.append({p.matmul.getLoc(), p.add.getLoc()});
    Location fused = rewriter.getFusedLoc(locs);
    Value product = nn::MatMulOp::create(rewriter, fused, mergedType, first.getLhs(), w);
    Value sum = nn::AddOp::create(rewriter, fused, mergedType, product, b);
    column = 0;
    int64_t rank = shape.size();
    for (Projection &p : group) {
      SmallVector<int64_t> starts(rank, 0), ends(shape), steps(rank, 1);
      starts.back() = column;
      column += p.bias.size();
      ends.back() = column;
      Value slice = nn::SliceOp::create(rewriter, p.add.getLoc(), p.add.getType(), sum, Value(), Value(), Value(),
                                        Value(), rewriter.getDenseI64ArrayAttr(starts),
                                        rewriter.getDenseI64ArrayAttr(ends), rewriter.getDenseI64ArrayAttr(steps));
      rewriter.replaceOp(p.add, slice);
      rewriter.eraseOp(p.matmul);
    }
    return success();
  }
};

struct RecomposePass : nncc::impl::RecomposePassBase<RecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRecomposePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void nncc::populateRecomposePatterns(RewritePatternSet &patterns) {
  patterns.add<RecomposeErfGelu, RecomposeTanhGelu, RecomposeSoftmax, RecomposeLayerNorm,
               FoldAffineIntoLayerNorm, RecomposeAttention, MergeSiblingProjections>(patterns.getContext());
}
