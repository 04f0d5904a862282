//===- GradientBuilder.cpp ------------------------------------------------===//
#include "dialects/NN/Gradients/GradientBuilder.h"

using namespace mlir;
using namespace nncc::nn;
using namespace nncc::nn::grad;

void nncc::nn::registerGradientModels(MLIRContext *context) {
  registerElementwise(context);
  registerContraction(context);
  registerReduction(context);
  registerNormalization(context);
  registerDataMovement(context);
}

bool grad::isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType()) && t.hasStaticShape();
}

Value grad::orZeros(GradBuilder &g, Value grad, Value like) {
  return grad ? grad : g.zeros(GradBuilder::type(like));
}

Value GradBuilder::scalar(Type elementType, double value) {
  auto t = RankedTensorType::get({}, elementType);
  return ConstantOp::create(b, loc, t, DenseElementsAttr::get(t, b.getFloatAttr(elementType, value)));
}

Value GradBuilder::zeros(RankedTensorType t) {
  return ConstantOp::create(b, loc, t, DenseElementsAttr::get(t, b.getZeroAttr(t.getElementType())));
}

RankedTensorType GradBuilder::broadcastType(Value a, Value c, Type elementType) {
  auto s = broadcastShapes({shape(a), shape(c)});
  assert(s && "gradient rules combine broadcast-compatible values");
  return RankedTensorType::get(*s, elementType);
}

Value GradBuilder::where(Value condition, Value a, Value c) {
  auto s = broadcastShapes({shape(condition), shape(a), shape(c)});
  assert(s && "gradient rules combine broadcast-compatible values");
  return WhereOp::create(b, loc, RankedTensorType::get(*s, type(a).getElementType()), condition, a, c);
}

Value GradBuilder::cast(Value x, Type elementType) {
  if (type(x).getElementType() == elementType)
    return x;
  return CastOp::create(b, loc, type(x).clone(elementType), x);
}

Value GradBuilder::reshape(Value x, ArrayRef<int64_t> s) {
  if (shape(x) == s)
    return x;
  return ReshapeOp::create(b, loc, type(x).clone(s), x, Value());
}

Value GradBuilder::expand(Value x, ArrayRef<int64_t> s) {
  if (shape(x) == s)
    return x;
  return ExpandOp::create(b, loc, type(x).clone(s), x, Value());
}

Value GradBuilder::transpose(Value x, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> s;
  for (int64_t p : perm)
    s.push_back(shape(x)[p]);
  return TransposeOp::create(b, loc, type(x).clone(s), x, b.getDenseI64ArrayAttr(perm));
}

Value GradBuilder::transposeLast2(Value x) {
  int64_t rank = type(x).getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return transpose(x, perm);
}

Value GradBuilder::matmul(Value a, Value c) {
  auto sa = shape(a), sc = shape(c);
  auto batch = broadcastShapes({sa.drop_back(2), sc.drop_back(2)});
  assert(batch && "matmul operands with broadcast-compatible batch dims");
  SmallVector<int64_t> s(*batch);
  s.push_back(sa[sa.size() - 2]);
  s.push_back(sc.back());
  return MatMulOp::create(b, loc, type(a).clone(s), a, c);
}

template <typename OpT>
static Value reduce(GradBuilder &g, Value x, ArrayRef<int64_t> axes, bool keepdims) {
  SmallVector<int64_t> s;
  for (auto [d, dim] : llvm::enumerate(g.shape(x))) {
    if (!llvm::is_contained(axes, (int64_t)d))
      s.push_back(dim);
    else if (keepdims)
      s.push_back(1);
  }
  SmallVector<int64_t> sorted(axes);
  llvm::sort(sorted);
  return OpT::create(g.b, g.loc, g.type(x).clone(s), x, Value(), g.b.getDenseI64ArrayAttr(sorted),
                     g.b.getBoolAttr(keepdims), g.b.getBoolAttr(false));
}

Value GradBuilder::reduceSum(Value x, ArrayRef<int64_t> axes, bool keepdims) {
  return reduce<ReduceSumOp>(*this, x, axes, keepdims);
}

Value GradBuilder::reduceMean(Value x, ArrayRef<int64_t> axes, bool keepdims) {
  return reduce<ReduceMeanOp>(*this, x, axes, keepdims);
}

Value GradBuilder::slice(Value x, ArrayRef<int64_t> starts, ArrayRef<int64_t> sizes, ArrayRef<int64_t> steps) {
  SmallVector<int64_t> ends;
  for (auto [start, size, step] : llvm::zip(starts, sizes, steps))
    ends.push_back(size == 0 ? start : start + (size - 1) * step + 1);
  return SliceOp::create(b, loc, type(x).clone(sizes), x, Value(), Value(), Value(), Value(),
                         b.getDenseI64ArrayAttr(starts), b.getDenseI64ArrayAttr(ends),
                         b.getDenseI64ArrayAttr(steps));
}

Value GradBuilder::reverse(Value x, int64_t axis) {
  auto s = shape(x);
  SmallVector<int64_t> starts(s.size(), 0), ends(s), steps(s.size(), 1);
  starts[axis] = s[axis] - 1;
  ends[axis] = -1; // "through index 0" for a negative step (SliceParams)
  steps[axis] = -1;
  return SliceOp::create(b, loc, type(x), x, Value(), Value(), Value(), Value(),
                         b.getDenseI64ArrayAttr(starts), b.getDenseI64ArrayAttr(ends),
                         b.getDenseI64ArrayAttr(steps));
}

Value GradBuilder::pad(Value x, ArrayRef<int64_t> pads) {
  if (llvm::all_of(pads, [](int64_t p) { return p == 0; }))
    return x;
  auto s = shape(x);
  SmallVector<int64_t> out(s);
  for (size_t d = 0; d < s.size(); ++d)
    out[d] += pads[d] + pads[d + s.size()];
  return PadOp::create(b, loc, type(x).clone(out), x, Value(), Value(), b.getDenseI64ArrayAttr(pads),
                       b.getStringAttr("constant"));
}

Value GradBuilder::concat(ValueRange xs, int64_t axis) {
  if (xs.size() == 1)
    return xs.front();
  SmallVector<int64_t> s(shape(xs.front()));
  s[axis] = 0;
  for (Value x : xs)
    s[axis] += shape(x)[axis];
  return ConcatOp::create(b, loc, type(xs.front()).clone(s), xs, (uint64_t)axis);
}

Value GradBuilder::sumToShape(Value grad, ArrayRef<int64_t> target) {
  auto s = shape(grad);
  if (s == target)
    return grad;
  int64_t extra = (int64_t)s.size() - (int64_t)target.size();
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < (int64_t)s.size(); ++d)
    if (d < extra || (target[d - extra] == 1 && s[d] != 1))
      axes.push_back(d);
  Value summed = axes.empty() ? grad : reduceSum(grad, axes, /*keepdims=*/true);
  return reshape(summed, target);
}

Value GradBuilder::sumTo(Value grad, Value operand) {
  if (!grad || !isFloatTensor(operand))
    return Value();
  return sumToShape(grad, shape(operand));
}
