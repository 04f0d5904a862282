/// Handlers of the recurrent ops LSTM, GRU and RNN as compositions of nn ops:
/// one MatMul projects the whole sequence's inputs (X·Wᵀ + Wb), then each time
/// step (unrolled over the static sequence length) multiplies the state by Rᵀ
/// and applies the gates elementwise, which the fusion passes fuse per step.
#include "lib/Import/handlers/HandlerUtils.h"

using namespace mlir;

namespace nncc::import {
namespace {

enum class Cell { Rnn, Gru, Lstm };

/// Builder shorthand for the cell's small tensors, all of one element type.
struct RnnBuilder {
  NodeContext &ctx;
  Type elem;

  RankedTensorType type(ArrayRef<int64_t> shape) { return RankedTensorType::get(shape, elem); }
  ArrayRef<int64_t> shape(Value v) { return cast<RankedTensorType>(v.getType()).getShape(); }

  template <typename OpTy> Value binary(Value a, Value b) {
    return build<OpTy>(ctx, broadcastType(a.getType(), b.getType(), elem), {a, b});
  }
  Value add(Value a, Value b) { return binary<nn::AddOp>(a, b); }
  Value mul(Value a, Value b) { return binary<nn::MulOp>(a, b); }
  Value sub(Value a, Value b) { return binary<nn::SubOp>(a, b); }
  Value scalar(double v) { return ctx.scalar(elem, v); }
  Value zeros(ArrayRef<int64_t> shape) {
    return ctx.constant(DenseElementsAttr::get(type(shape), FloatAttr::get(elem, 0.0).getValue()));
  }

  Value reshape(Value v, ArrayRef<int64_t> shape) {
    Type e = cast<RankedTensorType>(v.getType()).getElementType();
    return build<nn::ReshapeOp>(ctx, RankedTensorType::get(shape, e), v);
  }
  Value transpose(Value v, ArrayRef<int64_t> perm) {
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(this->shape(v)[p]);
    Type e = cast<RankedTensorType>(v.getType()).getElementType();
    return build<nn::TransposeOp>(ctx, RankedTensorType::get(shape, e), v,
                                  {i64ArrayAttr(ctx, "perm", perm)});
  }
  /// v[..., begin:end, ...] along `axis`.
  Value slice(Value v, int64_t axis, int64_t begin, int64_t end) {
    SmallVector<int64_t> dims(shape(v)), starts(dims.size(), 0), steps(dims.size(), 1);
    SmallVector<int64_t> ends(dims);
    starts[axis] = begin;
    ends[axis] = end;
    dims[axis] = end - begin;
    Type e = cast<RankedTensorType>(v.getType()).getElementType();
    auto &b = ctx.builder();
    return nn::SliceOp::create(b, ctx.loc(), RankedTensorType::get(dims, e), v, Value(), Value(),
                               Value(), Value(), b.getDenseI64ArrayAttr(starts),
                               b.getDenseI64ArrayAttr(ends), b.getDenseI64ArrayAttr(steps));
  }
  /// Row `index` of a [N, rest...] tensor as [rest...].
  Value row(Value v, int64_t index) {
    return reshape(slice(v, 0, index, index + 1), shape(v).drop_front());
  }
  Value concat(ArrayRef<Value> parts, int64_t axis) {
    if (parts.size() == 1)
      return parts[0];
    SmallVector<int64_t> dims(shape(parts[0]));
    dims[axis] = 0;
    for (Value p : parts)
      dims[axis] += shape(p)[axis];
    return build<nn::ConcatOp>(ctx, type(dims), parts, {i64Attr(ctx, "axis", axis)});
  }
  /// a · b for a [M, K] and b [K, N].
  Value matmul(Value a, Value b) {
    return build<nn::MatMulOp>(ctx, type({shape(a)[0], shape(b)[1]}), {a, b});
  }
};

/// One activation function of the `activations` attribute with its alpha and
/// beta (ONNX's defaults where the attribute lists run out).
struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

FailureOr<Value> applyActivation(RnnBuilder &b, const Activation &act, Value x) {
  NodeContext &ctx = b.ctx;
  Type t = x.getType();
  std::string name = StringRef(act.name).lower();
  if (name == "sigmoid")
    return Value(build<nn::SigmoidOp>(ctx, t, x));
  if (name == "tanh")
    return Value(build<nn::TanhOp>(ctx, t, x));
  if (name == "relu")
    return Value(build<nn::ReluOp>(ctx, t, x));
  if (name == "affine")
    return b.add(b.mul(x, b.scalar(act.alpha)), b.scalar(act.beta));
  if (name == "leakyrelu")
    return Value(build<nn::LeakyReluOp>(ctx, t, x, {f64Attr(ctx, "alpha", act.alpha)}));
  if (name == "thresholdedrelu") {
    auto maskType = RankedTensorType::get(b.shape(x), ctx.builder().getI1Type());
    Value above = build<nn::GreaterOp>(ctx, maskType, {x, b.scalar(act.alpha)});
    return Value(build<nn::WhereOp>(ctx, t, {above, x, b.scalar(0)}));
  }
  if (name == "scaledtanh") {
    Value inner = build<nn::TanhOp>(ctx, t, b.mul(x, b.scalar(act.beta)));
    return b.mul(inner, b.scalar(act.alpha));
  }
  if (name == "hardsigmoid")
    return Value(build<nn::HardSigmoidOp>(
        ctx, t, x, {f64Attr(ctx, "alpha", act.alpha), f64Attr(ctx, "beta", act.beta)}));
  if (name == "elu")
    return Value(build<nn::EluOp>(ctx, t, x, {f64Attr(ctx, "alpha", act.alpha)}));
  if (name == "softsign") {
    Value denom = b.add(build<nn::AbsOp>(ctx, t, x), b.scalar(1));
    return b.binary<nn::DivOp>(x, denom);
  }
  if (name == "softplus")
    return Value(build<nn::SoftplusOp>(ctx, t, x));
  return ctx.error("activation '" + act.name +
                   "' is not supported (Relu, Tanh, Sigmoid, Affine, LeakyRelu, "
                   "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus are)");
}

/// The (alpha, beta) defaults of an activation, and whether it takes each.
void activationDefaults(StringRef lower, std::optional<double> &alpha,
                        std::optional<double> &beta) {
  if (lower == "leakyrelu")
    alpha = 0.01;
  else if (lower == "thresholdedrelu" || lower == "elu")
    alpha = 1.0;
  else if (lower == "affine" || lower == "scaledtanh") {
    alpha = 1.0;
    beta = lower == "affine" ? 0.0 : 1.0;
  } else if (lower == "hardsigmoid") {
    alpha = 0.2;
    beta = 0.5;
  }
}

/// The activations of every direction: `activations` (repeated for the
/// second direction when it lists one direction's), their alphas and betas
/// consumed in order by the functions that take them.
FailureOr<SmallVector<Activation>> readActivations(NodeContext &ctx, Cell cell,
                                                   int64_t numDirections) {
  SmallVector<StringRef> defaults;
  if (cell == Cell::Lstm)
    defaults = {"Sigmoid", "Tanh", "Tanh"};
  else if (cell == Cell::Gru)
    defaults = {"Sigmoid", "Tanh"};
  else
    defaults = {"Tanh"};
  SmallVector<std::string> names;
  if (const onnx::AttributeProto *attr = ctx.attr("activations"))
    for (const auto &s : attr->strings())
      names.push_back(s);
  else
    for (StringRef d : defaults)
      names.push_back(d.str());
  size_t perDirection = defaults.size();
  if (names.size() == perDirection && numDirections == 2)
    names.append(SmallVector<std::string>(names));
  if (names.size() != perDirection * numDirections)
    return ctx.error("activations lists " + llvm::Twine(names.size()) + " functions, expected " +
                     llvm::Twine(perDirection * numDirections));
  SmallVector<double> alphas = ctx.attrFloats("activation_alpha");
  SmallVector<double> betas = ctx.attrFloats("activation_beta");
  size_t nextAlpha = 0, nextBeta = 0;
  SmallVector<Activation> acts;
  for (const std::string &name : names) {
    std::optional<double> alpha, beta;
    activationDefaults(StringRef(name).lower(), alpha, beta);
    Activation act{name};
    if (alpha)
      act.alpha = nextAlpha < alphas.size() ? alphas[nextAlpha++] : *alpha;
    if (beta)
      act.beta = nextBeta < betas.size() ? betas[nextBeta++] : *beta;
    acts.push_back(act);
  }
  return acts;
}

/// Imports one of LSTM (inputs X W R B seq_lens h0 c0 P), GRU and RNN
/// (X W R B seq_lens h0).
LogicalResult recurrent(NodeContext &ctx, SmallVectorImpl<Value> &out, Cell cell) {
  if (failed(requireInputs(ctx, 3)))
    return failure();
  auto xType = ctx.inputType(0), wType = ctx.inputType(1), rType = ctx.inputType(2);
  if (!xType.hasStaticShape() || !wType.hasStaticShape() || !rType.hasStaticShape())
    return ctx.error("X, W and R need static shapes (give --shape)");
  if (xType.getRank() != 3 || wType.getRank() != 3 || rType.getRank() != 3)
    return ctx.error("X, W and R must have rank 3");
  int64_t layout = ctx.attrInt("layout", 0);
  if (layout != 0 && layout != 1)
    return ctx.error("layout must be 0 or 1");
  std::string direction = ctx.attrString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return ctx.error("direction '" + direction + "' is not supported");
  int64_t numDirections = direction == "bidirectional" ? 2 : 1;
  int64_t gates = cell == Cell::Lstm ? 4 : cell == Cell::Gru ? 3 : 1;
  int64_t hidden = rType.getShape()[2];
  if (ctx.hasAttr("hidden_size") && ctx.attrInt("hidden_size", hidden) != hidden)
    return ctx.error("hidden_size does not match R");
  if (wType.getShape()[0] != numDirections || rType.getShape()[0] != numDirections ||
      wType.getShape()[1] != gates * hidden || rType.getShape()[1] != gates * hidden ||
      wType.getShape()[2] != xType.getShape()[2])
    return ctx.error("W or R do not match the direction count, hidden size or input size");
  auto acts = readActivations(ctx, cell, numDirections);
  if (failed(acts))
    return failure();
  std::optional<double> clip;
  if (ctx.hasAttr("clip"))
    clip = ctx.attrFloat("clip", 0);
  bool linearBeforeReset = cell == Cell::Gru && ctx.attrInt("linear_before_reset", 0);
  if (cell == Cell::Lstm && ctx.attrInt("input_forget", 0))
    return ctx.error("input_forget=1 is not supported");

  RnnBuilder b{ctx, xType.getElementType()};
  Value x = ctx.input(0);
  if (layout == 1)
    x = b.transpose(x, {1, 0, 2});
  int64_t seqLen = b.shape(x)[0], batch = b.shape(x)[1], inputSize = b.shape(x)[2];
  SmallVector<int64_t> stateShape = {numDirections, batch, hidden};
  // Initial states come as [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]).
  auto initialState = [&](size_t i) -> FailureOr<Value> {
    Value v = ctx.input(i);
    if (!v)
      return Value();
    if (b.shape(v).size() != 3)
      return ctx.error("input " + llvm::Twine(i) + " must have rank 3");
    if (layout == 1)
      v = b.transpose(v, {1, 0, 2});
    if (b.shape(v) != ArrayRef<int64_t>(stateShape))
      return ctx.error("input " + llvm::Twine(i) + " does not have shape [directions, batch, "
                       "hidden]");
    return v;
  };
  auto h0 = initialState(5);
  auto c0 = cell == Cell::Lstm ? initialState(6) : FailureOr<Value>(Value());
  if (failed(h0) || failed(c0))
    return failure();
  Value bias = ctx.input(3), peep = cell == Cell::Lstm ? ctx.input(7) : Value();
  if (bias && b.shape(bias) != ArrayRef<int64_t>{numDirections, 2 * gates * hidden})
    return ctx.error("B does not have shape [directions, " + llvm::Twine(2 * gates * hidden) +
                     "]");
  if (peep && b.shape(peep) != ArrayRef<int64_t>{numDirections, 3 * hidden})
    return ctx.error("P does not have shape [directions, " + llvm::Twine(3 * hidden) + "]");

  // Steps at or past a sequence's length keep the state and output zeros:
  // `valid[t]` is [batch, 1] (t < sequence_lens).
  SmallVector<Value> valid;
  if (Value lens = ctx.input(4)) {
    auto lensType = cast<RankedTensorType>(lens.getType());
    if (lensType.getShape() != ArrayRef<int64_t>{batch})
      return ctx.error("sequence_lens does not have shape [batch]");
    Type i1 = ctx.builder().getI1Type();
    Value lens2d = b.reshape(lens, {batch, 1});
    for (int64_t t = 0; t < seqLen; ++t)
      valid.push_back(build<nn::LessOp>(ctx, RankedTensorType::get({batch, 1}, i1),
                                        {ctx.scalar(lensType.getElementType(), t), lens2d}));
  }

  auto clipped = [&](Value v) -> Value {
    if (!clip)
      return v;
    return build<nn::ClipOp>(ctx, v.getType(), {v, b.scalar(-*clip), b.scalar(*clip)});
  };
  SmallVector<Value> ys, hs, cs;
  for (int64_t d = 0; d < numDirections; ++d) {
    bool reverse = direction == "reverse" || d == 1;
    ArrayRef<Activation> act = ArrayRef(*acts).slice(d * (acts->size() / numDirections));
    auto activate = [&](size_t i, Value v) { return applyActivation(b, act[i], v); };
    // Wᵀ and Rᵀ of this direction: [input, gates * hidden], [hidden, gates * hidden].
    Value wt = b.transpose(b.row(ctx.input(1), d), {1, 0});
    Value rt = b.transpose(b.row(ctx.input(2), d), {1, 0});
    // The input projection of every step at once: [seq * batch, gates * hidden].
    Value xw = b.matmul(b.reshape(x, {seqLen * batch, inputSize}), wt);
    Value rb;
    if (bias) {
      Value bd = b.row(bias, d);
      rb = b.slice(bd, 0, gates * hidden, 2 * gates * hidden);
      // Both biases join the projection, except GRU's hidden-gate Rb, which
      // stays inside the reset product.
      Value folded = rb;
      if (cell == Cell::Gru)
        folded = b.concat({b.slice(rb, 0, 0, 2 * hidden), b.zeros({hidden})}, 0);
      xw = b.add(xw, b.add(b.slice(bd, 0, 0, gates * hidden), folded));
    }
    xw = b.reshape(xw, {seqLen, batch, gates * hidden});
    Value zeroState = b.zeros({batch, hidden});
    Value h = *h0 ? b.row(*h0, d) : zeroState;
    Value c = cell == Cell::Lstm ? (*c0 ? b.row(*c0, d) : zeroState) : Value();
    SmallVector<Value> pGate;
    if (peep)
      for (int64_t g = 0; g < 3; ++g)
        pGate.push_back(b.slice(b.row(peep, d), 0, g * hidden, (g + 1) * hidden));
    SmallVector<Value> stepOutputs(seqLen);
    for (int64_t k = 0; k < seqLen; ++k) {
      int64_t t = reverse ? seqLen - 1 - k : k;
      Value xt = b.row(xw, t);
      auto gateOf = [&](Value v, int64_t g) { return b.slice(v, 1, g * hidden, (g + 1) * hidden); };
      Value hNew, cNew;
      if (cell == Cell::Rnn) {
        auto a = activate(0, clipped(b.add(xt, b.matmul(h, rt))));
        if (failed(a))
          return failure();
        hNew = *a;
      } else if (cell == Cell::Lstm) {
        Value pre = b.add(xt, b.matmul(h, rt));
        // Gate order i, o, f, c; peepholes P are i, o, f.
        Value gi = gateOf(pre, 0), go = gateOf(pre, 1), gf = gateOf(pre, 2), gc = gateOf(pre, 3);
        if (peep) {
          gi = b.add(gi, b.mul(pGate[0], c));
          gf = b.add(gf, b.mul(pGate[2], c));
        }
        auto i = activate(0, clipped(gi)), f = activate(0, clipped(gf));
        auto cand = activate(1, clipped(gc));
        if (failed(i) || failed(f) || failed(cand))
          return failure();
        cNew = b.add(b.mul(*f, c), b.mul(*i, *cand));
        if (peep)
          go = b.add(go, b.mul(pGate[1], cNew));
        auto o = activate(0, clipped(go));
        auto hc = activate(2, cNew);
        if (failed(o) || failed(hc))
          return failure();
        hNew = b.mul(*o, *hc);
      } else {
        // Gate order z, r, h.
        Value rz = b.matmul(h, b.slice(rt, 1, 0, 2 * hidden));
        Value rh = b.slice(rt, 1, 2 * hidden, 3 * hidden);
        auto z = activate(0, clipped(b.add(gateOf(xt, 0), gateOf(rz, 0))));
        auto rs = activate(0, clipped(b.add(gateOf(xt, 1), gateOf(rz, 1))));
        if (failed(z) || failed(rs))
          return failure();
        Value rbh = bias ? b.slice(rb, 0, 2 * hidden, 3 * hidden) : Value();
        Value recur;
        if (linearBeforeReset) {
          recur = b.matmul(h, rh);
          if (rbh)
            recur = b.add(recur, rbh);
          recur = b.mul(*rs, recur);
        } else {
          recur = b.matmul(b.mul(*rs, h), rh);
          if (rbh)
            recur = b.add(recur, rbh);
        }
        auto cand = activate(1, clipped(b.add(gateOf(xt, 2), recur)));
        if (failed(cand))
          return failure();
        // (1 - z) ⊙ h̃ + z ⊙ h = h̃ + z ⊙ (h - h̃)
        hNew = b.add(*cand, b.mul(*z, b.sub(h, *cand)));
      }
      if (!valid.empty()) {
        Value keep = valid[t];
        stepOutputs[t] = build<nn::WhereOp>(ctx, hNew.getType(), {keep, hNew, b.scalar(0)});
        hNew = build<nn::WhereOp>(ctx, hNew.getType(), {keep, hNew, h});
        if (cNew)
          cNew = build<nn::WhereOp>(ctx, cNew.getType(), {keep, cNew, c});
      } else {
        stepOutputs[t] = hNew;
      }
      h = hNew;
      c = cNew;
    }
    SmallVector<Value> steps;
    for (Value y : stepOutputs)
      steps.push_back(b.reshape(y, {1, 1, batch, hidden}));
    ys.push_back(b.concat(steps, 0));
    hs.push_back(b.reshape(h, {1, batch, hidden}));
    if (c)
      cs.push_back(b.reshape(c, {1, batch, hidden}));
  }
  // Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]);
  // Y_h, Y_c [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]).
  Value y = b.concat(ys, 1), yh = b.concat(hs, 0);
  Value yc = cs.empty() ? Value() : b.concat(cs, 0);
  if (layout == 1) {
    y = b.transpose(y, {2, 0, 1, 3});
    yh = b.transpose(yh, {1, 0, 2});
    if (yc)
      yc = b.transpose(yc, {1, 0, 2});
  }
  out.push_back(ctx.outputUsed(0) ? y : Value());
  out.push_back(ctx.outputUsed(1) ? yh : Value());
  if (cell == Cell::Lstm)
    out.push_back(ctx.outputUsed(2) ? yc : Value());
  return success();
}

LogicalResult lstm(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  return recurrent(ctx, out, Cell::Lstm);
}
LogicalResult gru(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  return recurrent(ctx, out, Cell::Gru);
}
LogicalResult rnn(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  return recurrent(ctx, out, Cell::Rnn);
}

} // namespace

void registerRecurrentHandlers(HandlerRegistry &r) {
  r.add("LSTM", 7, lstm);
  r.add("GRU", 7, gru);
  r.add("RNN", 7, rnn);
}

} // namespace nncc::import
