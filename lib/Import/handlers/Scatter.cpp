/// Handlers of ScatterElements (and Scatter), ScatterND and MaxUnpool, built from a hit
/// mask (index == position) so that every update lands through where and
/// reduce_sum: no scatter kernel, and the updates of one position combine
/// as their reduction says (the last of duplicates is ONNX's undefined case
/// for 'none'; there they are summed).
#include "lib/Import/handlers/HandlerUtils.h"

using namespace mlir;

namespace nncc::import {
namespace {

/// The `reduction` attribute: none, add or mul.
FailureOr<std::string> scatterReduction(NodeContext &ctx) {
  std::string reduction = ctx.attrString("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul")
    return ctx.error("reduction '" + reduction + "' is not supported (none, add, mul are)");
  return reduction;
}

/// Combines `data` with the updates gathered per position: `hit` [M, P, 1...]
/// marks which of M updates [M, 1, R...] land on each of P positions of
/// `data` [P, R...].
Value combine(NodeContext &ctx, StringRef reduction, Value data, Value hit, Value updates,
              RankedTensorType spread) {
  auto dataType = cast<RankedTensorType>(data.getType());
  Type elem = dataType.getElementType();
  SmallVector<NamedAttribute> overUpdates{i64ArrayAttr(ctx, "axes", {0}),
                                          boolAttr(ctx, "keepdims", false)};
  if (reduction == "mul") {
    Value factors = build<nn::WhereOp>(ctx, spread, {hit, updates, ctx.scalar(elem, 1)});
    Value product = build<nn::ReduceProdOp>(ctx, dataType, factors, overUpdates);
    return build<nn::MulOp>(ctx, dataType, {data, product});
  }
  Value terms = build<nn::WhereOp>(ctx, spread, {hit, updates, ctx.scalar(elem, 0)});
  Value sum = build<nn::ReduceSumOp>(ctx, dataType, terms, overUpdates);
  if (reduction == "add")
    return build<nn::AddOp>(ctx, dataType, {data, sum});
  auto hitType = cast<RankedTensorType>(hit.getType());
  auto hitCountType = RankedTensorType::get(hitType.getShape(), ctx.builder().getI64Type());
  SmallVector<int64_t> countShape(hitType.getShape().drop_front());
  auto countType = RankedTensorType::get(countShape, ctx.builder().getI64Type());
  Value hits = build<nn::CastOp>(ctx, hitCountType, hit);
  Value count = build<nn::ReduceSumOp>(ctx, countType, hits, overUpdates);
  Value written = build<nn::GreaterOp>(
      ctx, RankedTensorType::get(countShape, ctx.builder().getI1Type()),
      {count, ctx.scalar(ctx.builder().getI64Type(), 0)});
  return build<nn::WhereOp>(ctx, dataType, {written, sum, data});
}

/// ScatterElements along `axis`, with the updates moved to the front and the
/// data's axis to position 1: [M, P, R...] spreads, M the updates, P the
/// axis positions, R the other dims (which updates must match).
LogicalResult scatterElements(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 3)))
    return failure();
  auto data = ctx.inputType(0), indices = ctx.inputType(1), updates = ctx.inputType(2);
  if (!data.hasStaticShape() || !indices.hasStaticShape() ||
      indices.getShape() != updates.getShape() || indices.getRank() != data.getRank())
    return ctx.error("needs static data and indices shapes, updates shaped as indices");
  int64_t rank = data.getRank();
  auto axis = axisAttr(ctx, "axis", 0, rank);
  auto reduction = scatterReduction(ctx);
  if (failed(axis) || failed(reduction))
    return failure();
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && indices.getShape()[d] != data.getShape()[d])
      return ctx.error("updates smaller than the data off the axis are not supported");
  // Move the axis to the front: data [P, R...], indices/updates [M, R...].
  SmallVector<int64_t> perm{*axis}, inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      perm.push_back(d);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = d;
  auto permute = [&](Value v, ArrayRef<int64_t> p) -> Value {
    if (*axis == 0)
      return v;
    auto t = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape;
    for (int64_t d : p)
      shape.push_back(t.getShape()[d]);
    return build<nn::TransposeOp>(ctx, RankedTensorType::get(shape, t.getElementType()), v,
                                  {i64ArrayAttr(ctx, "perm", p)});
  };
  Type i64 = ctx.builder().getI64Type(), i1 = ctx.builder().getI1Type();
  Value idx = ctx.input(1);
  if (indices.getElementType() != i64)
    idx = build<nn::CastOp>(ctx, RankedTensorType::get(indices.getShape(), i64), idx);
  int64_t positions = data.getShape()[*axis];
  Value negative = build<nn::LessOp>(ctx, RankedTensorType::get(indices.getShape(), i1),
                                     {idx, ctx.scalar(i64, 0)});
  Value wrapped = build<nn::AddOp>(ctx, idx.getType(), {idx, ctx.scalar(i64, (double)positions)});
  idx = build<nn::WhereOp>(ctx, idx.getType(), {negative, wrapped, idx});
  Value front = permute(ctx.input(0), perm);
  Value frontIdx = permute(idx, perm), frontUpd = permute(ctx.input(2), perm);
  auto frontUpdType = cast<RankedTensorType>(frontUpd.getType());
  SmallVector<int64_t> spreadShape(frontUpdType.getShape());
  spreadShape.insert(spreadShape.begin() + 1, positions);
  SmallVector<int64_t> column(frontUpdType.getShape());
  column.insert(column.begin() + 1, 1);
  SmallVector<int64_t> idsShape(rank + 1, 1);
  idsShape[1] = positions;
  SmallVector<int64_t> ids;
  for (int64_t p = 0; p < positions; ++p)
    ids.push_back(p);
  Value idxColumn = build<nn::ReshapeOp>(ctx, RankedTensorType::get(column, i64), frontIdx);
  Value hit = build<nn::EqualOp>(ctx, RankedTensorType::get(spreadShape, i1),
                                 {idxColumn, ctx.constantI64(ids, idsShape)});
  Value updColumn = build<nn::ReshapeOp>(
      ctx, RankedTensorType::get(column, data.getElementType()), frontUpd);
  Value combined = combine(ctx, *reduction, front, hit, updColumn,
                           RankedTensorType::get(spreadShape, data.getElementType()));
  out.push_back(permute(combined, inverse));
  return success();
}

/// ScatterND: the index tuples become linear positions into the data viewed
/// as [P, R...] (P the indexed dims, R the rest), the updates [M, R...].
LogicalResult scatterND(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 3)))
    return failure();
  auto data = ctx.inputType(0), indices = ctx.inputType(1), updates = ctx.inputType(2);
  if (!data.hasStaticShape() || !indices.hasStaticShape() || !updates.hasStaticShape() ||
      indices.getRank() < 1)
    return ctx.error("needs static data, indices and updates shapes");
  auto reduction = scatterReduction(ctx);
  if (failed(reduction))
    return failure();
  int64_t k = indices.getShape().back();
  if (k > data.getRank())
    return ctx.error("index tuples are longer than the data rank");
  Type i64 = ctx.builder().getI64Type(), i1 = ctx.builder().getI1Type();
  Type elem = data.getElementType();
  int64_t m = 1, positions = 1;
  for (int64_t d : indices.getShape().drop_back())
    m *= d;
  for (int64_t d : data.getShape().take_front(k))
    positions *= d;
  ArrayRef<int64_t> rest = data.getShape().drop_front(k);
  Value linear = linearIndex(ctx, ctx.input(1), data.getShape().take_front(k));
  SmallVector<int64_t> column{m, 1}, spreadShape{m, positions}, updShape{m, 1};
  SmallVector<int64_t> flatShape{positions};
  for (int64_t d : rest) {
    column.push_back(1);
    spreadShape.push_back(d);
    updShape.push_back(d);
    flatShape.push_back(d);
  }
  SmallVector<int64_t> idsShape(column.size(), 1), hitShape(column), ids;
  idsShape[1] = hitShape[1] = positions;
  for (int64_t p = 0; p < positions; ++p)
    ids.push_back(p);
  Value linearColumn = build<nn::ReshapeOp>(ctx, RankedTensorType::get(column, i64), linear);
  Value hit = build<nn::EqualOp>(ctx, RankedTensorType::get(hitShape, i1),
                                 {linearColumn, ctx.constantI64(ids, idsShape)});
  Value upd = build<nn::ReshapeOp>(ctx, RankedTensorType::get(updShape, elem), ctx.input(2));
  Value flat = build<nn::ReshapeOp>(ctx, RankedTensorType::get(flatShape, elem), ctx.input(0));
  Value combined =
      combine(ctx, *reduction, flat, hit, upd, RankedTensorType::get(spreadShape, elem));
  out.push_back(build<nn::ReshapeOp>(ctx, data, combined));
  return success();
}

/// MaxUnpool: zeros of the output shape with each input value at its flat
/// index (the indices MaxPool returns), a ScatterND into the flattened output.
LogicalResult maxUnpool(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto input = ctx.inputType(0), indices = ctx.inputType(1);
  if (!input.hasStaticShape() || input.getShape() != indices.getShape() || input.getRank() < 3)
    return ctx.error("needs static input and indices of one shape, rank >= 3");
  int64_t spatial = input.getRank() - 2;
  SmallVector<int64_t> kernel = ctx.attrInts("kernel_shape");
  SmallVector<int64_t> strides = ctx.attrInts("strides", SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> pads = ctx.attrInts("pads", SmallVector<int64_t>(2 * spatial, 0));
  if ((int64_t)kernel.size() != spatial || (int64_t)strides.size() != spatial ||
      (int64_t)pads.size() != 2 * spatial)
    return ctx.error("kernel_shape, strides and pads must match the spatial rank");
  // The indices address the inferred output; a larger output_shape pads it
  // at the end of each dim (as ONNX's reference does).
  SmallVector<int64_t> shape(input.getShape().take_front(2));
  for (int64_t d = 0; d < spatial; ++d)
    shape.push_back((input.getShape()[2 + d] - 1) * strides[d] - pads[d] - pads[spatial + d] +
                    kernel[d]);
  auto type = RankedTensorType::get(shape, input.getElementType());
  std::optional<SmallVector<int64_t>> given;
  if (ctx.input(2)) {
    given = ctx.constInts(2);
    if (!given)
      return ctx.error("output_shape must be a constant (bind it with --bind-input)");
    if (given->size() != shape.size())
      return ctx.error("output_shape does not match the input rank");
    for (auto [g, inferred] : llvm::zip(*given, shape))
      if (g < inferred)
        return ctx.error("output_shape is smaller than the unpooled shape");
  }
  Type elem = input.getElementType(), i64 = ctx.builder().getI64Type();
  int64_t m = input.getNumElements(), total = type.getNumElements();
  Value idx = ctx.input(1);
  if (indices.getElementType() != i64)
    idx = build<nn::CastOp>(ctx, RankedTensorType::get(indices.getShape(), i64), idx);
  Value column = build<nn::ReshapeOp>(ctx, RankedTensorType::get({m, 1}, i64), idx);
  SmallVector<int64_t> ids;
  for (int64_t p = 0; p < total; ++p)
    ids.push_back(p);
  Value hit = build<nn::EqualOp>(ctx, RankedTensorType::get({m, total}, ctx.builder().getI1Type()),
                                 {column, ctx.constantI64(ids, {1, total})});
  Value values = build<nn::ReshapeOp>(ctx, RankedTensorType::get({m, 1}, elem), ctx.input(0));
  Value placed = build<nn::WhereOp>(ctx, RankedTensorType::get({m, total}, elem),
                                    {hit, values, ctx.scalar(elem, 0)});
  Value flat = build<nn::ReduceSumOp>(ctx, RankedTensorType::get({total}, elem), placed,
                                      {i64ArrayAttr(ctx, "axes", {0}),
                                       boolAttr(ctx, "keepdims", false)});
  Value result = build<nn::ReshapeOp>(ctx, type, flat);
  if (given && ArrayRef<int64_t>(*given) != ArrayRef<int64_t>(shape)) {
    SmallVector<int64_t> padding(shape.size(), 0);
    for (auto [g, inferred] : llvm::zip(*given, shape))
      padding.push_back(g - inferred);
    result = nn::PadOp::create(ctx.builder(), ctx.loc(), RankedTensorType::get(*given, elem),
                               result, Value(), Value(),
                               ctx.builder().getDenseI64ArrayAttr(padding),
                               ctx.builder().getStringAttr("constant"));
  }
  out.push_back(result);
  return success();
}

} // namespace

void registerScatterHandlers(HandlerRegistry &r) {
  r.add("Scatter", 9, scatterElements);
  r.add("ScatterElements", 11, scatterElements);
  r.add("ScatterND", 11, scatterND);
  r.add("MaxUnpool", 11, maxUnpool);
}

} // namespace nncc::import
