//===- Reduction.cpp - gradients of reductions, softmax and pooling -------===//
#include "dialects/NN/Gradients/GradientBuilder.h"

#include <limits>

using namespace mlir;
using namespace nncc::nn;
using namespace nncc::nn::grad;

namespace {

using Grads = SmallVectorImpl<Value>;

/// The reduced axes of a reduction whose axes are attributes, or failure.
template <typename OpT> FailureOr<SmallVector<int64_t>> reducedAxes(OpT op) {
  if (op.getAxesTensor() || !op.getAxes())
    return op.emitOpError("gradient: the reduced axes must be known at compile time");
  return SmallVector<int64_t>(*op.getAxes());
}

/// The cotangent of a reduction's result reshaped to keep the reduced axes
/// (as 1), ready to broadcast against the input.
Value keepDims(GradBuilder &g, Value v, Value input, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> s(g.shape(input));
  for (int64_t a : axes)
    s[a] = 1;
  return g.reshape(v, s);
}

/// ReduceSum and ReduceMean: the cotangent broadcast back over the reduced
/// axes (divided by their size for the mean).
template <typename OpT, bool Mean>
LogicalResult sumRule(OpT op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput();
  auto axes = reducedAxes(op);
  if (failed(axes))
    return failure();
  if (!isFloatTensor(x)) {
    dxs.append(op->getNumOperands(), Value());
    return success();
  }
  Value dy = keepDims(g, dys[0], x, *axes);
  if (Mean) {
    int64_t count = 1;
    for (int64_t a : *axes)
      count *= g.shape(x)[a];
    dy = g.mul(dy, 1.0 / std::max<int64_t>(count, 1));
  }
  dxs.push_back(g.expand(dy, g.shape(x)));
  return success();
}

/// ReduceMax and ReduceMin: the cotangent goes to the extreme elements,
/// shared evenly among ties.
template <typename OpT> LogicalResult extremeRule(OpT op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput();
  auto axes = reducedAxes(op);
  if (failed(axes))
    return failure();
  if (!isFloatTensor(x)) {
    dxs.append(op->getNumOperands(), Value());
    return success();
  }
  Value hit = g.equal(x, keepDims(g, op.getOutput(), x, *axes));
  Value count = g.reduceSum(g.cast(hit, g.type(x).getElementType()), *axes, /*keepdims=*/true);
  Value dy = g.div(keepDims(g, dys[0], x, *axes), count);
  dxs.push_back(g.where(hit, dy, g.scalarLike(dy, 0)));
  return success();
}

/// ReduceL2: y = sqrt(Σ x²), dx = dy x / y.
LogicalResult l2Rule(ReduceL2Op op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput();
  auto axes = reducedAxes(op);
  if (failed(axes))
    return failure();
  Value y = keepDims(g, op.getOutput(), x, *axes);
  dxs.push_back(g.mul(x, g.div(keepDims(g, dys[0], x, *axes), y)));
  return success();
}

/// CumSum: each input element reaches the outputs after it (before it,
/// reversed), so dx is the cumulative sum of dy the other way round.
LogicalResult cumSumRule(CumSumOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  if (op.getAxisTensor() || !op.getAxis())
    return op.emitOpError("gradient: the axis must be known at compile time");
  if (!isFloatTensor(op.getInput())) {
    dxs.append(op->getNumOperands(), Value());
    return success();
  }
  dxs.push_back(CumSumOp::create(g.b, g.loc, op.getType(), dys[0], Value(), op.getAxisAttr(),
                                 op.getExclusiveAttr(), g.b.getBoolAttr(!op.getReverse())));
  return success();
}

/// ReduceProd: dx = dy y / x (defined where x is not 0).
LogicalResult prodRule(ReduceProdOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput();
  auto axes = reducedAxes(op);
  if (failed(axes))
    return failure();
  if (!isFloatTensor(x)) {
    dxs.append(op->getNumOperands(), Value());
    return success();
  }
  Value y = keepDims(g, op.getOutput(), x, *axes);
  dxs.push_back(g.div(g.mul(keepDims(g, dys[0], x, *axes), y), x));
  return success();
}

int64_t axisOf(Value x, int64_t axis) { return *normalizeAxis(axis, GradBuilder::type(x).getRank()); }

/// Softmax: dx = y (dy - Σ dy y).
LogicalResult softmaxRule(SoftmaxOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value y = op.getOutput(), dy = dys[0];
  int64_t axis = axisOf(y, op.getAxis());
  dxs.push_back(g.mul(y, g.sub(dy, g.reduceSum(g.mul(dy, y), {axis}, /*keepdims=*/true))));
  return success();
}

/// LogSoftmax: dx = dy - exp(y) Σ dy.
LogicalResult logSoftmaxRule(LogSoftmaxOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value y = op.getOutput(), dy = dys[0];
  int64_t axis = axisOf(y, op.getAxis());
  dxs.push_back(g.sub(dy, g.mul(g.exp(y), g.reduceSum(dy, {axis}, /*keepdims=*/true))));
  return success();
}

/// The transposed window sum of a pool: every tap (o, k) of the forward adds
/// `taps`[channel-group tap k][o] to the input element it read, through a
/// depthwise ConvTranspose whose end pads crop what lies past the input
/// (ceil_mode windows) and whose output padding restores rows no window read.
template <typename PoolOp>
Value scatterWindows(GradBuilder &g, PoolOp op, Value taps, Value weight) {
  auto sx = g.shape(op.getInput()), sy = g.shape(op.getOutput());
  ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(), pads = op.getPads(),
                    dilations = op.getDilations();
  int64_t n = (int64_t)kernel.size();
  SmallVector<int64_t> convPads(pads.take_front(n)), endPads, outputPadding;
  for (int64_t i = 0; i < n; ++i) {
    int64_t reach = (sy[2 + i] - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1 - pads[i];
    endPads.push_back(std::max<int64_t>(reach - sx[2 + i], 0));
    outputPadding.push_back(std::max<int64_t>(sx[2 + i] - reach, 0));
  }
  convPads.append(endPads);
  return ConvTransposeOp::create(g.b, g.loc, g.type(op.getInput()), taps, weight, Value(),
                                 op.getStridesAttr(), g.b.getDenseI64ArrayAttr(convPads),
                                 op.getDilationsAttr(), g.b.getDenseI64ArrayAttr(outputPadding),
                                 g.b.getI64IntegerAttr(sx[1]));
}

/// The taps of one axis that an average pool counts for output `o`.
int64_t countedTaps(int64_t o, int64_t size, int64_t kernel, int64_t stride, int64_t padBegin,
                    int64_t padEnd, int64_t dilation, bool includePad) {
  int64_t lo = includePad ? -padBegin : 0, hi = includePad ? size + padEnd : size, count = 0;
  for (int64_t k = 0; k < kernel; ++k) {
    int64_t i = o * stride - padBegin + k * dilation;
    count += i >= lo && i < hi;
  }
  return count;
}

/// AveragePool: dy divided by each window's divisor (as the forward counts
/// it: taps inside the input, or inside the padded input), summed back
/// through the windows.
LogicalResult averagePoolRule(AveragePoolOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  auto sx = g.shape(op.getInput()), sy = g.shape(op.getOutput());
  ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(), pads = op.getPads(),
                    dilations = op.getDilations();
  int64_t n = (int64_t)kernel.size();
  SmallVector<int64_t> divShape{1, 1};
  divShape.append(sy.begin() + 2, sy.end());
  int64_t positions = 1;
  for (int64_t i = 0; i < n; ++i)
    positions *= sy[2 + i];
  SmallVector<double> inverse(positions);
  for (int64_t p = 0; p < positions; ++p) {
    int64_t rest = p, count = 1;
    for (int64_t i = n - 1; i >= 0; --i) {
      int64_t o = rest % sy[2 + i];
      rest /= sy[2 + i];
      count *= countedTaps(o, sx[2 + i], kernel[i], strides[i], pads[i], pads[n + i], dilations[i],
                           op.getCountIncludePad());
    }
    inverse[p] = 1.0 / std::max<int64_t>(count, 1);
  }
  auto elementType = g.type(op.getInput()).getElementType();
  auto divType = RankedTensorType::get(divShape, elementType);
  SmallVector<Attribute> values;
  for (double v : inverse)
    values.push_back(g.b.getFloatAttr(elementType, v));
  Value scale = ConstantOp::create(g.b, g.loc, divType, DenseElementsAttr::get(divType, values));
  SmallVector<int64_t> weightShape{sx[1], 1};
  weightShape.append(kernel.begin(), kernel.end());
  auto weightType = RankedTensorType::get(weightShape, elementType);
  Value ones = ConstantOp::create(g.b, g.loc, weightType,
                                  DenseElementsAttr::get(weightType, g.b.getFloatAttr(elementType, 1.0)));
  dxs.push_back(scatterWindows(g, op, g.mul(dys[0], scale), ones));
  return success();
}

/// MaxPool: for each window tap k, the cotangent goes where the tap's input
/// equals the window's maximum; the K tap maps are stacked as channels
/// [C, K] and summed back through a depthwise ConvTranspose whose one-hot
/// weights put tap k at kernel position k.
LogicalResult maxPoolRule(MaxPoolOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput(), y = op.getOutput(), dy = dys[0];
  if (!isFloatTensor(x) || !dy) {
    dxs.push_back(Value());
    return success();
  }
  auto sx = g.shape(x), sy = g.shape(y);
  ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(), pads = op.getPads(),
                    dilations = op.getDilations();
  int64_t n = (int64_t)kernel.size(), taps = 1;
  for (int64_t k : kernel)
    taps *= k;
  auto elementType = g.type(x).getElementType();
  // x padded with -inf far enough for every window (ceil_mode included).
  SmallVector<int64_t> padding(2 * (n + 2), 0);
  for (int64_t i = 0; i < n; ++i) {
    padding[2 + i] = pads[i];
    int64_t reach = (sy[2 + i] - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1 - pads[i];
    padding[n + 4 + i] = std::max<int64_t>(reach - sx[2 + i], 0);
  }
  SmallVector<int64_t> padded(sx);
  for (int64_t i = 0; i < n; ++i)
    padded[2 + i] += padding[2 + i] + padding[n + 4 + i];
  Value lowest = g.scalar(elementType, -std::numeric_limits<double>::infinity());
  Value xp = PadOp::create(g.b, g.loc, g.type(x).clone(padded), x, Value(), lowest,
                           g.b.getDenseI64ArrayAttr(padding), g.b.getStringAttr("constant"));
  SmallVector<Value> maps;
  SmallVector<int64_t> stacked{sy[0], sy[1], 1};
  stacked.append(sy.begin() + 2, sy.end());
  Value zero = g.scalarLike(dy, 0);
  for (int64_t t = 0; t < taps; ++t) {
    SmallVector<int64_t> starts{0, 0}, steps{1, 1};
    for (int64_t i = n - 1, rest = t; i >= 0; --i) {
      starts.insert(starts.begin() + 2, (rest % kernel[i]) * dilations[i]);
      rest /= kernel[i];
    }
    steps.append(strides.begin(), strides.end());
    Value tap = g.slice(xp, starts, sy, steps);
    maps.push_back(g.reshape(g.where(g.equal(tap, y), dy, zero), stacked));
  }
  SmallVector<int64_t> flat{sy[0], sy[1] * taps};
  flat.append(sy.begin() + 2, sy.end());
  Value stack = g.reshape(g.concat(maps, 2), flat);
  SmallVector<int64_t> weightShape{sx[1] * taps, 1};
  weightShape.append(kernel.begin(), kernel.end());
  auto weightType = RankedTensorType::get(weightShape, elementType);
  SmallVector<Attribute> oneHot;
  for (int64_t c = 0; c < sx[1]; ++c)
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t k = 0; k < taps; ++k)
        oneHot.push_back(g.b.getFloatAttr(elementType, t == k ? 1.0 : 0.0));
  Value weight = ConstantOp::create(g.b, g.loc, weightType, DenseElementsAttr::get(weightType, oneHot));
  dxs.push_back(scatterWindows(g, op, stack, weight));
  return success();
}

} // namespace

void grad::registerReduction(MLIRContext *context) {
  attach<ReduceSumOp, sumRule<ReduceSumOp, false>>(context);
  attach<ReduceMeanOp, sumRule<ReduceMeanOp, true>>(context);
  attach<ReduceMaxOp, extremeRule<ReduceMaxOp>>(context);
  attach<ReduceMinOp, extremeRule<ReduceMinOp>>(context);
  attach<ReduceL2Op, l2Rule>(context);
  attach<ReduceProdOp, prodRule>(context);
  attach<SoftmaxOp, softmaxRule>(context);
  attach<CumSumOp, cumSumRule>(context);
  attach<LogSoftmaxOp, logSoftmaxRule>(context);
  attach<AveragePoolOp, averagePoolRule>(context);
  attach<MaxPoolOp, maxPoolRule>(context);
}
