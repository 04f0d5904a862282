/// Verifiers of the nn ops. Verifiers check what later passes rely on (ranks,
/// axes in range, broadcast compatibility, attribute lengths); a mismatch
/// that only dynamic dims could hide is accepted.
#include "dialects/NN/NNOps.h"

#include "dialects/NN/ShapeUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace nncc::nn;

namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

bool dimsCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Checks that `values` share one element type, and that `output` has it too
/// unless it is a comparison's i1. Folders rely on this: they combine the
/// operands' values and build the result from them.
LogicalResult verifySameElementType(Operation *op, ValueRange values, Value output,
                                    bool boolResult) {
  Type elementType = getElementTypeOrSelf(values.front());
  for (Value v : values)
    if (getElementTypeOrSelf(v) != elementType)
      return op->emitOpError("operands must have the same element type");
  if (!boolResult && getElementTypeOrSelf(output) != elementType)
    return op->emitOpError("result element type must be the operands'");
  return success();
}

/// Checks that `output` is the broadcast of `inputs`.
LogicalResult verifyBroadcast(Operation *op, ValueRange inputs, Value output) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value v : inputs)
    shapes.push_back(tensorType(v).getShape());
  if (!broadcastShapes(shapes))
    return op->emitOpError("operand shapes are not broadcast-compatible");
  if (!isBroadcastResult(shapes, tensorType(output).getShape()))
    return op->emitOpError("result shape ")
           << tensorType(output) << " is not the broadcast of the operand shapes";
  return success();
}

/// Checks the shared attributes of convolution and pooling windows.
LogicalResult verifyWindow(Operation *op, int64_t spatialRank,
                           ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                           ArrayRef<int64_t> dilations) {
  if ((int64_t)strides.size() != spatialRank)
    return op->emitOpError("expects ") << spatialRank << " strides, got " << strides.size();
  if ((int64_t)dilations.size() != spatialRank)
    return op->emitOpError("expects ") << spatialRank << " dilations, got "
                                       << dilations.size();
  if ((int64_t)pads.size() != 2 * spatialRank)
    return op->emitOpError("expects ") << 2 * spatialRank << " pads, got " << pads.size();
  for (int64_t s : strides)
    if (s < 1)
      return op->emitOpError("strides must be positive");
  for (int64_t d : dilations)
    if (d < 1)
      return op->emitOpError("dilations must be positive");
  for (int64_t p : pads)
    if (p < 0)
      return op->emitOpError("pads must be non-negative");
  return success();
}

/// nn ops take axes normalized to [0, rank): the importer resolves ONNX's
/// negative axes, and the kernel builders index shapes with the axis.
LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ") << axis << " is out of range for rank " << rank
                                   << "; nn ops take axes in [0, rank)";
  return success();
}

/// An ONNX shape input is either an operand or implied by a static result.
LogicalResult verifyShapedByResult(Operation *op, Value shapeOperand, StringRef name) {
  if (shapeOperand)
    return success();
  for (Type t : op->getResultTypes())
    if (!cast<RankedTensorType>(t).hasStaticShape())
      return op->emitOpError("needs the '") << name << "' operand while its result shape is dynamic";
  return success();
}

} // namespace

LogicalResult ConstantOp::verify() {
  if (getValue().getType() != getOutput().getType())
    return emitOpError("value type ") << getValue().getType()
                                       << " differs from the result type";
  return success();
}

LogicalResult ClipOp::verify() {
  for (Value bound : {getMin(), getMax()}) {
    if (tensorType(bound).getRank() != 0)
      return emitOpError("min and max must be 0-d tensors");
    if (getElementTypeOrSelf(bound) != getElementTypeOrSelf(getInput()))
      return emitOpError("min and max must have the input's element type");
  }
  if (getInput().getType() != getOutput().getType())
    return emitOpError("result type must equal the input type");
  return success();
}

#define NN_VERIFY_BINARY(OP, BOOL_RESULT)                                      \
  LogicalResult OP::verify() {                                                 \
    if (failed(verifySameElementType(*this, {getLhs(), getRhs()}, getOutput(), \
                                     BOOL_RESULT)))                            \
      return failure();                                                        \
    return verifyBroadcast(*this, getOperands(), getOutput());                 \
  }
NN_VERIFY_BINARY(AddOp, false)
NN_VERIFY_BINARY(SubOp, false)
NN_VERIFY_BINARY(MulOp, false)
NN_VERIFY_BINARY(DivOp, false)
NN_VERIFY_BINARY(MinOp, false)
NN_VERIFY_BINARY(MaxOp, false)
NN_VERIFY_BINARY(PReluOp, false)
NN_VERIFY_BINARY(AndOp, false)
NN_VERIFY_BINARY(OrOp, false)
NN_VERIFY_BINARY(EqualOp, true)
NN_VERIFY_BINARY(GreaterOp, true)
NN_VERIFY_BINARY(LessOp, true)
NN_VERIFY_BINARY(GreaterEqualOp, true)
NN_VERIFY_BINARY(LessEqualOp, true)
NN_VERIFY_BINARY(WhereOp, false)
#undef NN_VERIFY_BINARY

/// Pow's exponent may have another element type than its base (ONNX allows
/// float^int and int^float); the result has the base's.
LogicalResult PowOp::verify() {
  if (getElementTypeOrSelf(getOutput()) != getElementTypeOrSelf(getLhs()))
    return emitOpError("result element type must be the base's");
  return verifyBroadcast(*this, getOperands(), getOutput());
}

LogicalResult MatMulOp::verify() {
  auto lhs = tensorType(getLhs()), rhs = tensorType(getRhs());
  if (lhs.getRank() < 1 || rhs.getRank() < 1)
    return emitOpError("operands must have rank >= 1");
  int64_t k1 = lhs.getShape().back();
  int64_t k2 = rhs.getRank() == 1 ? rhs.getShape()[0] : rhs.getShape()[rhs.getRank() - 2];
  if (!dimsCompatible(k1, k2))
    return emitOpError("contraction dims differ: ") << k1 << " vs " << k2;
  return success();
}

LogicalResult GemmOp::verify() {
  auto a = tensorType(getA()), b = tensorType(getB());
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitOpError("A and B must be 2-d");
  int64_t ka = a.getShape()[getTransA() ? 0 : 1];
  int64_t kb = b.getShape()[getTransB() ? 1 : 0];
  if (!dimsCompatible(ka, kb))
    return emitOpError("contraction dims differ: ") << ka << " vs " << kb;
  if (tensorType(getOutput()).getRank() != 2)
    return emitOpError("result must be 2-d");
  if (getC() && tensorType(getC()).getRank() > 2)
    return emitOpError("C must have rank <= 2");
  return success();
}

LogicalResult ConvOp::verify() {
  auto in = tensorType(getInput()), w = tensorType(getWeight());
  if (in.getRank() < 3 || in.getRank() != w.getRank())
    return emitOpError("input and weight must have the same rank >= 3");
  // I64Attr getters return uint64_t: read the group as signed.
  int64_t group = (int64_t)getGroup();
  if (group < 1)
    return emitOpError("group must be positive");
  int64_t channels = in.getShape()[1], wChannels = w.getShape()[1];
  if (!ShapedType::isDynamic(channels) && !ShapedType::isDynamic(wChannels) &&
      channels != wChannels * group)
    return emitOpError("input channels ") << channels << " != weight channels "
                                          << wChannels << " x group " << group;
  return verifyWindow(*this, in.getRank() - 2, getStrides(), getPads(), getDilations());
}

LogicalResult ConvTransposeOp::verify() {
  auto in = tensorType(getInput()), w = tensorType(getWeight());
  if (in.getRank() < 3 || in.getRank() != w.getRank())
    return emitOpError("input and weight must have the same rank >= 3");
  if ((int64_t)getGroup() < 1)
    return emitOpError("group must be positive");
  if ((int64_t)getOutputPadding().size() != in.getRank() - 2)
    return emitOpError("expects one output_padding per spatial axis");
  return verifyWindow(*this, in.getRank() - 2, getStrides(), getPads(), getDilations());
}

LogicalResult EinsumOp::verify() {
  StringRef eq = getEquation();
  auto arrow = eq.find("->");
  if (arrow == StringRef::npos)
    return emitOpError("equation must be explicit (contain '->')");
  SmallVector<StringRef> terms;
  eq.substr(0, arrow).split(terms, ',');
  if (terms.size() != getInputs().size())
    return emitOpError("equation has ") << terms.size() << " input terms for "
                                        << getInputs().size() << " inputs";
  for (auto [term, input] : llvm::zip(terms, getInputs()))
    if ((int64_t)term.size() != tensorType(input).getRank())
      return emitOpError("term '") << term << "' does not match rank "
                                   << tensorType(input).getRank();
  return success();
}

LogicalResult MaxPoolOp::verify() {
  if (getIndices() && tensorType(getIndices()).getShape() != tensorType(getOutput()).getShape())
    return emitOpError("indices must have the output's shape");
  int64_t spatial = tensorType(getInput()).getRank() - 2;
  if (spatial < 1 || (int64_t)getKernelShape().size() != spatial)
    return emitOpError("expects one kernel dim per spatial axis");
  return verifyWindow(*this, spatial, getStrides(), getPads(), getDilations());
}

LogicalResult AveragePoolOp::verify() {
  int64_t spatial = tensorType(getInput()).getRank() - 2;
  if (spatial < 1 || (int64_t)getKernelShape().size() != spatial)
    return emitOpError("expects one kernel dim per spatial axis");
  return verifyWindow(*this, spatial, getStrides(), getPads(), getDilations());
}

/// Per-channel parameters of batch and instance normalization are 1-d.
static LogicalResult verifyChannelParams(Operation *op, Value input, ValueRange params) {
  if (tensorType(input).getRank() < 2)
    return op->emitOpError("input must have rank >= 2");
  int64_t channels = tensorType(input).getShape()[1];
  for (Value p : params) {
    auto t = tensorType(p);
    if (t.getRank() != 1 || !dimsCompatible(t.getShape()[0], channels))
      return op->emitOpError("per-channel operands must be 1-d of size ") << channels;
  }
  if (op->getResult(0).getType() != input.getType())
    return op->emitOpError("result type must equal the input type");
  return success();
}

LogicalResult BatchNormOp::verify() {
  return verifyChannelParams(*this, getInput(),
                             {getScale(), getBias(), getMean(), getVariance()});
}

LogicalResult InstanceNormOp::verify() {
  return verifyChannelParams(*this, getInput(), {getScale(), getBias()});
}

LogicalResult LayerNormOp::verify() {
  if (failed(verifyAxis(*this, getAxis(), tensorType(getInput()).getRank())))
    return failure();
  if (getInput().getType() != getOutput().getType())
    return emitOpError("result type must equal the input type");
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), tensorType(getInput()).getRank());
}
LogicalResult LogSoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), tensorType(getInput()).getRank());
}

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError("approximate must be \"none\" or \"tanh\", got \"") << getApproximate() << "\"";
  return success();
}

/// q [batch..., Sq, D], k [batch..., Sk, D], v [batch..., Sk, Dv] with equal
/// batch dims; the result [batch..., Sq, Dv]; the mask broadcasts to the scores.
LogicalResult AttentionOp::verify() {
  auto q = tensorType(getQ()), k = tensorType(getK()), v = tensorType(getV()), out = tensorType(getOutput());
  int64_t rank = q.getRank();
  if (rank < 2 || k.getRank() != rank || v.getRank() != rank || out.getRank() != rank)
    return emitOpError("q, k, v and the result must have one rank of at least 2");
  auto batch = [](RankedTensorType t) { return t.getShape().drop_back(2); };
  if (batch(k) != batch(q) || batch(v) != batch(q) || batch(out) != batch(q))
    return emitOpError("q, k, v and the result must have the same batch dims");
  ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape(), vs = v.getShape(), os = out.getShape();
  if (qs[rank - 1] != ks[rank - 1] || ks[rank - 2] != vs[rank - 2] || os[rank - 2] != qs[rank - 2] ||
      os[rank - 1] != vs[rank - 1])
    return emitOpError("expects q [.., Sq, D], k [.., Sk, D], v [.., Sk, Dv] and a [.., Sq, Dv] result");
  if (getMask()) {
    SmallVector<int64_t> scores(batch(q));
    scores.append({qs[rank - 2], ks[rank - 2]});
    auto m = tensorType(getMask()).getShape();
    if (!isBroadcastResult({m, ArrayRef<int64_t>(scores)}, scores))
      return emitOpError("mask does not broadcast to the scores [batch..., Sq, Sk]");
  }
  return success();
}

/// Reductions: exactly one of the axes attribute and operand; axes in range
/// and unique; result rank consistent with keepdims.
static LogicalResult verifyReduce(Operation *op, Value input, Value axesTensor,
                                  std::optional<ArrayRef<int64_t>> axes,
                                  bool keepdims, Value output) {
  if (bool(axesTensor) == axes.has_value())
    return op->emitOpError("needs exactly one of the 'axes' attribute and operand");
  if (!axes)
    return success();
  int64_t rank = tensorType(input).getRank();
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t axis : *axes) {
    if (axis < 0 || axis >= rank)
      return op->emitOpError("axis ") << axis << " is out of range for rank " << rank;
    if (!seen.insert(axis).second)
      return op->emitOpError("axis ") << axis << " is repeated";
  }
  int64_t expectedRank = keepdims ? rank : rank - (int64_t)axes->size();
  if (tensorType(output).getRank() != expectedRank)
    return op->emitOpError("result rank ") << tensorType(output).getRank()
                                           << " should be " << expectedRank;
  return success();
}

#define NN_VERIFY_REDUCE(OP)                                                   \
  LogicalResult OP::verify() {                                                 \
    return verifyReduce(*this, getInput(), getAxesTensor(), getAxes(),         \
                        getKeepdims(), getOutput());                           \
  }
NN_VERIFY_REDUCE(ReduceMeanOp)
NN_VERIFY_REDUCE(ReduceSumOp)
NN_VERIFY_REDUCE(ReduceMaxOp)
NN_VERIFY_REDUCE(ReduceMinOp)
NN_VERIFY_REDUCE(ReduceProdOp)
NN_VERIFY_REDUCE(ReduceL2Op)
#undef NN_VERIFY_REDUCE

LogicalResult ArgMaxOp::verify() {
  return verifyAxis(*this, getAxis(), tensorType(getInput()).getRank());
}
LogicalResult ArgMinOp::verify() {
  return verifyAxis(*this, getAxis(), tensorType(getInput()).getRank());
}

LogicalResult CumSumOp::verify() {
  if (bool(getAxisTensor()) == getAxis().has_value())
    return emitOpError("needs exactly one of the 'axis' attribute and operand");
  if (getAxis())
    return verifyAxis(*this, *getAxis(), tensorType(getInput()).getRank());
  return success();
}

LogicalResult TopKOp::verify() {
  if (failed(verifyAxis(*this, getAxis(), tensorType(getInput()).getRank())))
    return failure();
  if (tensorType(getValues()).getShape() != tensorType(getIndices()).getShape())
    return emitOpError("values and indices must have the same shape");
  return verifyShapedByResult(*this, getKTensor(), "k");
}

LogicalResult ReshapeOp::verify() {
  auto in = tensorType(getInput()), out = tensorType(getOutput());
  if (in.hasStaticShape() && out.hasStaticShape() &&
      in.getNumElements() != out.getNumElements())
    return emitOpError("changes the element count from ")
           << in.getNumElements() << " to " << out.getNumElements();
  return verifyShapedByResult(*this, getShape(), "shape");
}

LogicalResult ExpandOp::verify() {
  if (!getShape() && !isBroadcastResult({tensorType(getInput()).getShape(),
                                         tensorType(getOutput()).getShape()},
                                        tensorType(getOutput()).getShape()))
    return emitOpError("result is not a broadcast of the input");
  return verifyShapedByResult(*this, getShape(), "shape");
}

LogicalResult TileOp::verify() {
  if (tensorType(getInput()).getRank() != tensorType(getOutput()).getRank())
    return emitOpError("result rank must equal the input rank");
  return verifyShapedByResult(*this, getRepeats(), "repeats");
}

/// Squeeze and unsqueeze keep the element count (canonicalization turns them
/// into reshapes, whose verifier insists on it).
static LogicalResult verifySameElementCount(Operation *op, Value input, Value output) {
  auto in = tensorType(input), out = tensorType(output);
  if (in.hasStaticShape() && out.hasStaticShape() &&
      in.getNumElements() != out.getNumElements())
    return op->emitOpError("changes the element count from ")
           << in.getNumElements() << " to " << out.getNumElements();
  return success();
}

LogicalResult SqueezeOp::verify() {
  if (failed(verifySameElementCount(*this, getInput(), getOutput())))
    return failure();
  return verifyShapedByResult(*this, getAxes(), "axes");
}

LogicalResult UnsqueezeOp::verify() {
  if (failed(verifySameElementCount(*this, getInput(), getOutput())))
    return failure();
  return verifyShapedByResult(*this, getAxes(), "axes");
}

LogicalResult SplitOp::verify() {
  int64_t rank = tensorType(getInput()).getRank();
  if (failed(verifyAxis(*this, getAxis(), rank)))
    return failure();
  if (getOutputs().empty())
    return emitOpError("needs at least one result");
  int64_t axis = *normalizeAxis(getAxis(), rank);
  int64_t total = 0;
  bool allStatic = true;
  for (Value out : getOutputs()) {
    if (tensorType(out).getRank() != rank)
      return emitOpError("results must have the input's rank");
    int64_t d = tensorType(out).getShape()[axis];
    if (ShapedType::isDynamic(d))
      allStatic = false;
    else
      total += d;
  }
  int64_t inDim = tensorType(getInput()).getShape()[axis];
  if (allStatic && !ShapedType::isDynamic(inDim) && total != inDim)
    return emitOpError("result sizes along the axis sum to ") << total << ", not " << inDim;
  return verifyShapedByResult(*this, getSplit(), "split");
}

LogicalResult ConstantOfShapeOp::verify() {
  auto value = getValue();
  if (value.getNumElements() != 1)
    return emitOpError("value must hold exactly one element");
  if (value.getElementType() != getElementTypeOrSelf(getOutput()))
    return emitOpError("value element type differs from the result's");
  return verifyShapedByResult(*this, getShape(), "shape");
}

LogicalResult TransposeOp::verify() {
  int64_t rank = tensorType(getInput()).getRank();
  ArrayRef<int64_t> perm = getPerm();
  if ((int64_t)perm.size() != rank)
    return emitOpError("perm has ") << perm.size() << " entries for rank " << rank;
  SmallVector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return emitOpError("perm is not a permutation");
    seen[p] = true;
  }
  auto in = tensorType(getInput()).getShape(), out = tensorType(getOutput()).getShape();
  if ((int64_t)out.size() != rank)
    return emitOpError("result rank must equal the input rank");
  for (int64_t i = 0; i < rank; ++i)
    if (!dimsCompatible(out[i], in[perm[i]]))
      return emitOpError("result dim ") << i << " should be " << in[perm[i]];
  return success();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  int64_t rank = tensorType(getOutput()).getRank();
  if (failed(verifyAxis(*this, getAxis(), rank)))
    return failure();
  int64_t axis = *normalizeAxis(getAxis(), rank);
  int64_t total = 0;
  bool allStatic = true;
  for (Value in : getInputs()) {
    auto t = tensorType(in);
    if (t.getRank() != rank)
      return emitOpError("inputs must have the result's rank");
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis && !dimsCompatible(t.getShape()[i], tensorType(getOutput()).getShape()[i]))
        return emitOpError("input dim ") << i << " differs from the result's";
    if (t.isDynamicDim(axis))
      allStatic = false;
    else
      total += t.getShape()[axis];
  }
  int64_t outDim = tensorType(getOutput()).getShape()[axis];
  if (allStatic && !ShapedType::isDynamic(outDim) && total != outDim)
    return emitOpError("input sizes along the axis sum to ") << total << ", not " << outDim;
  return success();
}

LogicalResult SliceOp::verify() {
  bool attrForm = getStarts().has_value();
  if (attrForm != getEnds().has_value() || attrForm != getSteps().has_value())
    return emitOpError("starts, ends and steps attributes come together");
  if (attrForm == bool(getStartsTensor()) || bool(getStartsTensor()) != bool(getEndsTensor()))
    return emitOpError("needs either the starts/ends attributes or operands");
  if (attrForm && (getAxesTensor() || getStepsTensor()))
    return emitOpError("mixes attribute and operand forms");
  if (!attrForm)
    return success();
  int64_t rank = tensorType(getInput()).getRank();
  if ((int64_t)getStarts()->size() != rank || (int64_t)getEnds()->size() != rank ||
      (int64_t)getSteps()->size() != rank)
    return emitOpError("starts, ends and steps need one entry per axis");
  // Copy the ArrayRef out of the optional: ranging over `*getSteps()` would
  // bind to a destroyed temporary.
  ArrayRef<int64_t> starts = *getStarts(), ends = *getEnds(), steps = *getSteps();
  for (int64_t s : steps)
    if (s == 0)
      return emitOpError("steps must be non-zero");
  // Where the input dim is static the attributes are clamped to it (as
  // resolveSlice does) and decide the result dim: folders index the input
  // with them.
  auto inShape = tensorType(getInput()).getShape();
  auto outType = tensorType(getOutput());
  if (outType.getRank() != rank)
    return emitOpError("result rank must equal the input rank");
  SliceParams params{SmallVector<int64_t>(starts), SmallVector<int64_t>(ends),
                     SmallVector<int64_t>(steps)};
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = inShape[d];
    if (ShapedType::isDynamic(dim))
      continue;
    int64_t hi = steps[d] > 0 ? dim : std::max<int64_t>(dim - 1, 0);
    int64_t endLo = steps[d] > 0 ? 0 : -1;
    if (starts[d] < 0 || starts[d] > hi || ends[d] < endLo || ends[d] > hi)
      return emitOpError("start and end of axis ") << d << " are not clamped to its size " << dim;
    int64_t size = dim == 0 ? 0 : params.size(d);
    if (!outType.isDynamicDim(d) && outType.getDimSize(d) != size)
      return emitOpError("result dim ") << d << " should be " << size;
  }
  return success();
}

LogicalResult GatherOp::verify() {
  int64_t rank = tensorType(getInput()).getRank();
  if (failed(verifyAxis(*this, getAxis(), rank)))
    return failure();
  int64_t expected = rank - 1 + tensorType(getIndices()).getRank();
  if (tensorType(getOutput()).getRank() != expected)
    return emitOpError("result rank should be ") << expected;
  // The result shape is input[:axis] + indices + input[axis+1:].
  int64_t axis = *normalizeAxis(getAxis(), rank);
  auto inShape = tensorType(getInput()).getShape();
  SmallVector<int64_t> want(inShape.begin(), inShape.begin() + axis);
  llvm::append_range(want, tensorType(getIndices()).getShape());
  want.append(inShape.begin() + axis + 1, inShape.end());
  auto outShape = tensorType(getOutput()).getShape();
  for (int64_t i = 0; i < expected; ++i)
    if (!dimsCompatible(want[i], outShape[i]))
      return emitOpError("result dim ") << i << " should be " << want[i];
  return success();
}

LogicalResult GatherElementsOp::verify() {
  int64_t rank = tensorType(getInput()).getRank();
  if (tensorType(getIndices()).getRank() != rank)
    return emitOpError("indices must have the input's rank");
  return verifyAxis(*this, getAxis(), rank);
}

LogicalResult PadOp::verify() {
  if (bool(getPadsTensor()) == getPads().has_value())
    return emitOpError("needs exactly one of the 'pads' attribute and operand");
  StringRef mode = getMode();
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return emitOpError("unknown mode '") << mode << "'";
  if (getValue() && tensorType(getValue()).getRank() != 0)
    return emitOpError("the pad value must be a 0-d tensor");
  int64_t rank = tensorType(getInput()).getRank();
  if (getPads() && (int64_t)getPads()->size() != 2 * rank)
    return emitOpError("expects ") << 2 * rank << " pads";
  return success();
}

LogicalResult ResizeOp::verify() {
  int64_t rank = tensorType(getInput()).getRank();
  if (tensorType(getOutput()).getRank() != rank)
    return emitOpError("result rank must equal the input rank");
  if (bool(getScalesTensor()) == getScales().has_value())
    return emitOpError("needs exactly one of the 'scales' attribute and operand");
  if (getScales() && (int64_t)getScales()->size() != rank)
    return emitOpError("expects one scale per axis");
  StringRef mode = getMode();
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return emitOpError("unknown mode '") << mode << "'";
  if (getCoordinateTransformationMode() == "tf_crop_and_resize" && (int64_t)getRoi().size() != 2 * rank)
    return emitOpError("tf_crop_and_resize needs two roi entries per axis");
  return success();
}

LogicalResult RangeOp::verify() {
  for (Value v : {getStart(), getLimit(), getDelta()}) {
    if (tensorType(v).getRank() != 0)
      return emitOpError("start, limit and delta must be 0-d tensors");
    if (getElementTypeOrSelf(v) != getElementTypeOrSelf(getOutput()))
      return emitOpError("start, limit and delta must have the result's element type");
  }
  if (tensorType(getOutput()).getRank() != 1)
    return emitOpError("result must be 1-d");
  return success();
}

LogicalResult ShapeOp::verify() {
  if (tensorType(getOutput()).getRank() != 1)
    return emitOpError("result must be 1-d");
  return success();
}

#define GET_OP_CLASSES
#include "dialects/NN/NNOps.cpp.inc"
