/// Row kernels: layer_norm, softmax/log_softmax over the last axis and
/// attention as ONE top-level parallel loop (scf.forall) over rows, each
/// iteration doing its row's reductions and writes. The GPU backend maps the
/// loop to one thread per row; the CPU splits it across threads. Producers
/// inlined through ElementReader are recomputed where they are read.
#include "lib/Conversion/NNToExec/RowKernels.h"

#include "lib/Conversion/NNToExec/KernelBuilders.h"
#include "lib/Conversion/NNToExec/LinalgUtils.h"

#include "dialects/NN/NNOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;

namespace nncc {
namespace {

ArrayRef<int64_t> shapeOf(Value v) { return cast<RankedTensorType>(v.getType()).getShape(); }

/// Row-major multi-index of the linear index `linear` in `shape`.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear, ArrayRef<int64_t> shape) {
  SmallVector<Value> index(shape.size());
  for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
    if (d == 0) {
      index[d] = linear;
      break;
    }
    Value size = indexConstant(b, loc, shape[d]);
    index[d] = arith::RemUIOp::create(b, loc, linear, size);
    linear = arith::DivUIOp::create(b, loc, linear, size);
  }
  return index;
}

Value linearize(OpBuilder &b, Location loc, ArrayRef<Value> index, ArrayRef<int64_t> shape) {
  if (index.empty())
    return indexConstant(b, loc, 0);
  Value linear = index.front();
  for (auto [i, size] : llvm::zip(index.drop_front(), shape.drop_front()))
    linear = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, linear, indexConstant(b, loc, size)), i);
  return linear;
}

/// The index into `source` of element `index` of its reshape to `shape`.
/// Reshapes that only split or only merge dims map each group of dims on its
/// own, so a split of the last dim keeps unit-stride reads unit-stride (and
/// vectorizable); others go through the linear index.
SmallVector<Value> reshapeIndex(OpBuilder &b, Location loc, ArrayRef<Value> index, ArrayRef<int64_t> shape,
                                ArrayRef<int64_t> source) {
  auto typeOf = [&](ArrayRef<int64_t> s) { return RankedTensorType::get(s, b.getF32Type()); };
  if (shape.size() > source.size()) {
    if (auto groups = getReassociationIndicesForReshape(typeOf(shape), typeOf(source))) {
      SmallVector<Value> out;
      for (const ReassociationIndices &group : *groups) {
        SmallVector<Value> part;
        SmallVector<int64_t> sizes;
        for (int64_t d : group) {
          part.push_back(index[d]);
          sizes.push_back(shape[d]);
        }
        out.push_back(linearize(b, loc, part, sizes));
      }
      return out;
    }
  } else if (shape.size() < source.size()) {
    if (auto groups = getReassociationIndicesForReshape(typeOf(source), typeOf(shape))) {
      SmallVector<Value> out;
      for (auto [k, group] : llvm::enumerate(*groups)) {
        SmallVector<int64_t> sizes;
        for (int64_t d : group)
          sizes.push_back(source[d]);
        llvm::append_range(out, delinearize(b, loc, index[k], sizes));
      }
      return out;
    }
  }
  return delinearize(b, loc, linearize(b, loc, index, shape), source);
}

/// The index of an operand of `shape` under numpy broadcasting to `index`.
SmallVector<Value> broadcastIndex(OpBuilder &b, Location loc, ArrayRef<Value> index, ArrayRef<int64_t> shape) {
  SmallVector<Value> out;
  size_t offset = index.size() - shape.size();
  for (auto [d, size] : llvm::enumerate(shape))
    out.push_back(size == 1 ? indexConstant(b, loc, 0) : index[offset + d]);
  return out;
}

bool isReshapeLike(Operation *op) {
  return isa<nn::ReshapeOp, nn::SqueezeOp, nn::UnsqueezeOp>(op) && op->getNumOperands() == 1;
}

/// A slice with constant starts and unit steps: element i reads start + i.
bool isUnitSlice(Operation *op) {
  auto slice = dyn_cast<nn::SliceOp>(op);
  return slice && slice.getStarts() && slice.getSteps() && op->getNumOperands() == 1 &&
         llvm::all_of(*slice.getSteps(), [](int64_t s) { return s == 1; }) &&
         llvm::all_of(*slice.getStarts(), [](int64_t s) { return s >= 0; });
}

/// A split along a constant axis into static pieces (no run-time sizes).
bool isStaticSplit(Operation *op) {
  auto split = dyn_cast<nn::SplitOp>(op);
  return split && !split.getSplit();
}

/// A cast between f32 and f16/bf16 (what autocast and low-precision compute
/// insert): one convert per element, rounding to nearest even when it narrows.
bool isFloatCast(Operation *op) {
  auto isFloat = [](Type t) {
    Type e = getElementTypeOrSelf(t);
    return e.isF32() || e.isF16() || e.isBF16();
  };
  return isa<nn::CastOp>(op) && isFloat(op->getOperand(0).getType()) && isFloat(op->getResult(0).getType());
}

bool isCheap(Operation *op) {
  return isReshapeLike(op) || isUnitSlice(op) || isStaticSplit(op) || isFloatCast(op) ||
         isa<nn::TransposeOp, nn::AddOp, nn::SubOp, nn::MulOp>(op);
}

bool isStaticF32(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return t.hasStaticShape() && t.getElementType().isF32();
}

/// Sequential loop over [0, n) carrying `inits`; `body` returns the next values.
SmallVector<Value> forLoop(OpBuilder &b, Location loc, int64_t n, ValueRange inits,
                           function_ref<SmallVector<Value>(OpBuilder &, Location, Value, ValueRange)> body) {
  auto loop = scf::ForOp::create(b, loc, indexConstant(b, loc, 0), indexConstant(b, loc, n),
                                 indexConstant(b, loc, 1), inits,
                                 [&](OpBuilder &nb, Location l, Value iv, ValueRange carried) {
                                   scf::YieldOp::create(nb, l, body(nb, l, iv, carried));
                                 });
  return SmallVector<Value>(loop.getResults());
}

/// A parallel linalg.generic over `rows` (slices of one shape, one per
/// output) whose body maps the element's index to its value, stored into
/// each output in that output's type.
SmallVector<Value> writeRow(OpBuilder &b, Location loc, ValueRange rows,
                            function_ref<Value(OpBuilder &, Location, ArrayRef<Value> index, Value old)> body) {
  int64_t rank = shapeOf(rows.front()).size();
  SmallVector<utils::IteratorType> it(rank, utils::IteratorType::parallel);
  SmallVector<AffineMap> maps(rows.size(), b.getMultiDimIdentityMap(rank));
  return generic(b, loc, ValueRange{}, rows, maps, it,
                 [&](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
                   SmallVector<Value> index;
                   for (int64_t d = 0; d < rank; ++d)
                     index.push_back(linalg::IndexOp::create(nb, l, d));
                   // A fused output cast: the row is computed in f32 and
                   // rounded once, where the cast's own kernel would round.
                   Value v = body(nb, l, index, s[0]);
                   SmallVector<Value> stored;
                   for (Value out : s)
                     stored.push_back(castScalar(nb, l, v, v.getType(), false, out.getType(), false));
                   return stored;
                 });
}

/// One scf.forall over the rows of `outer` (flattened, so the CPU can split
/// it even when the first dim is 1) writing the slices of `inits` (outputs of
/// one shape) that `slice` places: `body` gets the row's multi-index and its
/// slices and returns the written slices.
struct RowSlice {
  SmallVector<int64_t> offsetsOf; // per init dim: index into the row index, or -1 (offset 0)
  SmallVector<int64_t> sizes;     // per init dim
};

SmallVector<Value> forallRows(
    OpBuilder &b, Location loc, ArrayRef<int64_t> outer, ValueRange inits, const RowSlice &slice,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ArrayRef<Value> row, ValueRange rowSlices)> body) {
  int64_t rows = 1;
  for (int64_t d : outer)
    rows *= d;
  auto forall = scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(rows)}, inits, std::nullopt);
  OpBuilder nb = OpBuilder::atBlockBegin(forall.getBody());
  SmallVector<Value> row = delinearize(nb, loc, forall.getInductionVars()[0], outer);
  SmallVector<OpFoldResult> offsets, sizes, strides;
  SmallVector<int64_t> sliceShape;
  for (auto [at, size] : llvm::zip(slice.offsetsOf, slice.sizes)) {
    offsets.push_back(at < 0 ? OpFoldResult(nb.getIndexAttr(0)) : OpFoldResult(row[at]));
    sizes.push_back(nb.getIndexAttr(size));
    strides.push_back(nb.getIndexAttr(1));
    if (size != 1)
      sliceShape.push_back(size);
  }
  SmallVector<Value> rowSlices;
  for (Value out : forall.getRegionIterArgs()) {
    auto sliceType = RankedTensorType::get(sliceShape, cast<RankedTensorType>(out.getType()).getElementType());
    rowSlices.push_back(tensor::ExtractSliceOp::create(nb, loc, sliceType, out, offsets, sizes, strides));
  }
  SmallVector<Value> written = body(nb, loc, row, rowSlices);
  OpBuilder tb = OpBuilder::atBlockBegin(forall.getTerminator().getBody());
  for (auto [slice, out] : llvm::zip(written, forall.getRegionIterArgs()))
    tensor::ParallelInsertSliceOp::create(tb, loc, slice, out, offsets, sizes, strides);
  return SmallVector<Value>(forall.getResults());
}

/// The slice of the row `outer` index of a tensor of `shape` whose trailing
/// dims from `axis` on are the row.
RowSlice trailingSlice(ArrayRef<int64_t> shape, int64_t axis) {
  RowSlice s;
  for (int64_t d = 0; d < (int64_t)shape.size(); ++d) {
    s.offsetsOf.push_back(d < axis ? d : -1);
    s.sizes.push_back(d < axis ? 1 : shape[d]);
  }
  return s;
}

/// layer_norm: mean, then the sum of squared deviations (two passes, as the
/// unfused kernel does), then the normalized, scaled and shifted row.
SmallVector<Value> buildLayerNorm(OpBuilder &b, nn::LayerNormOp ln, const ElementReader &reader, ValueRange inits) {
  Location loc = ln.getLoc();
  ArrayRef<int64_t> shape = shapeOf(ln.getInput());
  int64_t axis = ln.getAxis();
  ArrayRef<int64_t> row = shape.drop_back(shape.size() - axis), cols = shape.drop_front(axis);
  int64_t n = 1;
  for (int64_t c : cols)
    n *= c;
  double eps = ln.getEpsilon().convertToDouble();
  Type t = b.getF32Type();
  return forallRows(b, loc, row, inits, trailingSlice(shape, axis),
                    [&](OpBuilder &rb, Location l, ArrayRef<Value> outer, ValueRange slice) {
    auto at = [&](OpBuilder &nb, Location il, ArrayRef<Value> inner) {
      SmallVector<Value> index(outer);
      index.append(inner.begin(), inner.end());
      return index;
    };
    auto x = [&](OpBuilder &nb, Location il, Value j) {
      return reader.read(nb, il, ln.getInput(), at(nb, il, delinearize(nb, il, j, cols)));
    };
    Value sum = forLoop(rb, l, n, scalarConstant(rb, l, t, 0),
                        [&](OpBuilder &nb, Location il, Value j, ValueRange acc) -> SmallVector<Value> {
                          return {addScalars(nb, il, x(nb, il, j), acc[0])};
                        })[0];
    Value mean = arith::DivFOp::create(rb, l, sum, scalarConstant(rb, l, t, (double)n));
    Value sq = forLoop(rb, l, n, scalarConstant(rb, l, t, 0),
                       [&](OpBuilder &nb, Location il, Value j, ValueRange acc) -> SmallVector<Value> {
                         Value d = arith::SubFOp::create(nb, il, x(nb, il, j), mean);
                         return {addScalars(nb, il, mulScalars(nb, il, d, d), acc[0])};
                       })[0];
    Value var = arith::DivFOp::create(rb, l, sq, scalarConstant(rb, l, t, (double)n));
    Value denom = math::SqrtOp::create(rb, l, arith::AddFOp::create(rb, l, var, scalarConstant(rb, l, t, eps)));
    return writeRow(rb, l, slice, [&](OpBuilder &nb, Location il, ArrayRef<Value> inner, Value) -> Value {
      SmallVector<Value> index = at(nb, il, inner);
      Value centered = arith::SubFOp::create(nb, il, reader.read(nb, il, ln.getInput(), index), mean);
      Value norm = arith::DivFOp::create(nb, il, centered, denom);
      Value scale = reader.read(nb, il, ln.getScale(), broadcastIndex(nb, il, index, shapeOf(ln.getScale())));
      Value y = arith::MulFOp::create(nb, il, norm, scale);
      if (Value bias = ln.getBias())
        y = arith::AddFOp::create(nb, il, y, reader.read(nb, il, bias, broadcastIndex(nb, il, index, shapeOf(bias))));
      return y;
    });
  });
}

/// reduce_mean / reduce_sum over the trailing axes: each row's sum in
/// row-major order (the unfused kernel's), divided by the count for the mean.
SmallVector<Value> buildReduceTrailing(OpBuilder &b, Operation *op, int64_t axis, const ElementReader &reader,
                                       ValueRange inits) {
  Location loc = op->getLoc();
  Value input = op->getOperand(0);
  ArrayRef<int64_t> shape = shapeOf(input), cols = shape.drop_front(axis);
  int64_t n = 1;
  for (int64_t c : cols)
    n *= c;
  RowSlice slice;
  for (int64_t d = 0; d < (int64_t)shapeOf(inits.front()).size(); ++d) {
    slice.offsetsOf.push_back(d < axis ? d : -1);
    slice.sizes.push_back(1);
  }
  Type t = b.getF32Type();
  return forallRows(b, loc, shape.take_front(axis), inits, slice,
                    [&](OpBuilder &rb, Location l, ArrayRef<Value> outer, ValueRange out) {
    Value sum = forLoop(rb, l, n, scalarConstant(rb, l, t, 0),
                        [&](OpBuilder &nb, Location il, Value j, ValueRange acc) -> SmallVector<Value> {
                          SmallVector<Value> index(outer);
                          llvm::append_range(index, delinearize(nb, il, j, cols));
                          return {addScalars(nb, il, reader.read(nb, il, input, index), acc[0])};
                        })[0];
    Value result = isa<nn::ReduceMeanOp>(op) ? arith::DivFOp::create(rb, l, sum, scalarConstant(rb, l, t, (double)n)).getResult() : sum;
    return writeRow(rb, l, out, [&](OpBuilder &, Location, ArrayRef<Value>, Value) { return result; });
  });
}

/// The first reduced axis of a reduce_mean/reduce_sum over trailing axes.
std::optional<int64_t> trailingReduction(Operation *op) {
  std::optional<ArrayRef<int64_t>> axes;
  if (auto r = dyn_cast<nn::ReduceMeanOp>(op))
    axes = r.getAxes();
  else if (auto r = dyn_cast<nn::ReduceSumOp>(op))
    axes = r.getAxes();
  int64_t rank = shapeOf(op->getOperand(0)).size();
  // At least one kept dim: the rows.
  if (!axes || axes->empty() || axes->back() != rank - 1 || axes->front() == 0 || op->getNumOperands() != 1)
    return std::nullopt;
  for (size_t i = 1; i < axes->size(); ++i)
    if ((*axes)[i] != (*axes)[i - 1] + 1)
      return std::nullopt;
  return axes->front();
}

/// softmax / log_softmax over the last axis: the row maximum, the sum of
/// exp(x - max), then the row (the unfused kernel's operation order).
SmallVector<Value> buildSoftmax(OpBuilder &b, Operation *op, const ElementReader &reader, ValueRange inits) {
  Location loc = op->getLoc();
  Value input = op->getOperand(0);
  ArrayRef<int64_t> shape = shapeOf(input);
  int64_t axis = shape.size() - 1, n = shape.back();
  bool isLog = isa<nn::LogSoftmaxOp>(op);
  Type t = b.getF32Type();
  return forallRows(b, loc, shape.drop_back(), inits, trailingSlice(shape, axis),
                    [&](OpBuilder &rb, Location l, ArrayRef<Value> outer, ValueRange slice) {
    auto x = [&](OpBuilder &nb, Location il, Value j) {
      SmallVector<Value> index(outer);
      index.push_back(j);
      return reader.read(nb, il, input, index);
    };
    Value max = forLoop(rb, l, n, lowestValue(rb, l, t, false),
                        [&](OpBuilder &nb, Location il, Value j, ValueRange acc) -> SmallVector<Value> {
                          return {arith::MaximumFOp::create(nb, il, x(nb, il, j), acc[0])};
                        })[0];
    Value sum = forLoop(rb, l, n, scalarConstant(rb, l, t, 0),
                        [&](OpBuilder &nb, Location il, Value j, ValueRange acc) -> SmallVector<Value> {
                          Value e = math::ExpOp::create(nb, il, arith::SubFOp::create(nb, il, x(nb, il, j), max));
                          return {addScalars(nb, il, e, acc[0])};
                        })[0];
    return writeRow(rb, l, slice, [&](OpBuilder &nb, Location il, ArrayRef<Value> inner, Value) -> Value {
      Value shifted = arith::SubFOp::create(nb, il, x(nb, il, inner[0]), max);
      if (isLog)
        return arith::SubFOp::create(nb, il, shifted, math::LogOp::create(nb, il, sum));
      return arith::DivFOp::create(nb, il, math::ExpOp::create(nb, il, shifted), sum);
    });
  });
}

/// Head dims up to this many are dot-multiplied in straight-line code.
constexpr int64_t kMaxUnrolledDepth = 128;
/// Keys whose scores an attention row holds at once: 16 KB of f32, the
/// largest per-iteration temporary kernels keep on the stack (KernelBuffers).
constexpr int64_t kMaxScoreChunk = 4096;

/// The sum of `terms` (at least one) as a balanced tree.
Value treeSum(OpBuilder &b, Location loc, ArrayRef<Value> terms) {
  if (terms.size() == 1)
    return terms.front();
  size_t half = terms.size() / 2;
  return arith::AddFOp::create(b, loc, treeSum(b, loc, terms.take_front(half)), treeSum(b, loc, terms.drop_front(half)));
}

/// attention, one (batch..., query) row at a time: the row's Sk scores, their
/// maximum, p = exp(s - max), then the sum of p_j * v_j over the keys.
/// Only one row of scores exists at a time (per thread), never the matrix,
/// and of a row longer than kMaxScoreChunk keys one chunk at a time.
SmallVector<Value> buildAttention(OpBuilder &b, nn::AttentionOp op, const ElementReader &reader, ValueRange inits,
                                  ArrayRef<int64_t> outPerm) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> qShape = shapeOf(op.getQ()), kShape = shapeOf(op.getK()), vShape = shapeOf(op.getV());
  int64_t rank = qShape.size(), depth = qShape.back(), keys = kShape[rank - 2], dv = vShape.back();
  SmallVector<int64_t> perm = outPerm.empty() ? llvm::to_vector(llvm::seq<int64_t>(0, rank)) : llvm::to_vector(outPerm);
  // Rows are the result's dims but the last; the transposed result places
  // row dim perm[d] at dim d.
  RowSlice slice;
  for (int64_t d = 0; d < rank; ++d) {
    slice.offsetsOf.push_back(perm[d] == rank - 1 ? -1 : perm[d]);
    slice.sizes.push_back(perm[d] == rank - 1 ? dv : 1);
  }
  double scale = op.getScale().convertToDouble();
  Type t = b.getF32Type();
  return forallRows(b, loc, qShape.drop_back(), inits, slice,
                    [&](OpBuilder &rb, Location l, ArrayRef<Value> row, ValueRange outRow) {
    ArrayRef<Value> batch = row.drop_back();
    Value query = row.back();
    auto at = [&](ArrayRef<Value> prefix, Value i, Value j) {
      SmallVector<Value> index(prefix);
      index.append({i, j});
      return index;
    };
    // The scaled (and masked) score of key j.
    auto score = [&](OpBuilder &nb, Location il, Value j) -> Value {
      auto product = [&](OpBuilder &db, Location dl, Value d) -> Value {
        return arith::MulFOp::create(db, dl, reader.read(db, dl, op.getQ(), at(batch, query, d)),
                                     reader.read(db, dl, op.getK(), at(batch, j, d)));
      };
      Value dot;
      if (depth <= kMaxUnrolledDepth) {
        // Straight-line products summed as a balanced tree: no serial add
        // chain, and the vectorizer sees a horizontal reduction.
        SmallVector<Value> terms;
        for (int64_t d = 0; d < depth; ++d)
          terms.push_back(product(nb, il, indexConstant(nb, il, d)));
        dot = treeSum(nb, il, terms);
      } else {
        dot = forLoop(nb, il, depth, scalarConstant(nb, il, t, 0),
                      [&](OpBuilder &db, Location dl, Value d, ValueRange acc) -> SmallVector<Value> {
                        return {arith::AddFOp::create(db, dl, acc[0], product(db, dl, d))};
                      })[0];
      }
      Value s = arith::MulFOp::create(nb, il, dot, scalarConstant(nb, il, t, scale));
      if (Value mask = op.getMask())
        s = arith::AddFOp::create(nb, il, s,
                                  reader.read(nb, il, mask, broadcastIndex(nb, il, at(batch, query, j), shapeOf(mask))));
      return s;
    };
    // The scores of keys [start, start + size) (Sk floats at most kMaxScoreChunk,
    // stack memory on the CPU, local memory on a GPU) with their maximum,
    // computed once so that exp(s - max) over them vectorizes. A
    // compare-and-select running maximum (not a reduction the loop
    // vectorizer recognizes) keeps it from vectorizing over keys with
    // gathers; the dot product over the contiguous head dim vectorizes
    // instead. `start` is null for the first key.
    auto keyAt = [&](OpBuilder &nb, Location il, Value start, Value j) -> Value {
      return start ? arith::AddIOp::create(nb, il, start, j).getResult() : j;
    };
    auto scoresOf = [&](OpBuilder &cb, Location cl, Value start, int64_t size) {
      return forLoop(cb, cl, size, {lowestValue(cb, cl, t, false), emptyTensor(cb, cl, {size}, t)},
                     [&](OpBuilder &nb, Location il, Value j, ValueRange carried) -> SmallVector<Value> {
                       Value s = score(nb, il, keyAt(nb, il, start, j));
                       Value grows = arith::CmpFOp::create(nb, il, arith::CmpFPredicate::OGT, s, carried[0]);
                       return {arith::SelectOp::create(nb, il, grows, s, carried[0]),
                               tensor::InsertOp::create(nb, il, s, carried[1], j)};
                     });
    };
    // p = exp(s - shift) over the scores, and their sum.
    auto probsOf = [&](OpBuilder &cb, Location cl, Value scores, Value shift, int64_t size) {
      Value probs = generic(cb, cl, scores, scores, {cb.getMultiDimIdentityMap(1), cb.getMultiDimIdentityMap(1)},
                            {utils::IteratorType::parallel},
                            [&](OpBuilder &nb, Location il, ValueRange s) -> SmallVector<Value> {
                              return {math::ExpOp::create(nb, il, arith::SubFOp::create(nb, il, s[0], shift))};
                            })[0];
      Value sum = forLoop(cb, cl, size, scalarConstant(cb, cl, t, 0),
                          [&](OpBuilder &nb, Location il, Value j, ValueRange acc) -> SmallVector<Value> {
                            return {arith::AddFOp::create(nb, il, acc[0], tensor::ExtractOp::create(nb, il, probs, j))};
                          })[0];
      return std::make_pair(probs, sum);
    };
    // The output row accumulates p_j * v_j key by key: each step is an
    // axpy over the contiguous head dim, which vectorizes (summing each
    // output element over the keys instead reads v with a stride and stays
    // scalar). The row lives in stack memory, like the scores.
    auto accumulate = [&](OpBuilder &cb, Location cl, Value acc, Value probs, Value start, int64_t size) {
      return forLoop(cb, cl, size, acc,
                     [&](OpBuilder &nb, Location il, Value j, ValueRange carried) -> SmallVector<Value> {
                       Value p = tensor::ExtractOp::create(nb, il, probs, j);
                       Value key = keyAt(nb, il, start, j);
                       return {writeRow(nb, il, carried[0],
                                        [&](OpBuilder &db, Location dl, ArrayRef<Value> e, Value old) -> Value {
                                          Value ve = reader.read(db, dl, op.getV(), at(batch, key, e[0]));
                                          return arith::AddFOp::create(db, dl, old,
                                                                       arith::MulFOp::create(db, dl, p, ve));
                                        })[0]};
                     })[0];
    };
    Value zeros = writeRow(rb, l, emptyTensor(rb, l, {dv}, t),
                           [&](OpBuilder &nb, Location il, ArrayRef<Value>, Value) -> Value {
                             return scalarConstant(nb, il, t, 0);
                           })[0];
    Value acc, sum;
    if (keys <= kMaxScoreChunk) {
      auto maxAndScores = scoresOf(rb, l, nullptr, keys);
      auto [probs, total] = probsOf(rb, l, maxAndScores[1], maxAndScores[0], keys);
      acc = accumulate(rb, l, zeros, probs, nullptr, keys);
      sum = total;
    } else {
      // Longer rows go chunk by chunk with the online softmax: the running
      // maximum m, sum and accumulator are rescaled by exp(m - m') when a
      // chunk raises the maximum to m'. Per-thread memory stays one chunk
      // of scores whatever the sequence length (a whole row would be a heap
      // allocation per row: device malloc on a GPU).
      auto chunk = [&](OpBuilder &cb, Location cl, Value start, int64_t size, ValueRange state) -> SmallVector<Value> {
        auto maxAndScores = scoresOf(cb, cl, start, size);
        Value max = arith::MaximumFOp::create(cb, cl, state[0], maxAndScores[0]);
        // While every score so far is -inf (masked), shift by 0: exp(-inf)
        // is 0 where exp(-inf - -inf) would be NaN.
        Value none = arith::CmpFOp::create(cb, cl, arith::CmpFPredicate::OEQ, max, lowestValue(cb, cl, t, false));
        Value shift = arith::SelectOp::create(cb, cl, none, scalarConstant(cb, cl, t, 0), max);
        Value rescale = math::ExpOp::create(cb, cl, arith::SubFOp::create(cb, cl, state[0], shift));
        auto [probs, chunkSum] = probsOf(cb, cl, maxAndScores[1], shift, size);
        Value total = arith::AddFOp::create(cb, cl, arith::MulFOp::create(cb, cl, state[1], rescale), chunkSum);
        Value scaled = writeRow(cb, cl, state[2], [&](OpBuilder &nb, Location il, ArrayRef<Value>, Value old) -> Value {
          return arith::MulFOp::create(nb, il, old, rescale);
        })[0];
        return {max, total, accumulate(cb, cl, scaled, probs, start, size)};
      };
      int64_t full = keys / kMaxScoreChunk, tail = keys % kMaxScoreChunk;
      SmallVector<Value> state = forLoop(
          rb, l, full, {lowestValue(rb, l, t, false), scalarConstant(rb, l, t, 0), zeros},
          [&](OpBuilder &nb, Location il, Value c, ValueRange carried) {
            Value start = arith::MulIOp::create(nb, il, c, indexConstant(nb, il, kMaxScoreChunk));
            return chunk(nb, il, start, kMaxScoreChunk, carried);
          });
      if (tail)
        state = chunk(rb, l, indexConstant(rb, l, full * kMaxScoreChunk), tail, state);
      sum = state[1];
      acc = state[2];
    }
    return writeRow(rb, l, outRow, [&](OpBuilder &nb, Location il, ArrayRef<Value> e, Value) -> Value {
      return arith::DivFOp::create(nb, il, tensor::ExtractOp::create(nb, il, acc, e[0]), sum);
    });
  });
}

} // namespace

Value ElementReader::read(OpBuilder &b, Location loc, Value v, ArrayRef<Value> index) const {
  if (Value arg = arguments.lookupOrNull(v))
    return tensor::ExtractOp::create(b, loc, arg, index);
  Operation *def = v.getDefiningOp();
  assert(def && inlined.contains(def) && "a fused value is an argument or an inlined producer");
  if (auto transpose = dyn_cast<nn::TransposeOp>(def)) {
    SmallVector<Value> in(index.size());
    for (auto [d, p] : llvm::enumerate(transpose.getPerm()))
      in[p] = index[d];
    return read(b, loc, transpose.getInput(), in);
  }
  if (auto split = dyn_cast<nn::SplitOp>(def)) {
    // Piece r starts after the pieces before it along the axis.
    int64_t axis = split.getAxis(), offset = 0;
    for (Value piece : split.getResults().take_front(cast<OpResult>(v).getResultNumber()))
      offset += shapeOf(piece)[axis];
    SmallVector<Value> in(index);
    if (offset)
      in[axis] = arith::AddIOp::create(b, loc, in[axis], indexConstant(b, loc, offset));
    return read(b, loc, split.getInput(), in);
  }
  if (auto slice = dyn_cast<nn::SliceOp>(def)) {
    SmallVector<Value> in;
    for (auto [i, start] : llvm::zip(index, *slice.getStarts()))
      in.push_back(start == 0 ? i : arith::AddIOp::create(b, loc, i, indexConstant(b, loc, start)).getResult());
    return read(b, loc, slice.getInput(), in);
  }
  if (isReshapeLike(def)) {
    // A chain of reshapes is one: only the outermost shape and the first
    // source shape matter.
    Value source = def->getOperand(0);
    while (source.getDefiningOp() && inlined.contains(source.getDefiningOp()) &&
           isReshapeLike(source.getDefiningOp()))
      source = source.getDefiningOp()->getOperand(0);
    return read(b, loc, source, reshapeIndex(b, loc, index, shapeOf(v), shapeOf(source)));
  }
  SmallVector<Value> scalars;
  for (Value operand : def->getOperands())
    scalars.push_back(read(b, loc, operand, broadcastIndex(b, loc, index, shapeOf(operand))));
  return *buildElementwiseScalar(b, loc, def, scalars);
}

llvm::SetVector<Operation *> inlinableProducers(Operation *root, bool cheapOnly) {
  llvm::SetVector<Operation *> group;
  SmallVector<Value> worklist(root->getOperands());
  auto inGroup = [&](Operation *user) { return user == root || group.contains(user); };
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || group.contains(def) || (def->getNumResults() != 1 && !isStaticSplit(def)) ||
        def->getBlock() != root->getBlock() ||
        !(isFusibleElementwise(def) || isReshapeLike(def) || isUnitSlice(def) || isStaticSplit(def) ||
          isa<nn::TransposeOp>(def)) ||
        (cheapOnly && !isCheap(def)) || !llvm::all_of(def->getUsers(), inGroup))
      continue;
    // Static shapes; elementwise ops on f32 only, whose scalar lowering
    // exists, and the f32 <-> f16/bf16 casts around low-precision operands.
    auto isStatic = [](Type t) { return cast<RankedTensorType>(t).hasStaticShape(); };
    auto isF32 = [](Type t) { return cast<RankedTensorType>(t).getElementType().isF32(); };
    if (!llvm::all_of(def->getOperandTypes(), isStatic) || !llvm::all_of(def->getResultTypes(), isStatic) ||
        (isFusibleElementwise(def) && !isFloatCast(def) &&
         (!llvm::all_of(def->getOperandTypes(), isF32) || !isF32(def->getResult(0).getType()))))
      continue;
    group.insert(def);
    worklist.append(def->getOperands().begin(), def->getOperands().end());
  }
  // Program order, so outlining erases users before producers.
  SmallVector<Operation *> ordered(group.begin(), group.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return llvm::SetVector<Operation *>(ordered.begin(), ordered.end());
}

bool isRowKernelRoot(Operation *op) {
  if (!isa<nn::LayerNormOp, nn::AttentionOp, nn::SoftmaxOp, nn::LogSoftmaxOp, nn::ReduceMeanOp, nn::ReduceSumOp>(op))
    return false;
  if (!llvm::all_of(op->getOperands(), isStaticF32) || !isStaticF32(op->getResult(0)) ||
      cast<RankedTensorType>(op->getResult(0).getType()).getNumElements() == 0)
    return false;
  if (isa<nn::LayerNormOp, nn::AttentionOp>(op))
    return true;
  if (isa<nn::ReduceMeanOp, nn::ReduceSumOp>(op))
    return trailingReduction(op).has_value();
  if (isa<nn::SoftmaxOp, nn::LogSoftmaxOp>(op))
    return op->getAttrOfType<IntegerAttr>("axis").getInt() == (int64_t)shapeOf(op->getOperand(0)).size() - 1;
  return false;
}

FailureOr<SmallVector<Value>> buildRowKernel(OpBuilder &b, Operation *root, const ElementReader &reader,
                                             ValueRange inits, ArrayRef<int64_t> outPerm) {
  if (auto ln = dyn_cast<nn::LayerNormOp>(root))
    return buildLayerNorm(b, ln, reader, inits);
  if (auto attention = dyn_cast<nn::AttentionOp>(root))
    return buildAttention(b, attention, reader, inits, outPerm);
  if (auto axis = trailingReduction(root))
    return buildReduceTrailing(b, root, *axis, reader, inits);
  return buildSoftmax(b, root, reader, inits);
}

} // namespace nncc
