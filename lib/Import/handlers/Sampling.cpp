/// Handlers of the sampling ops (GridSample, RoiAlign), composed from nn ops:
/// the sample coordinates and interpolation weights are elementwise
/// arithmetic, each interpolation tap a Gather/GatherElements of the input
/// at a computed linear index, and the result the weighted sum (or max) of
/// the taps. Indices are clamped into range before every gather; taps that
/// ONNX reads as zero are masked instead.
#include "lib/Import/handlers/HandlerUtils.h"

using namespace mlir;

namespace nncc::import {
namespace {

/// Builds broadcasting nn ops, deriving each result type from the operands.
struct Ops {
  NodeContext &ctx;

  static RankedTensorType typeOf(Value v) { return mlir::cast<RankedTensorType>(v.getType()); }
  static Type elem(Value v) { return typeOf(v).getElementType(); }

  template <typename OpTy> Value bin(Value a, Value b) {
    return build<OpTy>(ctx, broadcastType(a.getType(), b.getType(), elem(a)), {a, b});
  }
  template <typename OpTy> Value cmp(Value a, Value b) {
    return build<OpTy>(ctx, broadcastType(a.getType(), b.getType(), ctx.builder().getI1Type()), {a, b});
  }
  template <typename OpTy> Value un(Value a) { return build<OpTy>(ctx, typeOf(a), a); }
  Value add(Value a, Value b) { return bin<nn::AddOp>(a, b); }
  Value sub(Value a, Value b) { return bin<nn::SubOp>(a, b); }
  Value mul(Value a, Value b) { return bin<nn::MulOp>(a, b); }
  Value div(Value a, Value b) { return bin<nn::DivOp>(a, b); }
  Value floor(Value a) { return un<nn::FloorOp>(a); }
  Value notOf(Value a) { return un<nn::NotOp>(a); }
  Value orOf(Value a, Value b) { return bin<nn::OrOp>(a, b); }
  Value andOf(Value a, Value b) { return bin<nn::AndOp>(a, b); }
  Value where(Value c, Value a, Value b) {
    auto ab = broadcastType(a.getType(), b.getType(), elem(a));
    return build<nn::WhereOp>(ctx, broadcastType(c.getType(), ab, elem(a)), {c, a, b});
  }
  Value clip(Value a, double lo, double hi) {
    return build<nn::ClipOp>(ctx, typeOf(a), {a, num(elem(a), lo), num(elem(a), hi)});
  }
  Value num(Type t, double v) { return ctx.scalar(t, v); }
  /// `v` plus a constant, in its own element type.
  Value plus(Value v, double c) { return add(v, num(elem(v), c)); }
  Value times(Value v, double c) { return mul(v, num(elem(v), c)); }
  Value cast(Value v, Type t) {
    return elem(v) == t ? v : (Value)build<nn::CastOp>(ctx, typeOf(v).clone(t), v);
  }
  Value reshape(Value v, ArrayRef<int64_t> shape) {
    return build<nn::ReshapeOp>(ctx, typeOf(v).clone(shape), v);
  }
  /// Entry `i` of the last axis of `v` (rank one less).
  Value column(Value v, int64_t i) {
    auto t = typeOf(v);
    return build<nn::GatherOp>(ctx, t.clone(t.getShape().drop_back()), {v, ctx.constantI64({i}, {})},
                               {i64Attr(ctx, "axis", t.getRank() - 1)});
  }
  Value i64(Value v) { return cast(v, ctx.builder().getI64Type()); }

  /// Reflects `x` into [lo, hi] by its nearest border, repeatedly (ONNX
  /// GridSample's reflection); values inside stay.
  Value reflect(Value x, double lo, double hi) {
    Type t = elem(x);
    double range = hi - lo;
    if (range <= 0)
      return build<nn::ExpandOp>(ctx, typeOf(x), num(t, lo));
    Value below = cmp<nn::LessOp>(x, num(t, lo)), above = cmp<nn::GreaterOp>(x, num(t, hi));
    // The distance past the crossed border, in whole ranges n and a rest r.
    Value d = where(below, sub(num(t, lo), x), plus(x, -hi));
    Value n = floor(div(d, num(t, range)));
    Value r = sub(d, times(n, range));
    Value half = times(n, 0.5);
    Value even = cmp<nn::EqualOp>(floor(half), half);
    // Below by an even number of ranges (or above by an odd one) lands at lo + r.
    Value fromLo = cmp<nn::EqualOp>(below, even);
    Value reflected = where(fromLo, plus(r, lo), sub(num(t, hi), r));
    Value inside = notOf(orOf(below, above));
    return where(inside, x, reflected);
  }
};

/// One GridSample tap: integral coordinates (ix, iy) [N, P] with their
/// weight [N, P]; the value it adds per channel.
struct Tap {
  Value ix, iy, weight;
};

/// GridSample (opset 16; opset 20's 2-D "linear"/"cubic" names too) on 2-D
/// images, ONNX's reference semantics: coordinates denormalized per
/// align_corners, rounded half to even for nearest, then moved inside by
/// border/reflection padding; each tap reads zero outside the image (zeros),
/// the clamped pixel (border) or the reflected pixel (reflection).
LogicalResult gridSample(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto xType = ctx.inputType(0), gType = ctx.inputType(1);
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  if (xType.getRank() != 4 || gType.getRank() != 4 || gType.getShape()[3] != 2)
    return ctx.error("supports 2-D sampling only: X [N, C, H, W] and grid [N, Ho, Wo, 2]");
  if (!xType.hasStaticShape() || !gType.hasStaticShape())
    return ctx.error("needs static shapes of X and grid");
  if (!isa<FloatType>(xType.getElementType()) || !isa<FloatType>(gType.getElementType()))
    return ctx.error("X and grid must be float tensors");
  std::string mode = ctx.attrString("mode", ctx.opset() >= 20 ? "linear" : "bilinear");
  std::string padding = ctx.attrString("padding_mode", "zeros");
  bool align = ctx.attrInt("align_corners", 0) != 0;
  if (mode == "linear")
    mode = "bilinear";
  if (mode == "cubic")
    mode = "bicubic";
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return ctx.error("mode '" + mode + "' is not one of bilinear, nearest, bicubic");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return ctx.error("padding_mode '" + padding + "' is not one of zeros, border, reflection");

  Ops o{ctx};
  int64_t n = xType.getShape()[0], c = xType.getShape()[1], h = xType.getShape()[2], w = xType.getShape()[3];
  int64_t p = gType.getShape()[1] * gType.getShape()[2];
  Type ft = gType.getElementType(), xt = xType.getElementType();
  Value grid = o.reshape(ctx.input(1), {n, p, 2});
  // Denormalized coordinates [N, P], x along W and y along H.
  auto denormalize = [&](Value g, int64_t size) {
    Value one = o.plus(g, 1.0);
    return align ? o.times(o.times(one, 0.5), (double)(size - 1))
                 : o.times(o.plus(o.times(one, (double)size), -1.0), 0.5);
  };
  double loX = align ? 0.0 : -0.5, hiX = align ? w - 1.0 : w - 0.5;
  double loY = align ? 0.0 : -0.5, hiY = align ? h - 1.0 : h - 0.5;
  Value x = denormalize(o.column(grid, 0), w), y = denormalize(o.column(grid, 1), h);
  if (mode == "nearest") {
    x = o.un<nn::RoundOp>(x);
    y = o.un<nn::RoundOp>(y);
  }
  auto pad = [&](Value v, double lo, double hi, int64_t size) {
    if (padding == "reflection")
      return o.reflect(v, lo, hi);
    if (padding == "zeros")
      return v;
    Value outside = o.orOf(o.cmp<nn::LessOp>(v, o.num(ft, lo)), o.cmp<nn::GreaterOp>(v, o.num(ft, hi)));
    return o.where(outside, o.clip(v, 0.0, (double)(size - 1)), v);
  };
  x = pad(x, loX, hiX, w);
  y = pad(y, loY, hiY, h);

  SmallVector<Tap> taps;
  if (mode == "nearest") {
    // Rounded, then clamped or reflected over (half-)integral borders: the
    // coordinates are integral already.
    taps.push_back({x, y, Value()});
  } else {
    Value x0 = o.floor(x), y0 = o.floor(y);
    Value tx = o.sub(x, x0), ty = o.sub(y, y0);
    SmallVector<std::pair<int64_t, Value>> wx, wy;
    if (mode == "bilinear") {
      auto linear = [&](Value t) {
        return SmallVector<std::pair<int64_t, Value>>{{0, o.sub(o.num(ft, 1.0), t)}, {1, t}};
      };
      wx = linear(tx);
      wy = linear(ty);
    } else {
      // Keys' cubic convolution, alpha = -0.75, at distances 1 + t, t, 1 - t, 2 - t.
      auto cubic = [&](Value t) {
        const double a = -0.75;
        auto outer = [&](Value s) { // (a s - 5a) s + 8a) s - 4a, for 1 <= s <= 2
          Value v = o.plus(o.times(s, a), -5 * a);
          v = o.plus(o.mul(v, s), 8 * a);
          return o.plus(o.mul(v, s), -4 * a);
        };
        auto inner = [&](Value s) { // ((a + 2) s - (a + 3)) s s + 1, for s <= 1
          Value v = o.plus(o.times(s, a + 2), -(a + 3));
          return o.plus(o.mul(o.mul(v, s), s), 1.0);
        };
        Value oneMinus = o.sub(o.num(ft, 1.0), t);
        return SmallVector<std::pair<int64_t, Value>>{{-1, outer(o.plus(t, 1.0))},
                                                      {0, inner(t)},
                                                      {1, inner(oneMinus)},
                                                      {2, outer(o.sub(o.num(ft, 2.0), t))}};
      };
      wx = cubic(tx);
      wy = cubic(ty);
    }
    for (auto &[dy, weightY] : wy)
      for (auto &[dx, weightX] : wx)
        taps.push_back({o.plus(x0, (double)dx), o.plus(y0, (double)dy), o.mul(weightY, weightX)});
  }

  Value image = o.reshape(ctx.input(0), {n, c, h * w});
  auto valueType = RankedTensorType::get({n, c, p}, xt);
  Value sum;
  for (Tap &tap : taps) {
    Value ix = tap.ix, iy = tap.iy, valid;
    if (padding == "zeros") {
      auto inRange = [&](Value v, int64_t size) {
        Value ge = o.cmp<nn::GreaterEqualOp>(v, o.num(ft, 0.0)), lt = o.cmp<nn::LessOp>(v, o.num(ft, (double)size));
        return o.andOf(ge, lt);
      };
      Value vx = inRange(ix, w), vy = inRange(iy, h);
      valid = o.reshape(o.andOf(vx, vy), {n, 1, p});
    } else if (padding == "reflection") {
      ix = o.cast(o.i64(o.reflect(ix, loX, hiX)), ft);
      iy = o.cast(o.i64(o.reflect(iy, loY, hiY)), ft);
    }
    ix = o.i64(o.clip(ix, 0.0, (double)(w - 1)));
    iy = o.i64(o.clip(iy, 0.0, (double)(h - 1)));
    Value index = o.add(o.mul(iy, o.num(ctx.builder().getI64Type(), (double)w)), ix);
    index = build<nn::ExpandOp>(ctx, valueType.clone(ctx.builder().getI64Type()), o.reshape(index, {n, 1, p}));
    Value v = build<nn::GatherElementsOp>(ctx, valueType, {image, index}, {i64Attr(ctx, "axis", 2)});
    if (valid)
      v = o.where(valid, v, o.num(xt, 0.0));
    if (tap.weight)
      v = o.mul(v, o.cast(o.reshape(tap.weight, {n, 1, p}), xt));
    sum = sum ? o.add(sum, v) : v;
  }
  out.push_back(o.reshape(sum, type->getShape()));
  return success();
}

/// RoiAlign: each output bin of each region averages (or takes the max of)
/// sampling_ratio x sampling_ratio bilinear samples, with ONNX's reference
/// clamping (samples more than one pixel outside weigh nothing, the others
/// are clamped to the image). `halfPixel` is the default coordinate mode.
LogicalResult roiAlign(NodeContext &ctx, SmallVectorImpl<Value> &out, bool halfPixelDefault) {
  if (failed(requireInputs(ctx, 3)))
    return failure();
  auto xType = ctx.inputType(0), rType = ctx.inputType(1), bType = ctx.inputType(2);
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  if (xType.getRank() != 4 || rType.getRank() != 2 || rType.getShape()[1] != 4 || bType.getRank() != 1)
    return ctx.error("expects X [N, C, H, W], rois [R, 4] and batch_indices [R]");
  if (!xType.hasStaticShape() || !rType.hasStaticShape() || !bType.hasStaticShape())
    return ctx.error("needs static shapes of X, rois and batch_indices");
  std::string coordMode = ctx.attrString("coordinate_transformation_mode",
                                         halfPixelDefault ? "half_pixel" : "output_half_pixel");
  if (coordMode != "half_pixel" && coordMode != "output_half_pixel")
    return ctx.error("coordinate_transformation_mode '" + coordMode +
                     "' is not one of half_pixel, output_half_pixel");
  std::string mode = ctx.attrString("mode", "avg");
  if (mode != "avg" && mode != "max")
    return ctx.error("mode '" + mode + "' is not one of avg, max");
  int64_t ph = ctx.attrInt("output_height", 1), pw = ctx.attrInt("output_width", 1);
  int64_t ratio = ctx.attrInt("sampling_ratio", 0);
  double spatialScale = ctx.attrFloat("spatial_scale", 1.0);
  if (ph < 1 || pw < 1)
    return ctx.error("output_height and output_width must be positive");
  // sampling_ratio 0 samples ceil(roi size / bins) per bin: a count that
  // depends on the run-time rois, which a static graph cannot hold.
  if (ratio < 1)
    return ctx.error("needs a positive sampling_ratio (0, adaptive, is not supported)");
  bool halfPixel = coordMode == "half_pixel";

  Ops o{ctx};
  Type ft = rType.getElementType(), xt = xType.getElementType(), i64 = ctx.builder().getI64Type();
  int64_t r = rType.getShape()[0], c = xType.getShape()[1], h = xType.getShape()[2], w = xType.getShape()[3];
  double offset = halfPixel ? 0.5 : 0.0;
  auto corner = [&](int64_t i) { return o.plus(o.times(o.column(ctx.input(1), i), spatialScale), -offset); };
  Value startW = corner(0), startH = corner(1), endW = corner(2), endH = corner(3);

  // Per axis: the samples' low/high pixel, weights and validity, shaped
  // [R, bins, ratio].
  struct Axis {
    Value low, high, wLow, wHigh, valid;
  };
  auto axis = [&](Value start, Value end, int64_t bins, int64_t size) {
    Value extent = o.sub(end, start);
    if (!halfPixel)
      extent = o.bin<nn::MaxOp>(extent, o.num(ft, 1.0));
    Value binSize = o.reshape(extent, {r, 1, 1});
    binSize = o.div(binSize, o.num(ft, (double)bins));
    SmallVector<APFloat> binIds, sampleIds;
    for (int64_t i = 0; i < bins; ++i)
      binIds.push_back(APFloat((float)i));
    for (int64_t i = 0; i < ratio; ++i)
      sampleIds.push_back(APFloat((float)i + 0.5f));
    auto f32 = ctx.builder().getF32Type();
    Value bin = o.cast(ctx.constant(DenseElementsAttr::get(RankedTensorType::get({1, bins, 1}, f32), binIds)), ft);
    Value sample = o.cast(ctx.constant(DenseElementsAttr::get(RankedTensorType::get({1, 1, ratio}, f32), sampleIds)), ft);
    // start + bin * binSize + (sample + 0.5) * binSize / ratio, the reference's order.
    Value v = o.add(o.reshape(start, {r, 1, 1}), o.mul(bin, binSize));
    v = o.add(v, o.div(o.mul(sample, binSize), o.num(ft, (double)ratio)));
    Value valid = o.notOf(o.orOf(o.cmp<nn::LessOp>(v, o.num(ft, -1.0)), o.cmp<nn::GreaterOp>(v, o.num(ft, (double)size))));
    v = o.bin<nn::MaxOp>(v, o.num(ft, 0.0));
    Value low = o.floor(v);
    Value atEnd = o.cmp<nn::GreaterEqualOp>(low, o.num(ft, (double)(size - 1)));
    Value last = o.num(ft, (double)(size - 1));
    low = o.where(atEnd, last, low);
    Value high = o.where(atEnd, last, o.plus(low, 1.0));
    v = o.where(atEnd, last, v);
    Value wHigh = o.sub(v, low);
    Value wLow = o.sub(o.num(ft, 1.0), wHigh);
    return Axis{o.i64(low), o.i64(high), wLow, wHigh, valid};
  };
  Axis ay = axis(startH, endH, ph, h), ax = axis(startW, endW, pw, w);
  // Broadcast to [R, ph, pw, ratio_h, ratio_w].
  auto ys = [&](Value v) { return o.reshape(v, {r, ph, 1, ratio, 1}); };
  auto xs = [&](Value v) { return o.reshape(v, {r, 1, pw, 1, ratio}); };
  Value valid = o.reshape(o.andOf(ys(ay.valid), xs(ax.valid)), {r, ph, pw, ratio, ratio, 1});
  Value batch = o.reshape(o.times(o.i64(ctx.input(2)), (double)(h * w)), {r, 1, 1, 1, 1});
  // X as rows of channels: [N * H * W, C].
  Value rows = build<nn::TransposeOp>(ctx, RankedTensorType::get({xType.getShape()[0], h, w, c}, xt), ctx.input(0),
                                      {i64ArrayAttr(ctx, "perm", {0, 2, 3, 1})});
  rows = o.reshape(rows, {xType.getShape()[0] * h * w, c});
  auto sampleType = RankedTensorType::get({r, ph, pw, ratio, ratio, c}, xt);
  Value combined;
  for (auto [yIndex, yWeight] : {std::pair(ay.low, ay.wLow), std::pair(ay.high, ay.wHigh)})
    for (auto [xIndex, xWeight] : {std::pair(ax.low, ax.wLow), std::pair(ax.high, ax.wHigh)}) {
      Value index = o.add(o.add(batch, o.mul(ys(yIndex), o.num(i64, (double)w))), xs(xIndex));
      Value v = build<nn::GatherOp>(ctx, sampleType, {rows, index}, {i64Attr(ctx, "axis", 0)});
      Value weight = o.reshape(o.mul(ys(yWeight), xs(xWeight)), {r, ph, pw, ratio, ratio, 1});
      weight = o.where(valid, o.cast(weight, xt), o.num(xt, 0.0));
      v = o.mul(weight, v);
      combined = !combined ? v : mode == "avg" ? o.add(combined, v) : o.bin<nn::MaxOp>(combined, v);
    }
  auto pooledType = RankedTensorType::get({r, ph, pw, c}, xt);
  SmallVector<NamedAttribute> sampleAxes{i64ArrayAttr(ctx, "axes", {3, 4}), boolAttr(ctx, "keepdims", false)};
  Value pooled;
  if (mode == "avg") {
    pooled = build<nn::ReduceSumOp>(ctx, pooledType, combined, sampleAxes);
    pooled = o.div(pooled, o.num(xt, (double)(ratio * ratio)));
  } else {
    pooled = build<nn::ReduceMaxOp>(ctx, pooledType, combined, sampleAxes);
  }
  out.push_back(build<nn::TransposeOp>(ctx, *type, pooled, {i64ArrayAttr(ctx, "perm", {0, 3, 1, 2})}));
  return success();
}

LogicalResult roiAlign10(NodeContext &ctx, SmallVectorImpl<Value> &out) { return roiAlign(ctx, out, false); }
LogicalResult roiAlign16(NodeContext &ctx, SmallVectorImpl<Value> &out) { return roiAlign(ctx, out, true); }

} // namespace

void registerSamplingHandlers(HandlerRegistry &r) {
  r.add("GridSample", 16, gridSample);
  r.add("RoiAlign", 10, roiAlign10);
  r.add("RoiAlign", 16, roiAlign16);
}

} // namespace nncc::import
