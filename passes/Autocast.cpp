/// nncc-autocast: low-precision compute types on the nn dialect.
///
/// Every nn op with f32 operands gets a compute type by one of three rules
/// (docs/precision.md has the table):
///   - GEMMs (contraction ops: MatMul, Gemm, Conv, ConvTranspose, Einsum,
///     Attention) compute in the low type; the plan accumulates in f32.
///   - Ops whose accuracy needs f32 range or precision (reductions,
///     softmax, normalizations, exp, log, pow, softplus, cumsum) compute
///     in f32.
///   - Everything else follows its inputs: low when every non-constant
///     float operand is already low, else f32 (constants do not vote; they
///     take the op's type).
/// Casts are created once per (value, type) next to the value's producer,
/// constants are converted at compile time (round to nearest even), and an
/// op whose constant would overflow the low type stays in f32. Graph
/// inputs and outputs keep their types.
#include "passes/Autocast.h"
#include "passes/Passes.h"

#include "dialects/NN/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringExtras.h"

namespace nncc {
#define GEN_PASS_DEF_AUTOCASTPASS
#include "passes/Passes.h.inc"
} // namespace nncc

using namespace mlir;
using namespace nncc;

std::optional<Precision> nncc::parsePrecision(llvm::StringRef name) {
  for (Precision p : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16,
                      Precision::Mixed})
    if (name == precisionName(p))
      return p;
  return std::nullopt;
}

llvm::StringRef nncc::precisionName(Precision precision) {
  switch (precision) {
  case Precision::FP32: return "fp32";
  case Precision::TF32: return "tf32";
  case Precision::BF16: return "bf16";
  case Precision::FP16: return "fp16";
  case Precision::Mixed: return "mixed";
  }
  return "";
}

namespace {

enum class Rule { LowPrecisionGemm, KeepF32, FollowInputs };

Rule ruleOf(Operation *op) {
  if (isa<nn::ExpOp, nn::LogOp, nn::PowOp, nn::SoftplusOp, nn::CumSumOp, nn::BatchNormOp>(op))
    return Rule::KeepF32;
  auto kind = cast<nn::FusionKindOpInterface>(op).getFusionKind();
  if (kind == nn::FusionKind::Contraction)
    return Rule::LowPrecisionGemm;
  // MaxPool and ArgMax/ArgMin select elements: any type gives the same result.
  if (kind == nn::FusionKind::Reduction && !isa<nn::MaxPoolOp, nn::ArgMaxOp, nn::ArgMinOp>(op))
    return Rule::KeepF32;
  return Rule::FollowInputs;
}

/// "LayerNormalization", "layer_norm" and "nn.layer_norm" all read "layernorm".
std::string normalizedOpType(llvm::StringRef name) {
  name.consume_front("nn.");
  std::string s = name.lower();
  llvm::erase(s, '_');
  if (size_t at = s.find("normalization"); at != std::string::npos)
    s.replace(at, strlen("normalization"), "norm");
  return s;
}

/// True when `op` is named in the keep list, by ONNX node name (its
/// location, possibly fused) or by op type.
bool isKeptInF32(Operation *op, ArrayRef<std::string> keep) {
  if (keep.empty())
    return false;
  bool kept = false;
  op->getLoc()->walk([&](Location l) {
    if (auto name = dyn_cast<NameLoc>(l))
      kept |= llvm::is_contained(keep, name.getName().str());
    return WalkResult::advance();
  });
  std::string type = normalizedOpType(op->getName().getStringRef());
  return kept || llvm::any_of(keep, [&](const std::string &k) { return normalizedOpType(k) == type; });
}

bool isFloatOf(Type t, Type element) { return getElementTypeOrSelf(t) == element; }

/// Casts values to element types, one cast per (value, type), placed right
/// after the producer so every user shares it.
class CastCache {
public:
  /// `v` with element type `to`; nullopt when `v` is a constant that
  /// overflows `to` (the op then stays in f32).
  std::optional<Value> get(Value v, Type to) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getElementType() == to)
      return v;
    auto key = std::make_pair(v, to);
    if (auto it = casts_.find(key); it != casts_.end())
      return it->second;
    OpBuilder b(v.getContext());
    if (Operation *def = v.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
    Value result;
    DenseElementsAttr attr;
    if (matchPattern(v, m_Constant(&attr))) {
      auto converted = convert(attr, cast<FloatType>(to));
      if (!converted)
        return std::nullopt;
      result = nn::ConstantOp::create(b, v.getLoc(), *converted);
    } else {
      result = nn::CastOp::create(b, v.getLoc(), type.clone(to), v);
    }
    casts_[key] = result;
    return result;
  }

  /// True when `v` is not a constant, or a constant that fits `to`.
  bool fits(Value v, Type to) { return get(v, to).has_value(); }

private:
  /// Round to nearest even, as a run-time cast does; nullopt on overflow.
  static std::optional<DenseElementsAttr> convert(DenseElementsAttr attr, FloatType to) {
    auto type = cast<RankedTensorType>(attr.getType()).clone(to);
    auto one = [&](APFloat x) -> std::optional<APFloat> {
      bool finite = x.isFinite(), lost;
      x.convert(to.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      if (finite && !x.isFinite())
        return std::nullopt;
      return x;
    };
    if (attr.isSplat()) {
      auto x = one(attr.getSplatValue<APFloat>());
      return x ? std::optional(DenseElementsAttr::get(type, *x)) : std::nullopt;
    }
    SmallVector<APFloat> values;
    values.reserve(attr.getNumElements());
    for (APFloat x : attr.getValues<APFloat>()) {
      auto y = one(x);
      if (!y)
        return std::nullopt;
      values.push_back(*y);
    }
    return DenseElementsAttr::get(type, values);
  }

  DenseMap<std::pair<Value, Type>, Value> casts_;
};

struct AutocastOptionsResolved {
  Type low;    ///< bf16 or f16
  bool mixed;  ///< GEMM results (and everything else) stay f32
  SmallVector<std::string> keep;
};

/// True for a contraction's addend: Gemm's C and a convolution's bias (the
/// GEMM epilogue adds them in the result's type) and attention's additive
/// mask, which stays f32 (its large negative values overflow f16, and the
/// softmax it feeds computes in f32).
bool isAddend(Operation *op, unsigned operand) {
  if (isa<nn::GemmOp, nn::ConvOp, nn::ConvTransposeOp>(op))
    return operand == 2;
  return isa<nn::AttentionOp>(op) && operand == 3;
}

/// The float operands an op computes on (Resize's scales are parameters).
SmallVector<unsigned> dataOperands(Operation *op) {
  SmallVector<unsigned> indices;
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (isa<FloatType>(getElementTypeOrSelf(v.getType())) && !(isa<nn::ResizeOp>(op) && i > 0))
      indices.push_back(i);
  return indices;
}

/// Gives `op` its compute type: casts its float operands and retypes its
/// float results.
void autocastOp(Operation *op, const AutocastOptionsResolved &o, CastCache &casts) {
  Type f32 = Float32Type::get(op->getContext());
  SmallVector<unsigned> data = dataOperands(op);
  auto allowed = [&](Type t) {
    Type e = getElementTypeOrSelf(t);
    return !isa<FloatType>(e) || e == f32 || e == o.low;
  };
  if (data.empty() || !llvm::all_of(op->getOperandTypes(), allowed) ||
      !llvm::all_of(op->getResultTypes(), allowed))
    return;
  Rule rule = isKeptInF32(op, o.keep) ? Rule::KeepF32 : ruleOf(op);
  // operandType[i]: the element type data operand data[i] is cast to.
  SmallVector<Type> operandType(data.size(), f32);
  Type resultType = f32;
  if (rule == Rule::LowPrecisionGemm) {
    for (auto [k, i] : llvm::enumerate(data))
      operandType[k] = !isAddend(op, i) || (!o.mixed && !isa<nn::AttentionOp>(op)) ? o.low : f32;
    resultType = o.mixed ? f32 : o.low;
  } else if (rule == Rule::FollowInputs) {
    bool anyVoter = false, allLow = true;
    for (unsigned i : data) {
      Value v = op->getOperand(i);
      if (matchPattern(v, m_Constant()))
        continue;
      anyVoter = true;
      allLow &= isFloatOf(v.getType(), o.low);
    }
    if (!anyVoter)
      return; // an op on constants only keeps its types
    if (allLow && !o.mixed) {
      operandType.assign(data.size(), o.low);
      resultType = o.low;
    }
  }
  // A constant that does not fit the low type keeps the op in f32.
  for (auto [k, i] : llvm::enumerate(data))
    if (!casts.fits(op->getOperand(i), operandType[k])) {
      operandType.assign(data.size(), f32);
      resultType = f32;
      break;
    }
  for (auto [k, i] : llvm::enumerate(data))
    op->setOperand(i, *casts.get(op->getOperand(i), operandType[k]));
  for (Value r : op->getResults())
    if (auto t = dyn_cast<RankedTensorType>(r.getType()); t && isa<FloatType>(t.getElementType()))
      r.setType(t.clone(resultType));
}

/// The graph's outputs keep their declared types.
void restoreResultTypes(func::FuncOp func, CastCache &casts) {
  func.walk([&](func::ReturnOp ret) {
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      Type declared = func.getFunctionType().getResult(i);
      if (v.getType() != declared)
        ret.setOperand(i, *casts.get(v, getElementTypeOrSelf(declared)));
    }
  });
}

/// cast(cast(x : A) : B) : C is cast(x : A) : C when A -> B is exact.
struct FoldCastOfWideningCast : OpRewritePattern<nn::CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(nn::CastOp outer, PatternRewriter &rewriter) const override {
    auto inner = outer.getInput().getDefiningOp<nn::CastOp>();
    if (!inner)
      return failure();
    Value x = inner.getInput();
    auto from = dyn_cast<FloatType>(getElementTypeOrSelf(x.getType()));
    auto via = dyn_cast<FloatType>(getElementTypeOrSelf(inner.getType()));
    if (!from || !via ||
        !llvm::APFloatBase::isRepresentableBy(from.getFloatSemantics(), via.getFloatSemantics()))
      return failure();
    if (x.getType() == outer.getType())
      rewriter.replaceOp(outer, x);
    else
      rewriter.replaceOpWithNewOp<nn::CastOp>(outer, outer.getType(), x);
    return success();
  }
};

struct AutocastPass : nncc::impl::AutocastPassBase<AutocastPass> {
  using AutocastPassBase::AutocastPassBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    auto p = parsePrecision(precision);
    if (!p || (*p != Precision::BF16 && *p != Precision::FP16 && *p != Precision::Mixed)) {
      getOperation()->emitError("nncc-autocast: unknown precision '")
          << precision << "' (expected bf16, fp16 or mixed)";
      return signalPassFailure();
    }
    AutocastOptionsResolved o{*p == Precision::FP16 ? (Type)Float16Type::get(ctx)
                                                    : (Type)BFloat16Type::get(ctx),
                              *p == Precision::Mixed,
                              SmallVector<std::string>(keepFp32.begin(), keepFp32.end())};
    SmallVector<func::FuncOp> funcs;
    getOperation()->walk([&](func::FuncOp f) { funcs.push_back(f); });
    for (func::FuncOp func : funcs) {
      CastCache casts;
      SmallVector<Operation *> ops;
      func.walk([&](Operation *op) {
        if (op->getDialect() && isa<nn::NNDialect>(op->getDialect()) &&
            !isa<nn::ConstantOp, nn::CastOp>(op) && isa<nn::FusionKindOpInterface>(op))
          ops.push_back(op);
      });
      for (Operation *op : ops)
        autocastOp(op, o, casts);
      restoreResultTypes(func, casts);
    }
    RewritePatternSet patterns(ctx);
    populateAutocastCleanupPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void nncc::populateAutocastCleanupPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldCastOfWideningCast>(patterns.getContext());
}
