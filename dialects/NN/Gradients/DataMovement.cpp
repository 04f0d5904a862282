//===- DataMovement.cpp - gradients of reshapes, slices, gathers ... ------===//
//
// Data movement is linear: each rule moves the cotangent back where the
// forward took it from (the inverse permutation, the slice of a concat, a
// zero-padded interleave for a strided slice), and sums where the forward
// copied (expand, tile, repeated gather indices).
//
//===----------------------------------------------------------------------===//
#include "dialects/NN/Gradients/GradientBuilder.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace nncc::nn;
using namespace nncc::nn::grad;

namespace {

using Grads = SmallVectorImpl<Value>;

/// The cotangent of operand 0 from `f`; the other operands (shapes, axes,
/// indices) get none. Non-float data gets none either.
template <typename F> LogicalResult firstOperand(Operation *op, GradBuilder &g, Grads &dxs, F f) {
  Value x = op->getOperand(0);
  dxs.push_back(isFloatTensor(x) ? f(x) : Value());
  dxs.append(op->getNumOperands() - 1, Value());
  return success();
}

/// Reshape, Squeeze, Unsqueeze: the cotangent reshaped back.
template <typename OpT> LogicalResult reshapeRule(OpT op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  return firstOperand(op, g, dxs, [&](Value x) { return g.reshape(dys[0], g.shape(x)); });
}

LogicalResult expandRule(ExpandOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  return firstOperand(op, g, dxs, [&](Value x) { return g.sumToShape(dys[0], g.shape(x)); });
}

/// Tile: output axis d is [repeats, size]; sum over the repeats.
LogicalResult tileRule(TileOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  return firstOperand(op, g, dxs, [&](Value x) {
    SmallVector<int64_t> split, axes;
    for (auto [d, size] : llvm::enumerate(g.shape(x))) {
      split.append({g.shape(dys[0])[d] / std::max<int64_t>(size, 1), size});
      axes.push_back(2 * d);
    }
    return g.reshape(g.reduceSum(g.reshape(dys[0], split), axes, /*keepdims=*/false), g.shape(x));
  });
}

LogicalResult transposeRule(TransposeOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  return firstOperand(op, g, dxs, [&](Value) {
    ArrayRef<int64_t> perm = op.getPerm();
    SmallVector<int64_t> inverse(perm.size());
    for (auto [i, p] : llvm::enumerate(perm))
      inverse[p] = i;
    return g.transpose(dys[0], inverse);
  });
}

LogicalResult concatRule(ConcatOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  auto s = g.shape(dys[0]);
  int64_t axis = *normalizeAxis(op.getAxis(), s.size()), offset = 0;
  for (Value x : op.getInputs()) {
    SmallVector<int64_t> starts(s.size(), 0), steps(s.size(), 1);
    starts[axis] = offset;
    offset += g.shape(x)[axis];
    dxs.push_back(isFloatTensor(x) ? g.slice(dys[0], starts, g.shape(x), steps) : Value());
  }
  return success();
}

LogicalResult splitRule(SplitOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  return firstOperand(op, g, dxs, [&](Value x) {
    SmallVector<Value> parts;
    for (auto [dy, out] : llvm::zip(dys, op.getOutputs()))
      parts.push_back(orZeros(g, dy, out));
    return g.concat(parts, *normalizeAxis(op.getAxis(), g.type(x).getRank()));
  });
}

/// Slice: per axis, a negative step reads the axis reversed; a step s > 1
/// interleaves s - 1 zeros after each element; zero padding then puts the
/// elements back at their offsets.
LogicalResult sliceRule(SliceOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  if (!op.getStarts())
    return op.emitOpError("gradient: the slice bounds must be known at compile time");
  ArrayRef<int64_t> starts = *op.getStarts(), steps = *op.getSteps();
  return firstOperand(op, g, dxs, [&](Value x) {
    auto sx = g.shape(x);
    Value dy = dys[0];
    if (g.type(dy).getNumElements() == 0)
      return g.zeros(g.type(x));
    int64_t rank = sx.size();
    SmallVector<int64_t> pads(2 * rank, 0);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t n = g.shape(dy)[d], step = steps[d], low = starts[d];
      if (step < 0) {
        dy = g.reverse(dy, d);
        low = starts[d] + (n - 1) * step;
        step = -step;
      }
      if (step > 1 && n > 1) {
        SmallVector<int64_t> wide(g.shape(dy));
        wide.insert(wide.begin() + d + 1, 1);
        SmallVector<int64_t> interleave(2 * (rank + 1), 0);
        interleave[rank + 1 + d + 1] = step - 1;
        Value spread = g.pad(g.reshape(dy, wide), interleave);
        SmallVector<int64_t> merged(g.shape(dy));
        merged[d] = n * step;
        SmallVector<int64_t> zeros(rank, 0), ones(rank, 1), sizes(merged);
        sizes[d] = (n - 1) * step + 1;
        dy = g.slice(g.reshape(spread, merged), zeros, sizes, ones);
      }
      pads[d] = low;
      pads[rank + d] = sx[d] - low - g.shape(dy)[d];
    }
    return g.pad(dy, pads);
  });
}

/// Constant Pad: the cotangent of the input is the un-padded window (crops,
/// negative pads, become zero pads); the pad value collects the rest.
LogicalResult padRule(PadOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  if (op.getMode() != "constant")
    return op.emitOpError("gradient: only constant padding has a rule, not '") << op.getMode() << "'";
  if (!op.getPads())
    return op.emitOpError("gradient: the pads must be known at compile time");
  ArrayRef<int64_t> pads = *op.getPads();
  Value x = op.getInput(), dy = dys[0];
  if (!isFloatTensor(x)) {
    dxs.append(op->getNumOperands(), Value());
    return success();
  }
  auto sx = g.shape(x);
  int64_t rank = sx.size();
  SmallVector<int64_t> starts, sizes, ones(rank, 1), crops(2 * rank);
  for (int64_t d = 0; d < rank; ++d) {
    starts.push_back(std::max<int64_t>(pads[d], 0));
    sizes.push_back(sx[d] + std::min<int64_t>(pads[d], 0) + std::min<int64_t>(pads[rank + d], 0));
    crops[d] = -std::min<int64_t>(pads[d], 0);
    crops[rank + d] = -std::min<int64_t>(pads[rank + d], 0);
  }
  Value inner = g.slice(dy, starts, sizes, ones);
  dxs.push_back(g.pad(inner, crops));
  if (op.getValue()) {
    auto all = [&](Value v) { return llvm::to_vector(llvm::seq<int64_t>(0, g.type(v).getRank())); };
    Value padded = g.sub(g.reduceSum(dy, all(dy), false), g.reduceSum(inner, all(inner), false));
    dxs.push_back(isFloatTensor(op.getValue()) ? padded : Value());
  }
  return success();
}

/// 0, 1, ..., n-1 of `indexType` along axis `axis` of a rank-`rank` tensor
/// whose other dims are 1: compared with indices, it makes one-hot masks.
Value iotaAlong(GradBuilder &g, Type indexType, int64_t rank, int64_t axis, int64_t n) {
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = n;
  auto type = RankedTensorType::get(shape, indexType);
  SmallVector<APInt> values;
  for (int64_t j = 0; j < n; ++j)
    values.push_back(APInt(indexType.getIntOrFloatBitWidth(), j, /*isSigned=*/true));
  return ConstantOp::create(g.b, g.loc, type, DenseElementsAttr::get(type, values));
}

/// ONNX indices into an axis of size n, negative ones wrapped to [0, n).
Value wrapIndices(GradBuilder &g, Value indices, int64_t n) {
  auto scalarType = RankedTensorType::get({}, g.type(indices).getElementType());
  auto scalar = [&](int64_t v) {
    return ConstantOp::create(g.b, g.loc, scalarType,
                              DenseElementsAttr::get(scalarType, g.b.getIntegerAttr(scalarType.getElementType(), v)));
  };
  Value negative = g.less(indices, scalar(0));
  Value shifted = g.add(indices, scalar(n));
  return g.where(negative, shifted, indices);
}

/// Gather along `axis`: dx[pre, j, post] = Σ_i [idx_i = j] dy[pre, i, post],
/// a MatMul by the one-hot matrix of the (wrapped) indices, so repeated
/// indices accumulate.
LogicalResult gatherRule(GatherOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput(), indices = op.getIndices(), dy = dys[0];
  if (!isFloatTensor(x)) {
    dxs.append(2, Value());
    return success();
  }
  auto sx = g.shape(x);
  int64_t axis = *normalizeAxis(op.getAxis(), sx.size()), n = sx[axis];
  int64_t count = g.type(indices).getNumElements(), pre = 1, post = 1;
  for (int64_t d = 0; d < axis; ++d)
    pre *= sx[d];
  for (int64_t d = axis + 1; d < (int64_t)sx.size(); ++d)
    post *= sx[d];
  Value rows = iotaAlong(g, g.type(indices).getElementType(), 2, 0, n);
  Value wrapped = wrapIndices(g, g.reshape(indices, {1, count}), n);
  Value oneHot = g.cast(g.equal(rows, wrapped), g.type(x).getElementType());
  Value product = g.matmul(oneHot, g.reshape(dy, {pre, count, post}));
  dxs.push_back(g.reshape(product, sx));
  dxs.push_back(Value());
  return success();
}

/// The cotangent of x for y = x taken along `axis` at `indices` (indices and
/// y share a shape, equal to x's outside the axis): dx[.., j, ..] =
/// Σ_i [idx[.., i, ..] = j] dy[.., i, ..], a one-hot [.., I, n, ..] mask
/// times dy summed over I.
FailureOr<Value> scatterAlongAxis(Operation *op, GradBuilder &g, Value dy, Value indices, Value x, int64_t axis) {
  auto sx = g.shape(x), si = g.shape(indices);
  int64_t rank = sx.size(), n = sx[axis];
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && sx[d] != si[d])
      return op->emitOpError("gradient: the indices must have the input's shape outside the axis");
  Value rows = iotaAlong(g, g.type(indices).getElementType(), rank + 1, axis + 1, n);
  SmallVector<int64_t> wide(si);
  wide.insert(wide.begin() + axis + 1, 1);
  Value wrapped = wrapIndices(g, g.reshape(indices, wide), n);
  Value oneHot = g.cast(g.equal(wrapped, rows), g.type(x).getElementType());
  return g.reduceSum(g.mul(oneHot, g.reshape(dy, wide)), {axis}, /*keepdims=*/false);
}

LogicalResult gatherElementsRule(GatherElementsOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput();
  if (!isFloatTensor(x)) {
    dxs.append(2, Value());
    return success();
  }
  auto dx = scatterAlongAxis(op, g, dys[0], op.getIndices(), x, *normalizeAxis(op.getAxis(), g.type(x).getRank()));
  if (failed(dx))
    return failure();
  dxs.append({*dx, Value()});
  return success();
}

/// TopK's values are the input taken along the axis at its indices.
LogicalResult topKRule(TopKOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput();
  if (!isFloatTensor(x) || !dys[0]) {
    dxs.append(op->getNumOperands(), Value());
    return success();
  }
  auto dx = scatterAlongAxis(op, g, dys[0], op.getIndices(), x, *normalizeAxis(op.getAxis(), g.type(x).getRank()));
  if (failed(dx))
    return failure();
  dxs.push_back(*dx);
  dxs.append(op->getNumOperands() - 1, Value());
  return success();
}

/// The per-axis factors of a Resize: its `scales` attribute, or the constant
/// its scales operand folds to.
std::optional<SmallVector<double>> resizeScales(ResizeOp op) {
  if (auto scales = op.getScales())
    return SmallVector<double>(scales->begin(), scales->end());
  DenseFPElementsAttr values;
  if (!matchPattern(op.getScalesTensor(), m_Constant(&values)))
    return std::nullopt;
  SmallVector<double> scales;
  for (APFloat v : values.getValues<APFloat>())
    scales.push_back(v.convertToDouble());
  return scales;
}

/// Resize is linear in x and separable: along each resized axis a, y = A_a x
/// with a constant [out, in] interpolation matrix (nearest, linear and cubic
/// alike, whatever the coordinate transformation), so dx = Π_a A_aᵀ dy, one
/// MatMul per axis. A_aᵀ is the same Resize applied along that axis to the
/// identity matrix: the forward op's own semantics, not a second copy of them.
/// tf_crop_and_resize's extrapolation adds a constant, so it is refused.
LogicalResult resizeRule(ResizeOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput();
  dxs.push_back(Value());
  if (op.getScalesTensor())
    dxs.push_back(Value());
  if (!isFloatTensor(x))
    return success();
  if (op.getCoordinateTransformationMode() == "tf_crop_and_resize")
    return op.emitOpError("gradient: tf_crop_and_resize is not differentiable here (its extrapolated values are constants)");
  std::optional<SmallVector<double>> scales = resizeScales(op);
  if (!scales)
    return op.emitOpError("gradient: the scales must be constant");
  auto sx = g.shape(x), sy = g.shape(op.getOutput());
  int64_t rank = sx.size();
  Type elem = g.type(x).getElementType();
  Value grad = dys[0];
  for (int64_t a = 0; a < rank; ++a) {
    if (sx[a] == sy[a] && (*scales)[a] == 1.0)
      continue;
    int64_t in = sx[a], out = sy[a];
    // identity [in, in] resized along its second axis: [in, out] = A_aᵀ.
    auto eyeType = RankedTensorType::get({in, in}, elem);
    SmallVector<Attribute> ones;
    for (int64_t i = 0; i < in * in; ++i)
      ones.push_back(FloatAttr::get(elem, i / in == i % in ? 1.0 : 0.0));
    Value eye = ConstantOp::create(g.b, g.loc, eyeType, DenseElementsAttr::get(eyeType, ones));
    Value basis = ResizeOp::create(g.b, g.loc, RankedTensorType::get({in, out}, elem), eye, Value(),
                                   g.b.getDenseF64ArrayAttr({1.0, (*scales)[a]}), g.b.getDenseF64ArrayAttr({}),
                                   op.getModeAttr(), op.getCoordinateTransformationModeAttr(), op.getNearestModeAttr(),
                                   op.getCubicCoeffAAttr(), op.getExcludeOutsideAttr(), op.getExtrapolationValueAttr());
    // grad with axis a last, times A_a ([out, in]), axis a back in place.
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < rank; ++d)
      if (d != a)
        perm.push_back(d);
    perm.push_back(a);
    SmallVector<int64_t> inverse(rank);
    for (int64_t d = 0; d < rank; ++d)
      inverse[perm[d]] = d;
    Value moved = g.matmul(g.transpose(grad, perm), g.transposeLast2(basis));
    grad = g.transpose(moved, inverse);
  }
  dxs[0] = grad;
  return success();
}

} // namespace

void grad::registerDataMovement(MLIRContext *context) {
  attach<ReshapeOp, reshapeRule<ReshapeOp>>(context);
  attach<SqueezeOp, reshapeRule<SqueezeOp>>(context);
  attach<UnsqueezeOp, reshapeRule<UnsqueezeOp>>(context);
  attach<ExpandOp, expandRule>(context);
  attach<TileOp, tileRule>(context);
  attach<TransposeOp, transposeRule>(context);
  attach<ConcatOp, concatRule>(context);
  attach<SplitOp, splitRule>(context);
  attach<SliceOp, sliceRule>(context);
  attach<PadOp, padRule>(context);
  attach<GatherOp, gatherRule>(context);
  attach<GatherElementsOp, gatherElementsRule>(context);
  attach<TopKOp, topKRule>(context);
  attach<ResizeOp, resizeRule>(context);
}
