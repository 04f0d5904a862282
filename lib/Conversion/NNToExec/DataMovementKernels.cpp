/// Kernels of data-movement ops: transpose, slice, concat, split, gather,
/// gather_elements, pad, tile, range, resize, einsum.
#include "lib/Conversion/NNToExec/KernelBuilders.h"
#include "lib/Conversion/NNToExec/LinalgUtils.h"

#include "dialects/NN/NNOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace nncc::kernels {
namespace {


RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

SmallVector<utils::IteratorType> parallel(int64_t rank) {
  return SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel);
}

/// A parallel generic over `init` whose body computes the output scalar from
/// the output index (and any values captured from above).
Value indexGeneric(OpBuilder &b, Location loc, Value init,
                   const std::function<Value(OpBuilder &, Location, ArrayRef<Value>)> &body) {
  int64_t rank = typeOf(init).getRank();
  return generic(b, loc, {}, init, {b.getMultiDimIdentityMap(rank)}, parallel(rank),
                 [&](OpBuilder &nb, Location l, ValueRange) -> SmallVector<Value> {
                   SmallVector<Value> index;
                   for (int64_t d = 0; d < rank; ++d)
                     index.push_back(linalg::IndexOp::create(nb, l, d));
                   return {body(nb, l, index)};
                 })[0];
}


/// An integer index element (i32/i64, possibly negative: wraps once) as an
/// in-bounds `index`.
Value wrapIndex(OpBuilder &b, Location loc, Value v, int64_t size) {
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, indexConstant(b, loc, 0));
  Value wrapped = arith::SelectOp::create(b, loc, neg, arith::AddIOp::create(b, loc, i, indexConstant(b, loc, size)), i);
  return clampIndex(b, loc, wrapped, size);
}

Value transpose(OpBuilder &b, Location loc, nn::TransposeOp op, Value x, Value init) {
  ArrayRef<int64_t> perm = op.getPerm();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> inExprs(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inExprs[perm[i]] = getAffineDimExpr(i, ctx);
  int64_t rank = perm.size();
  return generic(b, loc, x, init, {AffineMap::get(rank, 0, inExprs, ctx), b.getMultiDimIdentityMap(rank)},
                 parallel(rank), [](OpBuilder &, Location, ValueRange s) -> SmallVector<Value> {
                   return {s[0]};
                 })[0];
}

FailureOr<Value> slice(OpBuilder &b, Location loc, nn::SliceOp op, Value x, Value init) {
  if (!op.getStarts())
    return op.emitOpError("needs constant starts/ends/steps for code generation"), failure();
  ArrayRef<int64_t> starts = *op.getStarts(), steps = *op.getSteps();
  // Source index start + i * step, read with tensor.extract (an affine map
  // would let linalg infer the loop bounds from the input).
  return indexGeneric(b, loc, init, [&](OpBuilder &nb, Location l, ArrayRef<Value> out) {
    SmallVector<Value> src;
    for (size_t d = 0; d < out.size(); ++d)
      src.push_back(arith::AddIOp::create(
          nb, l, arith::MulIOp::create(nb, l, out[d], indexConstant(nb, l, steps[d])), indexConstant(nb, l, starts[d])));
    return (Value)tensor::ExtractOp::create(nb, l, x, src);
  });
}

Value concat(OpBuilder &b, Location loc, nn::ConcatOp op, ValueRange inputs, Value init) {
  int64_t rank = typeOf(init).getRank(), axis = op.getAxis(), offset = 0;
  Value acc = init;
  for (Value in : inputs) {
    auto shape = typeOf(in).getShape();
    if (shape[axis] == 0)
      continue;
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes, strides(rank, b.getIndexAttr(1));
    offsets[axis] = b.getIndexAttr(offset);
    for (int64_t s : shape)
      sizes.push_back(b.getIndexAttr(s));
    acc = tensor::InsertSliceOp::create(b, loc, in, acc, offsets, sizes, strides);
    offset += shape[axis];
  }
  return acc;
}

SmallVector<Value> split(OpBuilder &b, Location loc, nn::SplitOp op, Value x, ValueRange inits) {
  int64_t rank = typeOf(x).getRank(), axis = op.getAxis(), offset = 0;
  SmallVector<Value> results;
  for (Value init : inits) {
    auto shape = typeOf(init).getShape();
    if (typeOf(init).getNumElements() == 0) {
      results.push_back(init);
      continue;
    }
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes, strides(rank, b.getIndexAttr(1));
    offsets[axis] = b.getIndexAttr(offset);
    for (int64_t s : shape)
      sizes.push_back(b.getIndexAttr(s));
    Value part = tensor::ExtractSliceOp::create(b, loc, typeOf(init), x, offsets, sizes, strides);
    results.push_back(linalg::CopyOp::create(b, loc, part, init).getResult(0));
    offset += shape[axis];
  }
  return results;
}

Value gather(OpBuilder &b, Location loc, nn::GatherOp op, Value data, Value indices, Value init) {
  auto dataShape = typeOf(data).getShape();
  int64_t axis = op.getAxis(), indexRank = typeOf(indices).getRank();
  return indexGeneric(b, loc, init, [&](OpBuilder &nb, Location l, ArrayRef<Value> out) {
    SmallVector<Value> indexOfIndex(out.begin() + axis, out.begin() + axis + indexRank);
    Value raw = tensor::ExtractOp::create(nb, l, indices, indexOfIndex);
    SmallVector<Value> src(out.begin(), out.begin() + axis);
    src.push_back(wrapIndex(nb, l, raw, dataShape[axis]));
    src.append(out.begin() + axis + indexRank, out.end());
    return (Value)tensor::ExtractOp::create(nb, l, data, src);
  });
}

Value gatherElements(OpBuilder &b, Location loc, nn::GatherElementsOp op, Value data, Value indices,
                     Value init) {
  auto dataShape = typeOf(data).getShape();
  int64_t axis = op.getAxis();
  return indexGeneric(b, loc, init, [&](OpBuilder &nb, Location l, ArrayRef<Value> out) {
    Value raw = tensor::ExtractOp::create(nb, l, indices, out);
    SmallVector<Value> src(out.begin(), out.end());
    src[axis] = wrapIndex(nb, l, raw, dataShape[axis]);
    return (Value)tensor::ExtractOp::create(nb, l, data, src);
  });
}

FailureOr<Value> pad(OpBuilder &b, Location loc, nn::PadOp op, Value x, Value padValue, Value init) {
  if (!op.getPads())
    return op.emitOpError("needs constant pads for code generation"), failure();
  auto shape = typeOf(x).getShape();
  int64_t rank = shape.size();
  ArrayRef<int64_t> pads = *op.getPads();
  StringRef mode = op.getMode();
  Type t = typeOf(x).getElementType();
  if (typeOf(x).getNumElements() == 0 && mode != "constant")
    return op.emitOpError("cannot pad an empty tensor in mode '") << mode << "'", failure();
  return indexGeneric(b, loc, init, [&](OpBuilder &nb, Location l, ArrayRef<Value> out) -> Value {
    SmallVector<Value> src;
    Value valid = arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
    for (int64_t d = 0; d < rank; ++d) {
      int64_t n = shape[d];
      Value i = arith::SubIOp::create(nb, l, out[d], indexConstant(nb, l, pads[d]));
      if (mode == "constant") {
        Value inLo = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, i, indexConstant(nb, l, 0));
        Value inHi = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, i, indexConstant(nb, l, n));
        valid = arith::AndIOp::create(nb, l, valid, arith::AndIOp::create(nb, l, inLo, inHi));
        src.push_back(n > 0 ? clampIndex(nb, l, i, n) : indexConstant(nb, l, 0));
      } else if (mode == "edge") {
        src.push_back(clampIndex(nb, l, i, n));
      } else if (mode == "wrap") {
        // ((i % n) + n) % n
        Value r = arith::RemSIOp::create(nb, l, i, indexConstant(nb, l, n));
        r = arith::RemSIOp::create(nb, l, arith::AddIOp::create(nb, l, r, indexConstant(nb, l, n)), indexConstant(nb, l, n));
        src.push_back(r);
      } else { // reflect: period 2(n-1), mirror without repeating the edge.
        if (n == 1) {
          src.push_back(indexConstant(nb, l, 0));
          continue;
        }
        int64_t period = 2 * (n - 1);
        Value r = arith::RemSIOp::create(nb, l, i, indexConstant(nb, l, period));
        r = arith::RemSIOp::create(nb, l, arith::AddIOp::create(nb, l, r, indexConstant(nb, l, period)), indexConstant(nb, l, period));
        Value over = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, r, indexConstant(nb, l, n));
        src.push_back(arith::SelectOp::create(nb, l, over, arith::SubIOp::create(nb, l, indexConstant(nb, l, period), r), r));
      }
    }
    if (typeOf(x).getNumElements() == 0)
      return padValue ? (Value)tensor::ExtractOp::create(nb, l, padValue, ValueRange{}) : scalarConstant(nb, l, t, 0);
    Value v = tensor::ExtractOp::create(nb, l, x, src);
    if (mode != "constant")
      return v;
    Value fillV = padValue ? (Value)tensor::ExtractOp::create(nb, l, padValue, ValueRange{}) : scalarConstant(nb, l, t, 0);
    return arith::SelectOp::create(nb, l, valid, v, fillV);
  });
}

Value tile(OpBuilder &b, Location loc, Value x, Value init) {
  auto shape = typeOf(x).getShape();
  return indexGeneric(b, loc, init, [&](OpBuilder &nb, Location l, ArrayRef<Value> out) {
    SmallVector<Value> src;
    for (size_t d = 0; d < shape.size(); ++d)
      src.push_back(arith::RemUIOp::create(nb, l, out[d], indexConstant(nb, l, shape[d])));
    return (Value)tensor::ExtractOp::create(nb, l, x, src);
  });
}

Value range(OpBuilder &b, Location loc, Value start, Value delta, Value init) {
  Type t = typeOf(init).getElementType();
  return indexGeneric(b, loc, init, [&](OpBuilder &nb, Location l, ArrayRef<Value> out) -> Value {
    Value s = tensor::ExtractOp::create(nb, l, start, ValueRange{});
    Value d = tensor::ExtractOp::create(nb, l, delta, ValueRange{});
    Value i = arith::IndexCastOp::create(nb, l, nb.getI64Type(), out[0]);
    if (isa<FloatType>(t)) {
      Value fi = arith::SIToFPOp::create(nb, l, t, i);
      return arith::AddFOp::create(nb, l, s, arith::MulFOp::create(nb, l, fi, d));
    }
    Value ii = castScalar(nb, l, i, nb.getI64Type(), false, t, false);
    return arith::AddIOp::create(nb, l, s, arith::MulIOp::create(nb, l, ii, d));
  });
}

/// The source coordinate of output coordinate `o` (f64) along one axis.
/// ONNX measures the resized length as in * scale (not rounded).
Value sourceCoordinate(OpBuilder &b, Location loc, StringRef mode, Value o, double scale,
                       int64_t inLen, double roiStart, double roiEnd) {
  Type f64 = b.getF64Type();
  double outLen = inLen * scale;
  auto c = [&](double v) { return scalarConstant(b, loc, f64, v); };
  auto add = [&](Value x, Value y) { return (Value)arith::AddFOp::create(b, loc, x, y); };
  auto mul = [&](Value x, Value y) { return (Value)arith::MulFOp::create(b, loc, x, y); };
  auto div = [&](Value x, Value y) { return (Value)arith::DivFOp::create(b, loc, x, y); };
  if (mode == "asymmetric")
    return div(o, c(scale));
  if (mode == "align_corners")
    return outLen == 1 ? c(0) : div(mul(o, c(inLen - 1)), c(outLen - 1));
  if (mode == "pytorch_half_pixel")
    return outLen > 1 ? add(div(add(o, c(0.5)), c(scale)), c(-0.5)) : c(0);
  if (mode == "tf_crop_and_resize") {
    if (outLen <= 1)
      return c((roiEnd - roiStart) * (inLen - 1) / 2 + roiStart * (inLen - 1));
    return add(c(roiStart * (inLen - 1)),
               mul(o, c((roiEnd - roiStart) * (inLen - 1) / (outLen - 1))));
  }
  if (mode == "tf_half_pixel_for_nn")
    return div(add(o, c(0.5)), c(scale));
  return add(div(add(o, c(0.5)), c(scale)), c(-0.5)); // half_pixel
}

/// One source index and its weight along one axis.
struct Tap {
  Value index;  // in-bounds index
  Value weight; // f64
  Value inside; // i1: the unclamped index was in range
};

FailureOr<Value> resize(OpBuilder &b, Location loc, nn::ResizeOp op, Value x, Value init) {
  if (!op.getScales())
    return op.emitOpError("needs constant scales for code generation"), failure();
  StringRef mode = op.getMode(), coord = op.getCoordinateTransformationMode();
  auto inShape = typeOf(x).getShape();
  int64_t rank = inShape.size();
  ArrayRef<double> scales = *op.getScales(), roi = op.getRoi();
  StringRef nearestMode = op.getNearestMode();
  Type t = typeOf(x).getElementType();
  Type f64 = b.getF64Type();
  bool u = isUnsignedElement(op.getInput().getType());
  double a = op.getCubicCoeffA().convertToDouble();
  bool excludeOutside = op.getExcludeOutside();
  double extrapolation = op.getExtrapolationValue().convertToDouble();
  return indexGeneric(b, loc, init, [&](OpBuilder &nb, Location l, ArrayRef<Value> out) -> Value {
    auto c = [&](double v) { return scalarConstant(nb, l, f64, v); };
    auto toIndex = [&](Value f) {
      return arith::IndexCastOp::create(nb, l, nb.getIndexType(),
                                        arith::FPToSIOp::create(nb, l, nb.getI64Type(), f));
    };
    auto inRange = [&](Value i, int64_t len) -> Value {
      return arith::AndIOp::create(nb, l, arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, i, indexConstant(nb, l, 0)),
                                   arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, i, indexConstant(nb, l, len)));
    };
    Value inside = arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
    SmallVector<SmallVector<Tap>> taps(rank);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t len = inShape[d];
      // Axes that keep their size and coordinates read one element.
      if (scales[d] == 1.0 && coord != "tf_crop_and_resize") {
        taps[d].push_back({out[d], c(1), arith::ConstantOp::create(nb, l, nb.getBoolAttr(true))});
        continue;
      }
      Value o = arith::SIToFPOp::create(nb, l, f64, arith::IndexCastOp::create(nb, l, nb.getI64Type(), out[d]));
      // Only tf_crop_and_resize reads roi; the other modes may leave it empty.
      bool crop = coord == "tf_crop_and_resize";
      Value s = sourceCoordinate(nb, l, coord, o, scales[d], len, crop ? roi[d] : 0, crop ? roi[rank + d] : 1);
      if (coord == "tf_crop_and_resize") {
        Value lo = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGE, s, c(0));
        Value hi = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLE, s, c(len - 1));
        inside = arith::AndIOp::create(nb, l, inside, arith::AndIOp::create(nb, l, lo, hi));
      }
      if (mode == "nearest") {
        Value r;
        if (nearestMode == "floor")
          r = math::FloorOp::create(nb, l, s);
        else if (nearestMode == "ceil")
          r = math::CeilOp::create(nb, l, s);
        else if (nearestMode == "round_prefer_ceil")
          r = math::FloorOp::create(nb, l, arith::AddFOp::create(nb, l, s, c(0.5)));
        else // round_prefer_floor
          r = math::CeilOp::create(nb, l, arith::SubFOp::create(nb, l, s, c(0.5)));
        Value i = toIndex(r);
        taps[d].push_back({clampIndex(nb, l, i, len), c(1), inRange(i, len)});
      } else if (mode == "linear") {
        Value sc = arith::MinimumFOp::create(nb, l, arith::MaximumFOp::create(nb, l, s, c(0)), c(len - 1));
        Value f = math::FloorOp::create(nb, l, sc);
        Value w = arith::SubFOp::create(nb, l, sc, f);
        Value i = toIndex(f);
        Value i1 = arith::AddIOp::create(nb, l, i, indexConstant(nb, l, 1));
        taps[d].push_back({clampIndex(nb, l, i, len), arith::SubFOp::create(nb, l, c(1), w), inRange(i, len)});
        taps[d].push_back({clampIndex(nb, l, i1, len), w, inRange(i1, len)});
      } else { // cubic: Keys' kernel with coefficient a over 4 taps.
        Value f = math::FloorOp::create(nb, l, s);
        Value frac = arith::SubFOp::create(nb, l, s, f);
        Value base = toIndex(f);
        auto kernel = [&](Value dist) -> Value { // dist >= 0
          Value d2 = arith::MulFOp::create(nb, l, dist, dist);
          Value d3 = arith::MulFOp::create(nb, l, d2, dist);
          // |x| <= 1: (a+2)|x|^3 - (a+3)|x|^2 + 1; 1 < |x| < 2: a|x|^3 - 5a|x|^2 + 8a|x| - 4a.
          Value near = arith::AddFOp::create(nb, l, arith::SubFOp::create(nb, l, arith::MulFOp::create(nb, l, c(a + 2), d3),
                                                                          arith::MulFOp::create(nb, l, c(a + 3), d2)), c(1));
          Value far = arith::AddFOp::create(
              nb, l, arith::SubFOp::create(nb, l, arith::MulFOp::create(nb, l, c(a), d3), arith::MulFOp::create(nb, l, c(5 * a), d2)),
              arith::SubFOp::create(nb, l, arith::MulFOp::create(nb, l, c(8 * a), dist), c(4 * a)));
          Value isNear = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLE, dist, c(1));
          return arith::SelectOp::create(nb, l, isNear, near, far);
        };
        SmallVector<Value> weights;
        Value total = c(0);
        for (int64_t k = -1; k <= 2; ++k) {
          Value i = arith::AddIOp::create(nb, l, base, indexConstant(nb, l, k));
          Value dist = math::AbsFOp::create(nb, l, arith::SubFOp::create(nb, l, frac, c(k)));
          Value w = kernel(dist);
          Value ok = inRange(i, len);
          if (excludeOutside)
            w = arith::SelectOp::create(nb, l, ok, w, c(0));
          total = arith::AddFOp::create(nb, l, total, w);
          taps[d].push_back({clampIndex(nb, l, i, len), w, ok});
        }
        if (excludeOutside)
          for (auto &tap : taps[d])
            tap.weight = arith::DivFOp::create(nb, l, tap.weight, total);
      }
    }
    // Sum over the product of the axes' taps.
    Value acc = c(0);
    SmallVector<size_t> choice(rank, 0);
    while (true) {
      SmallVector<Value> src;
      Value weight = c(1);
      for (int64_t d = 0; d < rank; ++d) {
        src.push_back(taps[d][choice[d]].index);
        weight = arith::MulFOp::create(nb, l, weight, taps[d][choice[d]].weight);
      }
      Value v = castScalar(nb, l, tensor::ExtractOp::create(nb, l, x, src), t, u, f64, false);
      acc = arith::AddFOp::create(nb, l, acc, arith::MulFOp::create(nb, l, v, weight));
      int64_t d = rank - 1;
      while (d >= 0 && ++choice[d] == taps[d].size())
        choice[d--] = 0;
      if (d < 0)
        break;
    }
    Value result;
    if (mode == "nearest" || !isa<FloatType>(t)) {
      // Nearest reads an element as-is; integer results round the weighted sum.
      result = mode == "nearest" ? castScalar(nb, l, acc, f64, false, t, u)
                                 : castScalar(nb, l, math::RoundEvenOp::create(nb, l, acc), f64, false, t, u);
    } else {
      result = castScalar(nb, l, acc, f64, false, t, u);
    }
    if (coord == "tf_crop_and_resize")
      result = arith::SelectOp::create(nb, l, inside, result, scalarConstant(nb, l, t, extrapolation));
    return result;
  });
}

/// TopK by ranking: output j along the axis is the element p whose rank
/// (elements before it in the order: larger, or equal with a lower index) is
/// j. O(k n^2) per row, which suits the small k and n of graph models.
SmallVector<Value> topK(OpBuilder &b, Location loc, nn::TopKOp op, Value x, ValueRange inits) {
  auto shape = typeOf(x).getShape();
  int64_t axis = op.getAxis(), n = shape[axis], rank = shape.size();
  bool largest = op.getLargest();
  bool u = isUnsignedElement(op.getInput().getType());
  Type t = typeOf(x).getElementType();
  SmallVector<utils::IteratorType> it(rank, utils::IteratorType::parallel);
  AffineMap id = b.getMultiDimIdentityMap(rank);
  return generic(b, loc, {}, inits, {id, id}, it,
                 [&](OpBuilder &nb, Location l, ValueRange) -> SmallVector<Value> {
    SmallVector<Value> index;
    for (int64_t d = 0; d < rank; ++d)
      index.push_back(linalg::IndexOp::create(nb, l, d));
    Value j = index[axis];
    auto at = [&](OpBuilder &bb, Value p) {
      SmallVector<Value> src(index);
      src[axis] = p;
      return (Value)tensor::ExtractOp::create(bb, l, x, src);
    };
    // before(q, p): q sorts before p.
    auto before = [&](OpBuilder &bb, Value xq, Value q, Value xp, Value p) -> Value {
      Value strict, equal;
      if (isa<FloatType>(t)) {
        strict = arith::CmpFOp::create(bb, l, largest ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT, xq, xp);
        equal = arith::CmpFOp::create(bb, l, arith::CmpFPredicate::OEQ, xq, xp);
      } else {
        auto pred = largest ? (u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
                            : (u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt);
        strict = arith::CmpIOp::create(bb, l, pred, xq, xp);
        equal = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::eq, xq, xp);
      }
      Value lower = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::ult, q, p);
      return arith::OrIOp::create(bb, l, strict, arith::AndIOp::create(bb, l, equal, lower));
    };
    Value zero = indexConstant(nb, l, 0), one = indexConstant(nb, l, 1), nv = indexConstant(nb, l, n);
    auto outer = scf::ForOp::create(
        nb, l, zero, nv, one, ValueRange{scalarConstant(nb, l, t, 0), scalarConstant(nb, l, nb.getI64Type(), 0)},
        [&](OpBuilder &ob, Location ol, Value p, ValueRange acc) {
          Value xp = at(ob, p);
          auto inner = scf::ForOp::create(
              ob, ol, zero, nv, one, ValueRange{zero},
              [&](OpBuilder &ib, Location il, Value q, ValueRange count) {
                Value isBefore = before(ib, at(ib, q), q, xp, p);
                Value next = arith::SelectOp::create(ib, il, isBefore,
                                                     arith::AddIOp::create(ib, il, count[0], one), count[0]);
                scf::YieldOp::create(ib, il, next);
              });
          Value hit = arith::CmpIOp::create(ob, ol, arith::CmpIPredicate::eq, inner.getResult(0), j);
          Value pi = arith::IndexCastOp::create(ob, ol, ob.getI64Type(), p);
          scf::YieldOp::create(ob, ol, ValueRange{arith::SelectOp::create(ob, ol, hit, xp, acc[0]),
                                                  arith::SelectOp::create(ob, ol, hit, pi, acc[1])});
        });
    return {outer.getResult(0), outer.getResult(1)};
  });
}

FailureOr<Value> einsum(OpBuilder &b, Location loc, nn::EinsumOp op, ValueRange inputs, Value init) {
  StringRef eq = op.getEquation();
  auto arrow = eq.find("->");
  StringRef outTerm = eq.substr(arrow + 2);
  SmallVector<StringRef> terms;
  eq.substr(0, arrow).split(terms, ',');
  // Output letters are the parallel dims, the other letters reduction dims.
  std::string letters = outTerm.str();
  for (StringRef term : terms)
    for (char c : term)
      if (letters.find(c) == std::string::npos)
        letters += c;
  MLIRContext *ctx = b.getContext();
  int64_t numDims = letters.size();
  auto exprsOf = [&](StringRef term) {
    SmallVector<AffineExpr> exprs;
    for (char c : term)
      exprs.push_back(getAffineDimExpr(letters.find(c), ctx));
    return AffineMap::get(numDims, 0, exprs, ctx);
  };
  SmallVector<AffineMap> maps;
  for (StringRef term : terms)
    maps.push_back(exprsOf(term));
  maps.push_back(exprsOf(outTerm));
  SmallVector<utils::IteratorType> it;
  for (int64_t i = 0; i < numDims; ++i)
    it.push_back(i < (int64_t)outTerm.size() ? utils::IteratorType::parallel : utils::IteratorType::reduction);
  Type t = typeOf(init).getElementType();
  Value zero = fill(b, loc, init, scalarConstant(b, loc, t, 0));
  bool isFloat = isa<FloatType>(t);
  return generic(b, loc, inputs, zero, maps, it,
                 [&](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
                   Value prod = s[0];
                   for (size_t i = 1; i + 1 < s.size(); ++i)
                     prod = isFloat ? (Value)arith::MulFOp::create(nb, l, prod, s[i])
                                    : (Value)arith::MulIOp::create(nb, l, prod, s[i]);
                   Value acc = s.back();
                   return {isFloat ? (Value)arith::AddFOp::create(nb, l, acc, prod)
                                   : (Value)arith::AddIOp::create(nb, l, acc, prod)};
                 })[0];
}

} // namespace

FailureOr<SmallVector<Value>> buildDataMovement(OpBuilder &b, Operation *op, ValueRange args,
                                                ValueRange inits, bool &matched) {
  matched = true;
  Location loc = op->getLoc();
  auto one = [](FailureOr<Value> v) -> FailureOr<SmallVector<Value>> {
    if (failed(v))
      return failure();
    return SmallVector<Value>{*v};
  };
  if (auto t = dyn_cast<nn::TransposeOp>(op))
    return SmallVector<Value>{transpose(b, loc, t, args[0], inits[0])};
  if (auto s = dyn_cast<nn::SliceOp>(op))
    return one(slice(b, loc, s, args[0], inits[0]));
  if (auto c = dyn_cast<nn::ConcatOp>(op))
    return SmallVector<Value>{concat(b, loc, c, args, inits[0])};
  if (auto s = dyn_cast<nn::SplitOp>(op))
    return split(b, loc, s, args[0], inits);
  if (auto g = dyn_cast<nn::GatherOp>(op))
    return SmallVector<Value>{gather(b, loc, g, args[0], args[1], inits[0])};
  if (auto g = dyn_cast<nn::GatherElementsOp>(op))
    return SmallVector<Value>{gatherElements(b, loc, g, args[0], args[1], inits[0])};
  if (auto p = dyn_cast<nn::PadOp>(op))
    return one(pad(b, loc, p, args[0], p.getValue() ? args.back() : Value(), inits[0]));
  if (isa<nn::TileOp>(op))
    return SmallVector<Value>{tile(b, loc, args[0], inits[0])};
  if (isa<nn::RangeOp>(op))
    return SmallVector<Value>{range(b, loc, args[0], args[2], inits[0])};
  if (auto r = dyn_cast<nn::ResizeOp>(op))
    return one(resize(b, loc, r, args[0], inits[0]));
  if (auto k = dyn_cast<nn::TopKOp>(op))
    return topK(b, loc, k, args[0], inits);
  if (auto e = dyn_cast<nn::EinsumOp>(op))
    return one(einsum(b, loc, e, args, inits[0]));
  matched = false;
  return failure();
}

} // namespace nncc::kernels
