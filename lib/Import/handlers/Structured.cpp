/// Handlers of ops built from index masks and axis shuffles: Hardmax, OneHot,
/// Trilu, EyeLike (a mask compared or selected with), GatherND (a linear
/// index), Compress and ReverseSequence (constant gathers), Det (2x2 and 3x3
/// cofactors), DepthToSpace and SpaceToDepth (reshape, transpose, reshape), and
/// the window functions of a constant size (constants).
#include "lib/Import/handlers/HandlerUtils.h"
#include "lib/Import/TensorConversion.h"

#include <cmath>

using namespace mlir;

namespace nncc::import {
namespace {

/// An i64 constant of `rank` dims, all 1 but `axis`, holding 0..size-1.
Value classIds(NodeContext &ctx, int64_t rank, int64_t axis, int64_t size) {
  SmallVector<int64_t> shape(rank, 1), ids;
  shape[axis] = size;
  for (int64_t i = 0; i < size; ++i)
    ids.push_back(i);
  return ctx.constantI64(ids, shape);
}

/// An i1 constant [rows, cols] that is true where `pred(row, col)`.
Value matrixMask(NodeContext &ctx, int64_t rows, int64_t cols,
                 llvm::function_ref<bool(int64_t, int64_t)> pred) {
  SmallVector<bool> values;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      values.push_back(pred(i, j));
  auto type = RankedTensorType::get({rows, cols}, ctx.builder().getI1Type());
  return ctx.constant(DenseElementsAttr::get(type, ArrayRef<bool>(values)));
}

/// Hardmax: 1 at the first maximum along `axis`, 0 elsewhere.
LogicalResult hardmax(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = ctx.inputType(0);
  auto axis = axisAttr(ctx, "axis", -1, type.getRank());
  if (failed(axis))
    return failure();
  if (type.isDynamicDim(*axis))
    return ctx.error("the axis dim must be static");
  SmallVector<int64_t> kept(type.getShape());
  kept[*axis] = 1;
  Value argmax = build<nn::ArgMaxOp>(
      ctx, RankedTensorType::get(kept, ctx.builder().getI64Type()), ctx.input(0),
      {i64Attr(ctx, "axis", *axis), boolAttr(ctx, "keepdims", true),
       boolAttr(ctx, "select_last_index", false)});
  Value ids = classIds(ctx, type.getRank(), *axis, type.getShape()[*axis]);
  auto mask = RankedTensorType::get(type.getShape(), ctx.builder().getI1Type());
  Value hot = build<nn::EqualOp>(ctx, mask, {argmax, ids});
  out.push_back(build<nn::CastOp>(ctx, type, hot));
  return success();
}

/// OneHot: `values[1]` where the (wrapped) index equals the position along
/// the new axis, `values[0]` elsewhere; indices outside [-depth, depth) give
/// a row of `values[0]`.
LogicalResult oneHot(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 3)))
    return failure();
  auto indices = ctx.inputType(0);
  if (!indices.hasStaticShape())
    return ctx.error("needs a static indices shape");
  std::optional<int64_t> depth;
  if (auto ints = ctx.constInts(1); ints && ints->size() == 1)
    depth = (*ints)[0];
  else if (auto floats = ctx.constFloats(1); floats && floats->size() == 1)
    depth = (int64_t)(*floats)[0];
  if (!depth)
    return ctx.error("depth must be a constant scalar");
  if (*depth <= 0)
    return ctx.error("depth " + llvm::Twine(*depth) + " is not positive");
  auto values = ctx.inputType(2);
  if (values.getRank() != 1 || values.getShape()[0] != 2)
    return ctx.error("values must hold 2 entries [off, on]");
  int64_t rank = indices.getRank() + 1;
  auto axis = axisAttr(ctx, "axis", -1, rank);
  if (failed(axis))
    return failure();
  Type i64 = ctx.builder().getI64Type(), i1 = ctx.builder().getI1Type();
  Value idx = ctx.input(0);
  auto idxType = RankedTensorType::get(indices.getShape(), i64);
  if (indices.getElementType() != i64)
    idx = build<nn::CastOp>(ctx, idxType, idx);
  Value zero = ctx.scalar(i64, 0);
  Value negative = build<nn::LessOp>(ctx, RankedTensorType::get(indices.getShape(), i1), {idx, zero});
  Value wrapped = build<nn::AddOp>(ctx, idxType, {idx, ctx.scalar(i64, (double)*depth)});
  idx = build<nn::WhereOp>(ctx, idxType, {negative, wrapped, idx});
  SmallVector<int64_t> kept(indices.getShape()), shape(indices.getShape());
  kept.insert(kept.begin() + *axis, 1);
  shape.insert(shape.begin() + *axis, *depth);
  idx = build<nn::ReshapeOp>(ctx, RankedTensorType::get(kept, i64), idx);
  Value ids = classIds(ctx, rank, *axis, *depth);
  Value hot = build<nn::EqualOp>(ctx, RankedTensorType::get(shape, i1), {idx, ids});
  auto scalarType = RankedTensorType::get({}, values.getElementType());
  auto pickValue = [&](int64_t i) -> Value {
    return build<nn::GatherOp>(ctx, scalarType, {ctx.input(2), ctx.constantI64({i}, {})},
                               {i64Attr(ctx, "axis", 0)});
  };
  Value off = pickValue(0), on = pickValue(1);
  auto type = RankedTensorType::get(shape, values.getElementType());
  out.push_back(build<nn::WhereOp>(ctx, type, {hot, on, off}));
  return success();
}

/// Trilu keeps the upper (col - row >= k) or lower (col - row <= k) triangle
/// of the last two dims and zeroes the rest.
LogicalResult trilu(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = ctx.inputType(0);
  int64_t rank = type.getRank();
  if (rank < 2 || type.isDynamicDim(rank - 1) || type.isDynamicDim(rank - 2))
    return ctx.error("needs an input of rank >= 2 with static last two dims");
  int64_t k = 0;
  if (ctx.input(1)) {
    auto given = ctx.constInts(1);
    if (!given || given->size() != 1)
      return ctx.error("k must be a constant scalar (bind it with --bind-input)");
    k = (*given)[0];
  }
  bool upper = ctx.attrInt("upper", 1) != 0;
  Value mask = matrixMask(ctx, type.getShape()[rank - 2], type.getShape()[rank - 1],
                          [&](int64_t i, int64_t j) { return upper ? j - i >= k : j - i <= k; });
  Value zero = ctx.scalar(type.getElementType(), 0);
  out.push_back(build<nn::WhereOp>(ctx, type, {mask, ctx.input(0), zero}));
  return success();
}

/// EyeLike: ones on the k-th diagonal of a static 2-d shape, in `dtype`.
LogicalResult eyeLike(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto input = ctx.inputType(0);
  if (input.getRank() != 2 || !input.hasStaticShape())
    return ctx.error("needs a static 2-d input");
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  int64_t k = ctx.attrInt("k", 0);
  Value mask = matrixMask(ctx, input.getShape()[0], input.getShape()[1],
                          [&](int64_t i, int64_t j) { return j - i == k; });
  out.push_back(build<nn::CastOp>(ctx, *type, mask));
  return success();
}

/// GatherND as one Gather: the index tuples (negatives wrapped) and the batch
/// position become a row-major linear index into the data viewed as
/// [batch * indexed dims, rest...].
LogicalResult gatherND(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto data = ctx.inputType(0), indices = ctx.inputType(1);
  if (!data.hasStaticShape() || !indices.hasStaticShape() || indices.getRank() < 1)
    return ctx.error("needs static data and indices shapes");
  int64_t b = ctx.attrInt("batch_dims", 0), k = indices.getShape().back();
  int64_t q = indices.getRank();
  if (b < 0 || b >= q || b + k > data.getRank())
    return ctx.error("batch_dims and the index tuple length do not fit the data rank");
  for (int64_t d = 0; d < b; ++d)
    if (data.getShape()[d] != indices.getShape()[d])
      return ctx.error("the batch dims of data and indices differ");
  Value linear = linearIndex(ctx, ctx.input(1), data.getShape().slice(b, k));
  ArrayRef<int64_t> tupleShape = indices.getShape().drop_back();
  Type i64 = ctx.builder().getI64Type();
  auto tupleType = RankedTensorType::get(tupleShape, i64);
  int64_t tuples = 1, batches = 1;
  for (int64_t j = 0; j < k; ++j)
    tuples *= data.getShape()[b + j];
  SmallVector<int64_t> batchShape(tupleShape.size(), 1), batchIds;
  for (int64_t d = 0; d < b; ++d) {
    batchShape[d] = data.getShape()[d];
    batches *= data.getShape()[d];
  }
  if (b > 0) {
    for (int64_t i = 0; i < batches; ++i)
      batchIds.push_back(i * tuples);
    Value offsets = ctx.constantI64(batchIds, batchShape);
    linear = build<nn::AddOp>(ctx, tupleType, {linear, offsets});
  }
  SmallVector<int64_t> flatShape{batches * tuples}, shape(tupleShape);
  for (int64_t d : data.getShape().drop_front(b + k)) {
    flatShape.push_back(d);
    shape.push_back(d);
  }
  Type elem = data.getElementType();
  Value flat = build<nn::ReshapeOp>(ctx, RankedTensorType::get(flatShape, elem), ctx.input(0));
  out.push_back(build<nn::GatherOp>(ctx, RankedTensorType::get(shape, elem), {flat, linear},
                                    {i64Attr(ctx, "axis", 0)}));
  return success();
}

/// Compress with a constant condition (bound with --bind-input when it is a
/// graph input) is a Gather of the selected positions; without an axis the
/// input is flattened first.
LogicalResult compress(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto input = ctx.inputType(0);
  auto condition = ctx.constInput(1);
  if (!condition || !condition->getElementType().isInteger(1))
    return ctx.error("condition must be a constant bool tensor (bind it with --bind-input)");
  if (!input.hasStaticShape())
    return ctx.error("needs a static input shape");
  Value x = ctx.input(0);
  int64_t axis = 0;
  if (ctx.hasAttr("axis")) {
    auto normalized = axisAttr(ctx, "axis", 0, input.getRank());
    if (failed(normalized))
      return failure();
    axis = *normalized;
  } else {
    x = build<nn::ReshapeOp>(
        ctx, RankedTensorType::get({input.getNumElements()}, input.getElementType()), x);
  }
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t dim = xType.getShape()[axis];
  SmallVector<int64_t> selected;
  for (auto [i, keep] : llvm::enumerate(condition->getValues<bool>()))
    if (keep && (int64_t)i < dim)
      selected.push_back(i);
  if (selected.empty())
    return ctx.error("the condition selects nothing (empty results are not supported)");
  SmallVector<int64_t> shape(xType.getShape());
  shape[axis] = selected.size();
  Value indices = ctx.constantI64(selected, {(int64_t)selected.size()});
  out.push_back(build<nn::GatherOp>(ctx, RankedTensorType::get(shape, xType.getElementType()),
                                    {x, indices}, {i64Attr(ctx, "axis", axis)}));
  return success();
}

/// ReverseSequence with constant sequence_lens is a GatherElements along the
/// time axis: position t of batch b reads len[b] - 1 - t while t < len[b].
LogicalResult reverseSequence(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto input = ctx.inputType(0);
  auto lens = ctx.constInts(1);
  if (!lens)
    return ctx.error("sequence_lens must be a constant (bind it with --bind-input)");
  if (!input.hasStaticShape() || input.getRank() < 2)
    return ctx.error("needs a static input of rank >= 2");
  auto timeAxis = axisAttr(ctx, "time_axis", 0, input.getRank());
  auto batchAxis = axisAttr(ctx, "batch_axis", 1, input.getRank());
  if (failed(timeAxis) || failed(batchAxis))
    return failure();
  if (*timeAxis == *batchAxis)
    return ctx.error("time_axis and batch_axis must differ");
  ArrayRef<int64_t> shape = input.getShape();
  if ((int64_t)lens->size() != shape[*batchAxis])
    return ctx.error("sequence_lens must hold one length per batch entry");
  SmallVector<int64_t> source(input.getNumElements()), coord(shape.size());
  for (int64_t linear = 0; linear < input.getNumElements(); ++linear) {
    int64_t rest = linear;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      coord[d] = rest % shape[d];
      rest /= shape[d];
    }
    int64_t t = coord[*timeAxis], len = (*lens)[coord[*batchAxis]];
    if (len < 0 || len > shape[*timeAxis])
      return ctx.error("sequence length " + llvm::Twine(len) + " is out of range");
    source[linear] = t < len ? len - 1 - t : t;
  }
  Value indices = ctx.constantI64(source, shape);
  out.push_back(build<nn::GatherElementsOp>(ctx, input, {ctx.input(0), indices},
                                            {i64Attr(ctx, "axis", *timeAxis)}));
  return success();
}

/// Det of 2x2 and 3x3 matrices by cofactor expansion over the entries
/// (gathered from the flattened last two dims).
LogicalResult det(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = ctx.inputType(0);
  int64_t rank = type.getRank();
  if (rank < 2 || !type.hasStaticShape() || type.getShape()[rank - 1] != type.getShape()[rank - 2])
    return ctx.error("needs static square matrices in the last two dims");
  int64_t n = type.getShape()[rank - 1];
  if (n != 2 && n != 3)
    return ctx.error("only 2x2 and 3x3 matrices are supported (got " + llvm::Twine(n) + "x" +
                     llvm::Twine(n) + ")");
  Type elem = type.getElementType();
  SmallVector<int64_t> batch(type.getShape().drop_back(2)), flatShape(batch);
  flatShape.push_back(n * n);
  auto batchType = RankedTensorType::get(batch, elem);
  Value flat = build<nn::ReshapeOp>(ctx, RankedTensorType::get(flatShape, elem), ctx.input(0));
  auto entry = [&](int64_t i, int64_t j) -> Value {
    return build<nn::GatherOp>(ctx, batchType, {flat, ctx.constantI64({i * n + j}, {})},
                               {i64Attr(ctx, "axis", rank - 2)});
  };
  auto mul = [&](Value a, Value b) -> Value { return build<nn::MulOp>(ctx, batchType, {a, b}); };
  auto sub = [&](Value a, Value b) -> Value { return build<nn::SubOp>(ctx, batchType, {a, b}); };
  // Built one statement at a time so the IR's order does not depend on the
  // compiler's order of argument evaluation.
  auto minor = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    Value a = entry(r0, c0);
    Value d = entry(r1, c1);
    Value ad = mul(a, d);
    Value b = entry(r0, c1);
    Value c = entry(r1, c0);
    Value bc = mul(b, c);
    return sub(ad, bc);
  };
  auto term = [&](int64_t col, int64_t c0, int64_t c1) {
    Value e = entry(0, col);
    Value m = minor(1, 2, c0, c1);
    return mul(e, m);
  };
  Value result;
  if (n == 2) {
    result = minor(0, 1, 0, 1);
  } else {
    Value t0 = term(0, 1, 2);
    Value t1 = term(1, 0, 2);
    Value t2 = term(2, 0, 1);
    Value difference = sub(t0, t1);
    result = build<nn::AddOp>(ctx, batchType, {difference, t2});
  }
  out.push_back(result);
  return success();
}

/// The window functions with a constant size (bound with --bind-input when
/// it is a graph input) are constants: a0 - a1 cos(2 pi n / d) + a2 cos(4 pi n / d)
/// with d = size (periodic) or size - 1 (symmetric).
template <int kind> // 0 Hann, 1 Hamming, 2 Blackman
LogicalResult window(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto size = ctx.constInts(0);
  if (!size || size->size() != 1)
    return ctx.error("size must be a constant scalar (bind it with --bind-input)");
  int64_t n = (*size)[0];
  if (n <= 0)
    return ctx.error("size " + llvm::Twine(n) + " is not positive");
  auto elem = convertElementType(ctx.attrInt("output_datatype", 1), ctx.context());
  if (!elem)
    return ctx.error(llvm::toString(elem.takeError()));
  auto floatType = dyn_cast<FloatType>(*elem);
  if (!floatType)
    return ctx.error("output_datatype must be a float type");
  const double coefficients[3][3] = {
      {0.5, 0.5, 0.0}, {25.0 / 46.0, 21.0 / 46.0, 0.0}, {0.42, 0.5, 0.08}};
  const double *a = coefficients[kind];
  double d = ctx.attrInt("periodic", 1) ? n : n - 1;
  SmallVector<APFloat> values;
  for (int64_t i = 0; i < n; ++i) {
    double angle = d > 0 ? 2 * M_PI * i / d : 0;
    APFloat v(a[0] - a[1] * std::cos(angle) + a[2] * std::cos(2 * angle));
    bool lost;
    v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    values.push_back(v);
  }
  out.push_back(ctx.constant(DenseElementsAttr::get(RankedTensorType::get({n}, floatType), values)));
  return success();
}

/// Reshapes `x` to `split`, permutes with `perm` and reshapes to `result`.
Value shuffle(NodeContext &ctx, Value x, ArrayRef<int64_t> split, ArrayRef<int64_t> perm,
              ArrayRef<int64_t> result) {
  Type elem = cast<RankedTensorType>(x.getType()).getElementType();
  Value v = build<nn::ReshapeOp>(ctx, RankedTensorType::get(split, elem), x);
  SmallVector<int64_t> permuted;
  for (int64_t p : perm)
    permuted.push_back(split[p]);
  v = build<nn::TransposeOp>(ctx, RankedTensorType::get(permuted, elem), v,
                             {i64ArrayAttr(ctx, "perm", perm)});
  return build<nn::ReshapeOp>(ctx, RankedTensorType::get(result, elem), v);
}

/// The static [N, C, H, W] input and blocksize of DepthToSpace/SpaceToDepth.
FailureOr<std::pair<SmallVector<int64_t>, int64_t>> blockInput(NodeContext &ctx) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = ctx.inputType(0);
  if (type.getRank() != 4 || !type.hasStaticShape())
    return ctx.error("needs a static 4-d input");
  int64_t b = ctx.attrInt("blocksize", 0);
  if (b <= 0)
    return ctx.error("blocksize must be positive");
  return std::pair{SmallVector<int64_t>(type.getShape()), b};
}

LogicalResult depthToSpace(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  auto in = blockInput(ctx);
  if (failed(in))
    return failure();
  auto [s, b] = *in;
  int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  if (c % (b * b))
    return ctx.error("channels are not a multiple of blocksize^2");
  std::string mode = ctx.attrString("mode", "DCR");
  SmallVector<int64_t> result{n, c / (b * b), h * b, w * b};
  if (mode == "DCR")
    out.push_back(shuffle(ctx, ctx.input(0), {n, b, b, c / (b * b), h, w}, {0, 3, 4, 1, 5, 2},
                          result));
  else if (mode == "CRD")
    out.push_back(shuffle(ctx, ctx.input(0), {n, c / (b * b), b, b, h, w}, {0, 1, 4, 2, 5, 3},
                          result));
  else
    return ctx.error("mode '" + mode + "' is not DCR or CRD");
  return success();
}

LogicalResult spaceToDepth(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  auto in = blockInput(ctx);
  if (failed(in))
    return failure();
  auto [s, b] = *in;
  int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  if (h % b || w % b)
    return ctx.error("height and width are not multiples of blocksize");
  out.push_back(shuffle(ctx, ctx.input(0), {n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4},
                        {n, c * b * b, h / b, w / b}));
  return success();
}

} // namespace

void registerStructuredHandlers(HandlerRegistry &r) {
  r.add("Hardmax", 13, hardmax);
  r.add("OneHot", 11, oneHot);
  r.add("Trilu", 14, trilu);
  r.add("EyeLike", 9, eyeLike);
  r.add("GatherND", 12, gatherND);
  r.add("Compress", 11, compress);
  r.add("Det", 11, det);
  r.add("HannWindow", 17, window<0>);
  r.add("HammingWindow", 17, window<1>);
  r.add("BlackmanWindow", 17, window<2>);
  r.add("ReverseSequence", 10, reverseSequence);
  r.add("DepthToSpace", 11, depthToSpace);
  r.add("SpaceToDepth", 1, spaceToDepth);
}

} // namespace nncc::import
