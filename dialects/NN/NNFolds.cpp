/// Folders of the nn ops: identities, and constant evaluation of small
/// constant subgraphs (shape computations: Shape -> Gather -> Concat ->
/// Reshape, Range, ConstantOfShape, integer arithmetic on shapes).
#include "dialects/NN/NNOps.h"
#include "dialects/NN/ShapeUtils.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/APSInt.h"
#include "llvm/Support/MathExtras.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace nncc::nn;

namespace {

/// Constants above this many elements are not evaluated at compile time:
/// folding is for shape computations and scalars, not for weights.
constexpr int64_t kMaxFoldElements = 1 << 14;

DenseElementsAttr asDense(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || dense.getNumElements() > kMaxFoldElements)
    return {};
  return dense;
}

RankedTensorType resultType(Operation *op, unsigned i = 0) {
  return cast<RankedTensorType>(op->getResult(i).getType());
}

/// Strides of a row-major shape.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Maps each element of `outShape` to the element of `inShape` it reads under
/// numpy broadcasting.
SmallVector<int64_t> broadcastIndexMap(ArrayRef<int64_t> inShape, ArrayRef<int64_t> outShape) {
  int64_t total = 1;
  for (int64_t d : outShape)
    total *= d;
  SmallVector<int64_t> map(total);
  auto outStrides = stridesOf(outShape), inStrides = stridesOf(inShape);
  size_t offset = outShape.size() - inShape.size();
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t src = 0;
    for (size_t d = offset; d < outShape.size(); ++d) {
      int64_t idx = (linear / outStrides[d]) % outShape[d];
      if (inShape[d - offset] != 1)
        src += idx * inStrides[d - offset];
    }
    map[linear] = src;
  }
  return map;
}

/// Evaluates a broadcasting binary op on two constants. `intFn`/`floatFn`
/// return nullopt when the value cannot be folded (division by zero).
template <typename IntFn, typename FloatFn>
Attribute foldBinary(Attribute lhsAttr, Attribute rhsAttr, RankedTensorType outType,
                     IntFn intFn, FloatFn floatFn) {
  auto lhs = asDense(lhsAttr), rhs = asDense(rhsAttr);
  if (!lhs || !rhs || !outType.hasStaticShape() ||
      outType.getNumElements() > kMaxFoldElements)
    return {};
  auto lhsMap = broadcastIndexMap(lhs.getType().getShape(), outType.getShape());
  auto rhsMap = broadcastIndexMap(rhs.getType().getShape(), outType.getShape());
  Type elemType = lhs.getElementType();
  if (isa<IntegerType>(elemType)) {
    auto l = llvm::to_vector(lhs.getValues<APInt>());
    auto r = llvm::to_vector(rhs.getValues<APInt>());
    SmallVector<APInt> out;
    for (size_t i = 0; i < lhsMap.size(); ++i) {
      std::optional<APInt> v = intFn(l[lhsMap[i]], r[rhsMap[i]]);
      if (!v)
        return {};
      out.push_back(*v);
    }
    return DenseElementsAttr::get(outType, out);
  }
  if (isa<FloatType>(elemType)) {
    auto l = llvm::to_vector(lhs.getValues<APFloat>());
    auto r = llvm::to_vector(rhs.getValues<APFloat>());
    SmallVector<APFloat> out;
    for (size_t i = 0; i < lhsMap.size(); ++i) {
      std::optional<APFloat> v = floatFn(l[lhsMap[i]], r[rhsMap[i]]);
      if (!v)
        return {};
      out.push_back(*v);
    }
    return DenseElementsAttr::get(outType, out);
  }
  return {};
}

bool isSplatOf(Attribute attr, double value) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return false;
  if (isa<IntegerType>(dense.getElementType()))
    return dense.getSplatValue<APInt>().getSExtValue() == (int64_t)value;
  if (isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().convertToDouble() == value;
  return false;
}

/// `x op c` is `x` when c is the op's identity and nothing broadcasts.
OpFoldResult foldIdentityRhs(Value lhs, Attribute rhs, Type result, double identity,
                             bool floatsToo) {
  if (lhs.getType() != result || !isSplatOf(rhs, identity))
    return {};
  if (!floatsToo && !isa<IntegerType>(getElementTypeOrSelf(result)))
    return {};
  return lhs;
}

/// Reads a small integer constant as int64 values.
std::optional<SmallVector<int64_t>> intValues(Attribute attr) {
  auto dense = asDense(attr);
  if (!dense || !isa<IntegerType>(dense.getElementType()))
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &v : dense.getValues<APInt>())
    values.push_back(v.getSExtValue());
  return values;
}

DenseElementsAttr i64Tensor(ArrayRef<int64_t> values, ArrayRef<int64_t> shape, MLIRContext *ctx) {
  auto type = RankedTensorType::get(shape, IntegerType::get(ctx, 64));
  return DenseElementsAttr::get(type, values);
}

} // namespace

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  auto input = asDense(adaptor.getInput());
  if (!input)
    return {};
  if (isa<IntegerType>(input.getElementType()))
    return input.mapValues(input.getElementType(), [](const APInt &v) { return -v; });
  if (isa<FloatType>(input.getElementType()))
    return input.mapValues(input.getElementType(), [](const APFloat &v) {
      APFloat r = v;
      r.changeSign();
      return r.bitcastToAPInt();
    });
  return {};
}

/// Ceil, Floor and Relu of constants: the trip counts of Range's Loop
/// expansion, ceil(max(limit - start, 0) / delta), fold once the inputs are bound.
static OpFoldResult foldRounding(Attribute operand, APFloat::roundingMode mode) {
  auto input = asDense(operand);
  if (!input || !isa<FloatType>(input.getElementType()))
    return {};
  return input.mapValues(input.getElementType(), [&](const APFloat &v) {
    APFloat r = v;
    r.roundToIntegral(mode);
    return r.bitcastToAPInt();
  });
}

OpFoldResult CeilOp::fold(FoldAdaptor adaptor) {
  return foldRounding(adaptor.getInput(), APFloat::rmTowardPositive);
}

OpFoldResult FloorOp::fold(FoldAdaptor adaptor) {
  return foldRounding(adaptor.getInput(), APFloat::rmTowardNegative);
}

OpFoldResult ReluOp::fold(FoldAdaptor adaptor) {
  auto input = asDense(adaptor.getInput());
  if (!input)
    return {};
  if (isa<IntegerType>(input.getElementType()))
    return input.mapValues(input.getElementType(), [](const APInt &v) {
      return v.isNegative() ? APInt::getZero(v.getBitWidth()) : v;
    });
  if (isa<FloatType>(input.getElementType()))
    return input.mapValues(input.getElementType(), [](const APFloat &v) {
      // max(x, 0) as the kernels compute it: NaN propagates, -0 becomes 0.
      if (v.isNaN() || !v.isNegative())
        return v.bitcastToAPInt();
      return APFloat::getZero(v.getSemantics()).bitcastToAPInt();
    });
  return {};
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getOutput().getType())
    return getInput();
  auto input = asDense(adaptor.getInput());
  if (!input)
    return {};
  Type from = input.getElementType(), to = getElementTypeOrSelf(getOutput());
  auto toInt = dyn_cast<IntegerType>(to);
  auto toFloat = dyn_cast<FloatType>(to);
  auto outType = resultType(*this);
  // A constant has a static type; a dynamic result cannot take it.
  if (!outType.hasStaticShape())
    return {};
  if (isa<IntegerType>(from) && toInt) {
    bool fromUnsigned = cast<IntegerType>(from).isUnsigned() || from.isInteger(1);
    return input.mapValues(to, [&](const APInt &v) {
      if (toInt.getWidth() == 1)
        return APInt(1, !v.isZero());
      return fromUnsigned ? v.zextOrTrunc(toInt.getWidth()) : v.sextOrTrunc(toInt.getWidth());
    });
  }
  if (isa<IntegerType>(from) && toFloat) {
    bool isSigned = !cast<IntegerType>(from).isUnsigned() && !from.isInteger(1);
    SmallVector<APFloat> out;
    for (const APInt &v : input.getValues<APInt>()) {
      APFloat f(toFloat.getFloatSemantics());
      f.convertFromAPInt(v, isSigned, APFloat::rmNearestTiesToEven);
      out.push_back(f);
    }
    return DenseElementsAttr::get(outType, out);
  }
  if (isa<FloatType>(from) && toFloat) {
    SmallVector<APFloat> out;
    for (APFloat v : input.getValues<APFloat>()) {
      bool lost;
      v.convert(toFloat.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      out.push_back(v);
    }
    return DenseElementsAttr::get(outType, out);
  }
  if (isa<FloatType>(from) && toInt) {
    SmallVector<APInt> out;
    for (const APFloat &v : input.getValues<APFloat>()) {
      if (toInt.getWidth() == 1) {
        out.push_back(APInt(1, !v.isZero()));
        continue;
      }
      if (v.isNaN() || v.isInfinity())
        return {};
      APSInt result(toInt.getWidth(), toInt.isUnsigned());
      bool exact;
      if (v.convertToInteger(result, APFloat::rmTowardZero, &exact) & APFloat::opInvalidOp)
        return {};
      out.push_back(result);
    }
    return DenseElementsAttr::get(outType, out);
  }
  return {};
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (auto id = foldIdentityRhs(getLhs(), adaptor.getRhs(), getType(), 0, false))
    return id;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), resultType(*this),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> { return a + b; },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (auto id = foldIdentityRhs(getLhs(), adaptor.getRhs(), getType(), 0, false))
    return id;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), resultType(*this),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> { return a - b; },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (auto id = foldIdentityRhs(getLhs(), adaptor.getRhs(), getType(), 1, true))
    return id;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), resultType(*this),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> { return a * b; },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (auto id = foldIdentityRhs(getLhs(), adaptor.getRhs(), getType(), 1, true))
    return id;
  bool isUnsigned = getElementTypeOrSelf(getType()).isUnsignedInteger();
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), resultType(*this),
      [&](const APInt &a, const APInt &b) -> std::optional<APInt> {
        if (b.isZero())
          return std::nullopt;
        return isUnsigned ? a.udiv(b) : a.sdiv(b);
      },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> { return a / b; });
}

OpFoldResult EqualOp::fold(FoldAdaptor adaptor) {
  auto lhs = asDense(adaptor.getLhs()), rhs = asDense(adaptor.getRhs());
  if (!lhs || !rhs || !isa<IntegerType>(lhs.getElementType()))
    return {};
  // Compare in the operands' type, then narrow to i1.
  auto wide = RankedTensorType::get(resultType(*this).getShape(), lhs.getElementType());
  auto eq = dyn_cast_or_null<DenseElementsAttr>(foldBinary(
      lhs, rhs, wide,
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return APInt(a.getBitWidth(), a == b);
      },
      [](const APFloat &, const APFloat &) -> std::optional<APFloat> { return std::nullopt; }));
  if (!eq)
    return {};
  return eq.mapValues(getElementTypeOrSelf(getType()),
                      [](const APInt &v) { return APInt(1, !v.isZero()); });
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  auto cond = dyn_cast_or_null<DenseElementsAttr>(adaptor.getCondition());
  if (cond && cond.isSplat()) {
    Value chosen = cond.getSplatValue<bool>() ? getLhs() : getRhs();
    if (chosen.getType() == getType())
      return chosen;
  }
  auto lhs = asDense(adaptor.getLhs()), rhs = asDense(adaptor.getRhs());
  cond = asDense(adaptor.getCondition());
  auto outType = resultType(*this);
  if (!cond || !lhs || !rhs || !outType.hasStaticShape() ||
      outType.getNumElements() > kMaxFoldElements)
    return {};
  auto cMap = broadcastIndexMap(cond.getType().getShape(), outType.getShape());
  auto lMap = broadcastIndexMap(lhs.getType().getShape(), outType.getShape());
  auto rMap = broadcastIndexMap(rhs.getType().getShape(), outType.getShape());
  auto c = llvm::to_vector(cond.getValues<bool>());
  auto l = llvm::to_vector(lhs.getValues<Attribute>());
  auto r = llvm::to_vector(rhs.getValues<Attribute>());
  SmallVector<Attribute> out;
  for (size_t i = 0; i < cMap.size(); ++i)
    out.push_back(c[cMap[i]] ? l[lMap[i]] : r[rMap[i]]);
  return DenseElementsAttr::get(outType, out);
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getShape())
    return {};
  if (getInput().getType() == getType())
    return getInput();
  if (auto inner = getInput().getDefiningOp<ReshapeOp>(); inner && !inner.getShape()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  if (auto input = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    return input.reshape(resultType(*this));
  return {};
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (getShape())
    return {};
  if (getInput().getType() == getType())
    return getInput();
  auto input = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
  if (input && input.isSplat())
    return DenseElementsAttr::get(resultType(*this), input.getSplatValue<Attribute>());
  return {};
}

OpFoldResult ConstantOfShapeOp::fold(FoldAdaptor) {
  auto type = resultType(*this);
  if (getShape() || !type.hasStaticShape())
    return {};
  // Only dense values can be read here (not dense_resource blobs).
  auto value = dyn_cast<DenseElementsAttr>(getValue());
  if (!value)
    return {};
  return DenseElementsAttr::get(type, value.getValues<Attribute>()[0]);
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPerm();
  bool identity = llvm::all_of(llvm::enumerate(perm),
                               [](auto p) { return (int64_t)p.index() == p.value(); });
  if (identity && getInput().getType() == getType())
    return getInput();
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    // transpose(transpose(x, p), q) = transpose(x, p[q[i]]).
    SmallVector<int64_t> composed;
    for (int64_t q : perm)
      composed.push_back(inner.getPerm()[q]);
    getInputMutable().assign(inner.getInput());
    setPerm(composed);
    return getResult();
  }
  auto input = asDense(adaptor.getInput());
  auto outType = resultType(*this);
  if (!input || !outType.hasStaticShape())
    return {};
  auto values = llvm::to_vector(input.getValues<Attribute>());
  auto inStrides = stridesOf(input.getType().getShape());
  auto outStrides = stridesOf(outType.getShape());
  SmallVector<Attribute> out(values.size());
  for (int64_t linear = 0; linear < (int64_t)values.size(); ++linear) {
    int64_t src = 0;
    for (size_t d = 0; d < perm.size(); ++d)
      src += ((linear / outStrides[d]) % outType.getShape()[d]) * inStrides[perm[d]];
    out[linear] = values[src];
  }
  return DenseElementsAttr::get(outType, out);
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  auto outType = resultType(*this);
  if (!outType.hasStaticShape() || outType.getNumElements() > kMaxFoldElements)
    return {};
  int64_t axis = *normalizeAxis(getAxis(), outType.getRank());
  // Rows of the concatenation: the product of dims before the axis.
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= outType.getShape()[d];
  SmallVector<SmallVector<Attribute>> inputs;
  for (Attribute attr : adaptor.getInputs()) {
    auto dense = asDense(attr);
    if (!dense)
      return {};
    inputs.push_back(llvm::to_vector(dense.getValues<Attribute>()));
  }
  SmallVector<Attribute> out;
  for (int64_t row = 0; row < outer; ++row)
    for (auto &values : inputs) {
      int64_t chunk = values.size() / outer;
      out.append(values.begin() + row * chunk, values.begin() + (row + 1) * chunk);
    }
  return DenseElementsAttr::get(outType, out);
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  if (!getStarts())
    return {};
  auto inType = cast<RankedTensorType>(getInput().getType());
  auto outType = resultType(*this);
  // The whole input, which only a static shape can prove (an end of 5 on a
  // dynamic dim may cut it).
  if (inType == outType && inType.hasStaticShape() &&
      llvm::all_of(*getSteps(), [](int64_t s) { return s == 1; }) &&
      llvm::all_of(*getStarts(), [](int64_t s) { return s == 0; }) &&
      *getEnds() == inType.getShape())
    return getInput();
  auto input = asDense(adaptor.getInput());
  if (!input || !outType.hasStaticShape())
    return {};
  auto values = llvm::to_vector(input.getValues<Attribute>());
  auto inStrides = stridesOf(inType.getShape());
  auto outStrides = stridesOf(outType.getShape());
  SmallVector<Attribute> out(outType.getNumElements());
  for (int64_t linear = 0; linear < (int64_t)out.size(); ++linear) {
    int64_t src = 0;
    for (int64_t d = 0; d < outType.getRank(); ++d) {
      int64_t idx = (linear / outStrides[d]) % outType.getShape()[d];
      src += ((*getStarts())[d] + idx * (*getSteps())[d]) * inStrides[d];
    }
    out[linear] = values[src];
  }
  return DenseElementsAttr::get(outType, out);
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  auto input = asDense(adaptor.getInput());
  auto indices = intValues(adaptor.getIndices());
  auto outType = resultType(*this);
  if (!input || !indices || !outType.hasStaticShape() ||
      outType.getNumElements() > kMaxFoldElements)
    return {};
  auto inShape = input.getType().getShape();
  int64_t axis = *normalizeAxis(getAxis(), inShape.size());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= inShape[d];
  for (size_t d = axis + 1; d < inShape.size(); ++d)
    inner *= inShape[d];
  auto values = llvm::to_vector(input.getValues<Attribute>());
  SmallVector<Attribute> out;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t index : *indices) {
      if (index < -inShape[axis] || index >= inShape[axis])
        return {};
      if (index < 0)
        index += inShape[axis];
      for (int64_t i = 0; i < inner; ++i)
        out.push_back(values[(o * inShape[axis] + index) * inner + i]);
    }
  return DenseElementsAttr::get(outType, out);
}

OpFoldResult RangeOp::fold(FoldAdaptor adaptor) {
  auto outType = resultType(*this);
  auto start = asDense(adaptor.getStart()), limit = asDense(adaptor.getLimit()),
       delta = asDense(adaptor.getDelta());
  if (!start || !limit || !delta || !outType.hasStaticShape())
    return {};
  Type elem = start.getElementType();
  int64_t n = outType.getShape()[0];
  if (n > kMaxFoldElements)
    return {};
  if (isa<IntegerType>(elem)) {
    APInt s = start.getSplatValue<APInt>(), d = delta.getSplatValue<APInt>();
    APInt l = limit.getSplatValue<APInt>();
    // ONNX: max(ceil((limit - start) / delta), 0) elements. Fold only when the
    // result type agrees.
    if (d.isZero())
      return {};
    int64_t span, step = d.getSExtValue();
    if (llvm::SubOverflow(l.getSExtValue(), s.getSExtValue(), span))
      return {};
    int64_t count = span / step + (span % step != 0 && (span < 0) == (step < 0));
    if (std::max<int64_t>(count, 0) != n)
      return {};
    SmallVector<APInt> out;
    for (int64_t i = 0; i < n; ++i)
      out.push_back(s + d * APInt(s.getBitWidth(), i));
    return DenseElementsAttr::get(outType, out);
  }
  if (isa<FloatType>(elem)) {
    double s = start.getSplatValue<APFloat>().convertToDouble();
    double d = delta.getSplatValue<APFloat>().convertToDouble();
    double l = limit.getSplatValue<APFloat>().convertToDouble();
    if (d == 0 || std::max<double>(std::ceil((l - s) / d), 0) != (double)n)
      return {};
    SmallVector<APFloat> out;
    for (int64_t i = 0; i < n; ++i) {
      APFloat v(s + i * d);
      bool lost;
      v.convert(cast<FloatType>(elem).getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      out.push_back(v);
    }
    return DenseElementsAttr::get(outType, out);
  }
  return {};
}

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  auto inType = cast<RankedTensorType>(getInput().getType());
  int64_t rank = inType.getRank();
  // I64Attr getters are unsigned; the values are signed.
  int64_t start = (int64_t)getStart(), end = (int64_t)getEnd();
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  SmallVector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) {
    if (inType.isDynamicDim(d))
      return {};
    dims.push_back(inType.getShape()[d]);
  }
  if (resultType(*this).getShape() != ArrayRef<int64_t>{(int64_t)dims.size()})
    return {};
  return i64Tensor(dims, {(int64_t)dims.size()}, getContext());
}

OpFoldResult SizeOp::fold(FoldAdaptor) {
  auto inType = cast<RankedTensorType>(getInput().getType());
  if (!inType.hasStaticShape() || resultType(*this).getRank() != 0)
    return {};
  return i64Tensor({inType.getNumElements()}, {}, getContext());
}
