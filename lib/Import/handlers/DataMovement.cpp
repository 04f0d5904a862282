/// Handlers of data-movement and shape ops: Reshape, Transpose, Concat,
/// Split, Slice, Gather, Pad, Resize, Constant and the shape computations.
#include "lib/Import/handlers/HandlerUtils.h"
#include "lib/Import/SizeLimits.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;

namespace nncc::import {
namespace {

/// Fails naming the input when shape input `i` holds more entries than a
/// tensor may have dims (shape inference skips such nodes, see
/// shapeInferenceSchemas).
LogicalResult checkShapeLength(NodeContext &ctx, size_t i) {
  RankedTensorType type = ctx.inputType(i);
  if (!type || type.getRank() != 1 || type.isDynamicDim(0) || type.getDimSize(0) <= kMaxRank)
    return success();
  return ctx.error(llvm::formatv("shape input '{0}' has {1} entries; nncc's limit is {2} dims "
                                 "per tensor",
                                 ctx.node().input(i), type.getDimSize(0), kMaxRank));
}

/// Ops whose ONNX shape input is implied by a static result type: the operand
/// is passed only while the result is dynamic.
template <typename OpTy>
LogicalResult shapedByResult(NodeContext &ctx, SmallVectorImpl<Value> &out, size_t shapeInput,
                             ArrayRef<NamedAttribute> attrs = {}) {
  if (failed(checkShapeLength(ctx, shapeInput)))
    return failure();
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  SmallVector<Value> operands;
  for (size_t i = 0; i < shapeInput; ++i)
    operands.push_back(ctx.input(i));
  if (!type->hasStaticShape()) {
    if (!ctx.input(shapeInput))
      return ctx.error("the result shape is not static and no shape input is given");
    operands.push_back(ctx.input(shapeInput));
  }
  out.push_back(build<OpTy>(ctx, *type, operands, attrs));
  return success();
}

/// Reshape's result shape from a constant shape input that shape inference
/// left unevaluated: Shape of a static tensor, as ONNX's function expansions
/// write it (SoftmaxCrossEntropyLoss), which lib/Import/FoldShapes.cpp has
/// made a Constant. 0 copies the input dim (unless allowzero), -1 takes what
/// is left.
std::optional<SmallVector<int64_t>> knownReshapeTarget(NodeContext &ctx) {
  auto input = ctx.inputType(0);
  if (!input.hasStaticShape())
    return std::nullopt;
  std::optional<SmallVector<int64_t>> dims = ctx.constInts(1);
  if (!dims)
    return std::nullopt;
  bool allowZero = ctx.attrInt("allowzero", 0) != 0;
  int64_t known = 1, inferred = -1;
  for (auto [i, d] : llvm::enumerate(*dims)) {
    if (d == 0 && !allowZero) {
      if ((int64_t)i >= input.getRank())
        return std::nullopt;
      d = input.getShape()[i];
    }
    if (d == -1) {
      if (inferred >= 0)
        return std::nullopt;
      inferred = i;
    } else if (d < 0) {
      return std::nullopt;
    } else {
      known *= d;
    }
  }
  if (inferred >= 0) {
    if (known == 0 || input.getNumElements() % known)
      return std::nullopt;
    (*dims)[inferred] = input.getNumElements() / known;
  }
  return dims;
}

LogicalResult reshape(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  if (!ctx.resultTypeOr(0, RankedTensorType()))
    if (auto target = knownReshapeTarget(ctx)) {
      auto type = RankedTensorType::get(*target, ctx.inputType(0).getElementType());
      if (type.getNumElements() != ctx.inputType(0).getNumElements())
        return ctx.error("the shape input does not keep the element count");
      out.push_back(build<nn::ReshapeOp>(ctx, type, ctx.input(0)));
      return success();
    }
  return shapedByResult<nn::ReshapeOp>(ctx, out, 1);
}

LogicalResult flatten(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto input = ctx.inputType(0);
  int64_t rank = input.getRank();
  int64_t axis = ctx.attrInt("axis", 1);
  if (axis < -rank || axis > rank)
    return ctx.error("axis " + llvm::Twine(axis) + " is out of range");
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t &part = i < axis ? outer : inner;
    int64_t d = input.getShape()[i];
    part = (ShapedType::isDynamic(d) || ShapedType::isDynamic(part)) ? ShapedType::kDynamic
                                                                     : part * d;
  }
  auto type = RankedTensorType::get({outer, inner}, input.getElementType());
  if (!type.hasStaticShape())
    return ctx.error("Flatten needs a static input shape");
  out.push_back(build<nn::ReshapeOp>(ctx, type, ctx.input(0)));
  return success();
}

LogicalResult transpose(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto input = ctx.inputType(0);
  SmallVector<int64_t> reversed;
  for (int64_t i = input.getRank() - 1; i >= 0; --i)
    reversed.push_back(i);
  SmallVector<int64_t> perm = ctx.attrInts("perm", reversed);
  if ((int64_t)perm.size() != input.getRank())
    return ctx.error("perm has " + llvm::Twine(perm.size()) + " entries for rank " +
                     llvm::Twine(input.getRank()));
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= input.getRank())
      return ctx.error("perm entry " + llvm::Twine(p) + " is out of range");
    shape.push_back(input.getShape()[p]);
  }
  auto type = ctx.resultTypeOr(0, RankedTensorType::get(shape, input.getElementType()));
  out.push_back(build<nn::TransposeOp>(ctx, type, ctx.input(0), {i64ArrayAttr(ctx, "perm", perm)}));
  return success();
}

LogicalResult concat(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (ctx.numInputs() == 0 || failed(requireInputs(ctx, ctx.numInputs())))
    return ctx.error("needs inputs");
  auto axis = axisAttr(ctx, "axis", 0, ctx.inputType(0).getRank());
  auto type = ctx.resultType(0);
  if (failed(axis) || failed(type))
    return failure();
  SmallVector<Value> inputs;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    inputs.push_back(ctx.input(i));
  out.push_back(build<nn::ConcatOp>(ctx, *type, inputs, {i64Attr(ctx, "axis", *axis)}));
  return success();
}

LogicalResult split(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto axis = axisAttr(ctx, "axis", 0, ctx.inputType(0).getRank());
  if (failed(axis))
    return failure();
  SmallVector<Type> types;
  bool allStatic = true;
  for (size_t i = 0; i < ctx.numOutputs(); ++i) {
    auto type = ctx.resultType(i);
    if (failed(type))
      return failure();
    allStatic &= type->hasStaticShape();
    types.push_back(*type);
  }
  SmallVector<Value> operands{ctx.input(0)};
  if (!allStatic) {
    if (!ctx.input(1))
      return ctx.error("result shapes are not static and no split input is given");
    operands.push_back(ctx.input(1));
  }
  auto op = build<nn::SplitOp>(ctx, types, operands, {i64Attr(ctx, "axis", *axis)});
  out.append(op.getResults().begin(), op.getResults().end());
  return success();
}

/// Slice: constant parameters are resolved into per-axis attributes; run-time
/// ones stay operands (opset 10+ inputs).
LogicalResult slice(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 3)))
    return failure();
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  auto starts = ctx.constInts(1), ends = ctx.constInts(2);
  auto axes = ctx.input(3) ? ctx.constInts(3) : std::optional(SmallVector<int64_t>());
  auto steps = ctx.input(4) ? ctx.constInts(4) : std::optional(SmallVector<int64_t>());
  auto inputType = ctx.inputType(0);
  if (starts && ends && axes && steps && inputType.hasStaticShape()) {
    auto params = nn::resolveSlice(inputType.getShape(), *starts, *ends, *axes, *steps);
    if (!params)
      return ctx.error(llvm::toString(params.takeError()));
    auto &b = ctx.builder();
    out.push_back(nn::SliceOp::create(b, ctx.loc(), *type, ctx.input(0), Value(), Value(),
                                      Value(), Value(), b.getDenseI64ArrayAttr(params->starts),
                                      b.getDenseI64ArrayAttr(params->ends),
                                      b.getDenseI64ArrayAttr(params->steps)));
    return success();
  }
  out.push_back(nn::SliceOp::create(ctx.builder(), ctx.loc(), *type, ctx.input(0), ctx.input(1),
                                    ctx.input(2), ctx.input(3), ctx.input(4), nullptr, nullptr,
                                    nullptr));
  return success();
}

/// Constant indices must lie in [-size, size) along the axis: the kernels
/// clamp, which would return a wrong row where onnxruntime refuses the model.
LogicalResult checkConstIndices(NodeContext &ctx, int64_t axis) {
  int64_t size = ctx.inputType(0).getDimSize(axis);
  auto indices = ctx.constInput(1);
  if (!indices || ShapedType::isDynamic(size) || !isa<IntegerType>(indices->getElementType()))
    return success();
  for (const APInt &value : indices->getValues<APInt>()) {
    int64_t index = value.getSExtValue();
    if (index < -size || index >= size)
      return ctx.error(llvm::formatv("index {0} in '{1}' is out of range [{2}, {3}] for axis {4} "
                                     "of '{5}'",
                                     index, ctx.node().input(1), -size, size - 1, axis,
                                     ctx.node().input(0)));
  }
  return success();
}

template <typename OpTy>
LogicalResult gather(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto axis = axisAttr(ctx, "axis", 0, ctx.inputType(0).getRank());
  auto type = ctx.resultType(0);
  if (failed(axis) || failed(type) || failed(checkConstIndices(ctx, *axis)))
    return failure();
  out.push_back(build<OpTy>(ctx, *type, {ctx.input(0), ctx.input(1)},
                            {i64Attr(ctx, "axis", *axis)}));
  return success();
}

/// Squeeze/Unsqueeze with a static result are reshapes.
template <typename OpTy>
LogicalResult squeeze(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  if (type->hasStaticShape()) {
    out.push_back(build<nn::ReshapeOp>(ctx, *type, ctx.input(0)));
    return success();
  }
  if (!ctx.input(1))
    return ctx.error("the result shape is not static and axes are not given as an input");
  out.push_back(build<OpTy>(ctx, *type, {ctx.input(0), ctx.input(1)}));
  return success();
}

LogicalResult shape(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  int64_t rank = ctx.inputType(0).getRank();
  int64_t start = ctx.attrInt("start", 0), end = ctx.attrInt("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  auto type = RankedTensorType::get({std::max<int64_t>(0, end - start)},
                                    ctx.builder().getI64Type());
  out.push_back(build<nn::ShapeOp>(ctx, type, ctx.input(0),
                                   {i64Attr(ctx, "start", start), i64Attr(ctx, "end", end)}));
  return success();
}

LogicalResult size(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  out.push_back(build<nn::SizeOp>(ctx, RankedTensorType::get({}, ctx.builder().getI64Type()),
                                  ctx.input(0)));
  return success();
}

LogicalResult constant(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  auto &b = ctx.builder();
  if (const auto *value = ctx.attr("value")) {
    auto attr = ctx.convertTensor(value->t());
    if (!attr)
      return ctx.error(llvm::toString(attr.takeError()));
    out.push_back(ctx.constant(*attr));
  } else if (const auto *f = ctx.attr("value_float")) {
    out.push_back(ctx.scalar(b.getF32Type(), f->f()));
  } else if (const auto *i = ctx.attr("value_int")) {
    out.push_back(ctx.constantI64({i->i()}, {}));
  } else if (const auto *fs = ctx.attr("value_floats")) {
    SmallVector<float> values(fs->floats().begin(), fs->floats().end());
    auto type = RankedTensorType::get({(int64_t)values.size()}, b.getF32Type());
    out.push_back(ctx.constant(DenseElementsAttr::get(type, ArrayRef<float>(values))));
  } else if (const auto *is = ctx.attr("value_ints")) {
    SmallVector<int64_t> values(is->ints().begin(), is->ints().end());
    out.push_back(ctx.constantI64(values, {(int64_t)values.size()}));
  } else {
    return ctx.error("only tensor, float and int values are supported (not sparse or strings)");
  }
  return success();
}

/// Fails naming the node when `type` is static (the op folds into a constant
/// that the module stores) and larger than kMaxMaterializedBytes.
LogicalResult checkMaterializedSize(NodeContext &ctx, RankedTensorType type) {
  if (!type.hasStaticShape())
    return success();
  if (auto problem = tensorSizeProblem(type, kMaxMaterializedBytes))
    return ctx.error("its result has " + *problem +
                     " (it folds into a constant, which the module stores)");
  return success();
}

LogicalResult constantOfShape(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  DenseElementsAttr value;
  if (const auto *attr = ctx.attr("value")) {
    auto converted = ctx.convertTensor(attr->t());
    if (!converted)
      return ctx.error(llvm::toString(converted.takeError()));
    value = *converted;
    if (value.getNumElements() != 1)
      return ctx.error("attribute 'value' must hold one element");
  } else {
    value = DenseElementsAttr::get(RankedTensorType::get({1}, ctx.builder().getF32Type()), 0.0f);
  }
  if (failed(checkMaterializedSize(ctx, *type)))
    return failure();
  return shapedByResult<nn::ConstantOfShapeOp>(ctx, out, 0, {namedAttr(ctx, "value", value)});
}

/// Whether `value` is one value repeated that the folders know as such: a
/// splat nn.constant, a ConstantOfShape, or a reshape or expand of one.
bool isFoldableSplat(Value value) {
  Operation *op = value.getDefiningOp();
  if (auto constant = dyn_cast_or_null<nn::ConstantOp>(op))
    return constant.getValue().isSplat();
  if (isa_and_nonnull<nn::ConstantOfShapeOp>(op))
    return true;
  if (isa_and_nonnull<nn::ReshapeOp, nn::ExpandOp>(op))
    return isFoldableSplat(op->getOperand(0));
  return false;
}

LogicalResult expand(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  // An Expand of a splat with a static result folds into a constant.
  if (isFoldableSplat(ctx.input(0))) {
    auto type = ctx.resultType(0);
    if (failed(type) || failed(checkMaterializedSize(ctx, *type)))
      return failure();
  }
  return shapedByResult<nn::ExpandOp>(ctx, out, 1);
}

LogicalResult tile(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  return shapedByResult<nn::TileOp>(ctx, out, 1);
}

LogicalResult range(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 3)))
    return failure();
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  // ONNX leaves the length of a Range with delta 0 undefined (a division by
  // zero); a model that means it is broken.
  auto intDelta = ctx.constInts(2);
  auto floatDelta = ctx.constFloats(2);
  if ((intDelta && llvm::is_contained(*intDelta, 0)) ||
      (floatDelta && llvm::is_contained(*floatDelta, 0.0)))
    return ctx.error("delta '" + ctx.node().input(2) + "' is 0");
  // libonnx computes limit - start in int64 unchecked: Range(-2^62, 2^62, 1)
  // got 0 elements. The exact length must agree with the inferred one.
  auto start = ctx.constInts(0), limit = ctx.constInts(1);
  std::optional<int64_t> length;
  if (start && limit && intDelta && start->size() == 1 && limit->size() == 1 &&
      intDelta->size() == 1 && type->getRank() == 1) {
    APInt span = APInt(128, (*limit)[0], /*isSigned=*/true) - APInt(128, (*start)[0], true);
    APInt delta(128, (*intDelta)[0], /*isSigned=*/true);
    APInt count = span.sdiv(delta);
    if (!span.srem(delta).isZero() && span.isNegative() == delta.isNegative())
      count += 1;
    if (count.isNegative())
      count = 0;
    if (!count.isSignedIntN(64))
      return ctx.error("its start, limit and delta make more elements than int64 can count");
    length = count.getSExtValue();
    if (!type->isDynamicDim(0) && type->getDimSize(0) != count.getSExtValue())
      return ctx.error(llvm::formatv("its start, limit and delta make {0} elements; shape "
                                     "inference gave {1}",
                                     count.getSExtValue(), type->getDimSize(0)));
  }
  // Float bounds that only fold in the importer (computed from a bound
  // input) give the length shape inference could not: ceil((limit - start) /
  // delta), in the inputs' float type.
  auto foldedFloat = [&](size_t i) -> std::optional<double> {
    auto attr = ctx.foldedInput(i);
    if (!attr || attr->getNumElements() != 1 || !isa<FloatType>(attr->getElementType()))
      return std::nullopt;
    return (*attr->getValues<APFloat>().begin()).convertToDouble();
  };
  RankedTensorType resultType = *type;
  if (type->getRank() == 1 && type->isDynamicDim(0)) {
    auto fStart = foldedFloat(0), fLimit = foldedFloat(1), fDelta = foldedFloat(2);
    if (!length && fStart && fLimit && fDelta && *fDelta != 0) {
      double count = type->getElementType().isF32()
                         ? std::ceil(((float)*fLimit - (float)*fStart) / (float)*fDelta)
                         : std::ceil((*fLimit - *fStart) / *fDelta);
      if (!std::isfinite(count) || count > (double)(int64_t(1) << 40))
        return ctx.error("its start, limit and delta make too many elements");
      length = (int64_t)count;
    }
    if (length)
      resultType = type->clone({std::max<int64_t>(*length, 0)});
  }
  out.push_back(build<nn::RangeOp>(ctx, resultType, {ctx.input(0), ctx.input(1), ctx.input(2)}));
  return success();
}

/// Pad (opset 11+): pads and the optional axes (18+) fold into the full-rank
/// `pads` attribute when constant.
LogicalResult pad(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  std::string mode = ctx.attrString("mode", "constant");
  int64_t rank = ctx.inputType(0).getRank();
  auto pads = ctx.constInts(1);
  std::optional<SmallVector<int64_t>> axes;
  if (ctx.input(3)) {
    axes = ctx.constInts(3);
    if (!axes)
      return ctx.error("axes must be a constant");
  }
  Value value = ctx.input(2);
  if (value && cast<RankedTensorType>(value.getType()).getRank() == 1)
    value = build<nn::ReshapeOp>(
        ctx, RankedTensorType::get({}, ctx.inputType(0).getElementType()), value);
  if (!pads) {
    if (axes)
      return ctx.error("run-time pads with axes are not supported");
    out.push_back(nn::PadOp::create(ctx.builder(), ctx.loc(), *type, ctx.input(0), ctx.input(1),
                                    value, nullptr, ctx.builder().getStringAttr(mode)));
    return success();
  }
  SmallVector<int64_t> full(2 * rank, 0);
  if (axes) {
    if (pads->size() != 2 * axes->size())
      return ctx.error("pads needs two entries per axis");
    for (size_t i = 0; i < axes->size(); ++i) {
      auto axis = nn::normalizeAxis((*axes)[i], rank);
      if (!axis)
        return ctx.error("pad axis " + llvm::Twine((*axes)[i]) + " is out of range");
      full[*axis] = (*pads)[i];
      full[rank + *axis] = (*pads)[axes->size() + i];
    }
  } else {
    if ((int64_t)pads->size() != 2 * rank)
      return ctx.error("pads has " + llvm::Twine(pads->size()) + " entries for rank " +
                       llvm::Twine(rank));
    full = *pads;
  }
  out.push_back(nn::PadOp::create(ctx.builder(), ctx.loc(), *type, ctx.input(0), Value(), value,
                                  ctx.builder().getDenseI64ArrayAttr(full),
                                  ctx.builder().getStringAttr(mode)));
  return success();
}

/// Resize (opset 11+): `sizes` become scales (output / input) against the
/// inferred static result; constant `scales` are kept as given.
LogicalResult resize(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  if (ctx.attrInt("antialias", 0) != 0)
    return ctx.error("antialias=1 is not supported");
  if (ctx.hasAttr("axes"))
    return ctx.error("the axes attribute is not supported");
  std::string policy = ctx.attrString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch")
    return ctx.error("keep_aspect_ratio_policy='" + policy + "' is not supported");
  if (failed(checkShapeLength(ctx, 3)))
    return failure();
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  auto input = ctx.inputType(0);
  int64_t rank = input.getRank();
  std::string mode = ctx.attrString("mode", "nearest");
  std::string coord = ctx.attrString("coordinate_transformation_mode", "half_pixel");
  // Opset 19's half_pixel_symmetric would otherwise be taken for half_pixel.
  if (!llvm::is_contained({"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                           "tf_half_pixel_for_nn", "tf_crop_and_resize"},
                          coord))
    return ctx.error("coordinate_transformation_mode '" + coord + "' is not supported");

  SmallVector<double> roi;
  if (ctx.input(1) && cast<RankedTensorType>(ctx.input(1).getType()).getNumElements() != 0) {
    auto values = ctx.constFloats(1);
    if (!values)
      return ctx.error("roi must be a constant");
    roi = *values;
  }
  if (roi.empty())
    for (int64_t i = 0; i < 2 * rank; ++i)
      roi.push_back(i < rank ? 0.0 : 1.0);
  if ((int64_t)roi.size() != 2 * rank)
    return ctx.error("roi needs two entries per axis");

  auto &b = ctx.builder();
  auto makeOp = [&](Value scalesTensor, ArrayRef<double> scales) {
    return nn::ResizeOp::create(
        b, ctx.loc(), *type, ctx.input(0), scalesTensor,
        scalesTensor ? DenseF64ArrayAttr() : b.getDenseF64ArrayAttr(scales),
        b.getDenseF64ArrayAttr(roi), b.getStringAttr(mode), b.getStringAttr(coord),
        b.getStringAttr(ctx.attrString("nearest_mode", "round_prefer_floor")),
        b.getF64FloatAttr(ctx.attrFloat("cubic_coeff_a", -0.75)),
        b.getBoolAttr(ctx.attrInt("exclude_outside", 0)),
        b.getF64FloatAttr(ctx.attrFloat("extrapolation_value", 0.0)));
  };

  bool hasScales = ctx.input(2) &&
                   cast<RankedTensorType>(ctx.input(2).getType()).getNumElements() != 0;
  if (hasScales) {
    if (auto scales = ctx.constFloats(2)) {
      if ((int64_t)scales->size() != rank)
        return ctx.error("scales needs one entry per axis");
      out.push_back(makeOp(Value(), *scales));
    } else {
      out.push_back(makeOp(ctx.input(2), {}));
    }
    return success();
  }
  if (!ctx.input(3))
    return ctx.error("one of scales and sizes is required");
  if (!input.hasStaticShape() || !type->hasStaticShape())
    return ctx.error("sizes needs static input and output shapes");
  SmallVector<double> scales;
  for (int64_t i = 0; i < rank; ++i)
    scales.push_back((double)type->getShape()[i] / (double)input.getShape()[i]);
  out.push_back(makeOp(Value(), scales));
  return success();
}

} // namespace

void registerDataMovementHandlers(HandlerRegistry &r) {
  r.add("Reshape", 5, reshape);
  r.add("Flatten", 1, flatten);
  r.add("Transpose", 1, transpose);
  r.add("Concat", 4, concat);
  r.add("Split", 13, split);
  r.add("Slice", 10, slice);
  r.add("Gather", 1, gather<nn::GatherOp>);
  r.add("GatherElements", 11, gather<nn::GatherElementsOp>);
  r.add("Squeeze", 13, squeeze<nn::SqueezeOp>);
  r.add("Unsqueeze", 13, squeeze<nn::UnsqueezeOp>);
  r.add("Shape", 1, shape);
  r.add("Size", 1, size);
  r.add("Constant", 1, constant);
  r.add("ConstantOfShape", 9, constantOfShape);
  r.add("Expand", 8, expand);
  r.add("Tile", 6, tile);
  r.add("Range", 11, range);
  r.add("Pad", 11, pad);
  r.add("Resize", 11, resize);
}

} // namespace nncc::import
