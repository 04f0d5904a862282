/// Kernels of data-movement ops: transpose, slice, concat, split, gather,
/// gather_elements, pad, tile, range, resize, einsum.
#include "lib/Conversion/NNToExec/KernelBuilders.h"
#include "lib/Conversion/NNToExec/LinalgUtils.h"

#include "dialects/NN/NNOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace nncc::kernels {
namespace {

Value cst(OpBuilder &b, Location loc, Type t, double v) { return scalarConstant(b, loc, t, v); }
Value idx(OpBuilder &b, Location loc, int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

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

/// Clamps an index value to [0, size).
Value clampIndex(OpBuilder &b, Location loc, Value i, int64_t size) {
  Value lo = arith::MaxSIOp::create(b, loc, i, idx(b, loc, 0));
  return arith::MinSIOp::create(b, loc, lo, idx(b, loc, size - 1));
}

/// An integer index element (i32/i64, possibly negative: wraps once) as an
/// in-bounds `index`.
Value wrapIndex(OpBuilder &b, Location loc, Value v, int64_t size) {
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, idx(b, loc, 0));
  Value wrapped = arith::SelectOp::create(b, loc, neg, arith::AddIOp::create(b, loc, i, idx(b, loc, size)), i);
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
  MLIRContext *ctx = b.getContext();
  int64_t rank = typeOf(x).getRank();
  if (typeOf(init).getNumElements() == 0)
    return init;
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    exprs.push_back(getAffineDimExpr(d, ctx) * (*op.getSteps())[d] + (*op.getStarts())[d]);
  return generic(b, loc, x, init, {AffineMap::get(rank, 0, exprs, ctx), b.getMultiDimIdentityMap(rank)},
                 parallel(rank), [](OpBuilder &, Location, ValueRange s) -> SmallVector<Value> {
                   return {s[0]};
                 })[0];
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
      Value i = arith::SubIOp::create(nb, l, out[d], idx(nb, l, pads[d]));
      if (mode == "constant") {
        Value inLo = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, i, idx(nb, l, 0));
        Value inHi = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, i, idx(nb, l, n));
        valid = arith::AndIOp::create(nb, l, valid, arith::AndIOp::create(nb, l, inLo, inHi));
        src.push_back(n > 0 ? clampIndex(nb, l, i, n) : idx(nb, l, 0));
      } else if (mode == "edge") {
        src.push_back(clampIndex(nb, l, i, n));
      } else if (mode == "wrap") {
        // ((i % n) + n) % n
        Value r = arith::RemSIOp::create(nb, l, i, idx(nb, l, n));
        r = arith::RemSIOp::create(nb, l, arith::AddIOp::create(nb, l, r, idx(nb, l, n)), idx(nb, l, n));
        src.push_back(r);
      } else { // reflect: period 2(n-1), mirror without repeating the edge.
        if (n == 1) {
          src.push_back(idx(nb, l, 0));
          continue;
        }
        int64_t period = 2 * (n - 1);
        Value r = arith::RemSIOp::create(nb, l, i, idx(nb, l, period));
        r = arith::RemSIOp::create(nb, l, arith::AddIOp::create(nb, l, r, idx(nb, l, period)), idx(nb, l, period));
        Value over = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, r, idx(nb, l, n));
        src.push_back(arith::SelectOp::create(nb, l, over, arith::SubIOp::create(nb, l, idx(nb, l, period), r), r));
      }
    }
    if (typeOf(x).getNumElements() == 0)
      return padValue ? (Value)tensor::ExtractOp::create(nb, l, padValue, ValueRange{}) : cst(nb, l, t, 0);
    Value v = tensor::ExtractOp::create(nb, l, x, src);
    if (mode != "constant")
      return v;
    Value fillV = padValue ? (Value)tensor::ExtractOp::create(nb, l, padValue, ValueRange{}) : cst(nb, l, t, 0);
    return arith::SelectOp::create(nb, l, valid, v, fillV);
  });
}

Value tile(OpBuilder &b, Location loc, Value x, Value init) {
  auto shape = typeOf(x).getShape();
  return indexGeneric(b, loc, init, [&](OpBuilder &nb, Location l, ArrayRef<Value> out) {
    SmallVector<Value> src;
    for (size_t d = 0; d < shape.size(); ++d)
      src.push_back(arith::RemUIOp::create(nb, l, out[d], idx(nb, l, shape[d])));
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
Value sourceCoordinate(OpBuilder &b, Location loc, StringRef mode, Value o, double scale,
                       int64_t inLen, int64_t outLen, double roiStart, double roiEnd) {
  Type f64 = b.getF64Type();
  auto c = [&](double v) { return cst(b, loc, f64, v); };
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
    if (outLen == 1)
      return c((roiEnd - roiStart) * (inLen - 1) / 2 + roiStart * (inLen - 1));
    return add(c(roiStart * (inLen - 1)),
               mul(o, c((roiEnd - roiStart) * (inLen - 1) / (outLen - 1))));
  }
  if (mode == "tf_half_pixel_for_nn")
    return div(add(o, c(0.5)), c(scale));
  // half_pixel (default) and half_pixel_symmetric's common form.
  return add(div(add(o, c(0.5)), c(scale)), c(-0.5));
}

FailureOr<Value> resize(OpBuilder &b, Location loc, nn::ResizeOp op, Value x, Value init) {
  if (!op.getScales())
    return op.emitOpError("needs constant scales for code generation"), failure();
  StringRef mode = op.getMode(), coord = op.getCoordinateTransformationMode();
  if (mode == "cubic")
    return op.emitOpError("cubic interpolation has no CPU lowering yet"), failure();
  auto inShape = typeOf(x).getShape(), outShape = typeOf(init).getShape();
  int64_t rank = inShape.size();
  ArrayRef<double> scales = *op.getScales(), roi = op.getRoi();
  StringRef nearestMode = op.getNearestMode();
  Type t = typeOf(x).getElementType();
  Type f64 = b.getF64Type();
  double extrapolation = op.getExtrapolationValue().convertToDouble();
  return indexGeneric(b, loc, init, [&](OpBuilder &nb, Location l, ArrayRef<Value> out) -> Value {
    SmallVector<Value> coords;     // per axis, f64 source coordinate
    Value inside = arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
    for (int64_t d = 0; d < rank; ++d) {
      Value o = arith::SIToFPOp::create(nb, l, f64, arith::IndexCastOp::create(nb, l, nb.getI64Type(), out[d]));
      Value s = sourceCoordinate(nb, l, coord, o, scales[d], inShape[d], outShape[d], roi[d], roi[rank + d]);
      if (coord == "tf_crop_and_resize") {
        Value lo = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGE, s, cst(nb, l, f64, 0));
        Value hi = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLE, s, cst(nb, l, f64, inShape[d] - 1));
        inside = arith::AndIOp::create(nb, l, inside, arith::AndIOp::create(nb, l, lo, hi));
      }
      coords.push_back(s);
    }
    auto toIndex = [&](Value f, int64_t len) {
      Value i = arith::FPToSIOp::create(nb, l, nb.getI64Type(), f);
      return clampIndex(nb, l, arith::IndexCastOp::create(nb, l, nb.getIndexType(), i), len);
    };
    Value result;
    if (mode == "nearest") {
      SmallVector<Value> src;
      for (int64_t d = 0; d < rank; ++d) {
        Value s = coords[d], r;
        if (nearestMode == "floor")
          r = math::FloorOp::create(nb, l, s);
        else if (nearestMode == "ceil")
          r = math::CeilOp::create(nb, l, s);
        else if (nearestMode == "round_prefer_ceil")
          r = math::FloorOp::create(nb, l, arith::AddFOp::create(nb, l, s, cst(nb, l, f64, 0.5)));
        else // round_prefer_floor
          r = math::CeilOp::create(nb, l, arith::SubFOp::create(nb, l, s, cst(nb, l, f64, 0.5)));
        // Integer inputs to round_*: x.5 cases are handled by the +-0.5 forms.
        src.push_back(toIndex(r, inShape[d]));
      }
      result = tensor::ExtractOp::create(nb, l, x, src);
    } else { // linear: multilinear over the axes whose size changes or whose coordinate moves.
      SmallVector<Value> lo, hi, w;
      for (int64_t d = 0; d < rank; ++d) {
        Value s = arith::MaximumFOp::create(nb, l, coords[d], cst(nb, l, f64, 0));
        s = arith::MinimumFOp::create(nb, l, s, cst(nb, l, f64, inShape[d] - 1));
        Value f = math::FloorOp::create(nb, l, s);
        lo.push_back(toIndex(f, inShape[d]));
        hi.push_back(toIndex(arith::AddFOp::create(nb, l, f, cst(nb, l, f64, 1)), inShape[d]));
        w.push_back(arith::SubFOp::create(nb, l, s, f));
      }
      Value acc = cst(nb, l, f64, 0);
      for (int64_t corner = 0; corner < (1 << rank); ++corner) {
        SmallVector<Value> src;
        Value weight = cst(nb, l, f64, 1);
        for (int64_t d = 0; d < rank; ++d) {
          bool upper = corner & (1 << d);
          src.push_back(upper ? hi[d] : lo[d]);
          Value wd = upper ? w[d] : (Value)arith::SubFOp::create(nb, l, cst(nb, l, f64, 1), w[d]);
          weight = arith::MulFOp::create(nb, l, weight, wd);
        }
        Value v = castScalar(nb, l, tensor::ExtractOp::create(nb, l, x, src), t,
                             isUnsignedElement(op.getInput().getType()), f64, false);
        acc = arith::AddFOp::create(nb, l, acc, arith::MulFOp::create(nb, l, v, weight));
      }
      result = castScalar(nb, l, acc, f64, false, t, isUnsignedElement(op.getInput().getType()));
    }
    if (coord == "tf_crop_and_resize")
      result = arith::SelectOp::create(nb, l, inside, result, cst(nb, l, t, extrapolation));
    return result;
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
  Value zero = fill(b, loc, init, cst(b, loc, t, 0));
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
  if (auto e = dyn_cast<nn::EinsumOp>(op))
    return one(einsum(b, loc, e, args, inits[0]));
  matched = false;
  return failure();
}

} // namespace nncc::kernels
