/// The column-phase split copies strided direct convolutions read
/// (DirectConv.cpp: tap kx of a convolution of column stride s reads phase
/// (kx*d) % s, so that its columns are consecutive). As one strided
/// linalg.generic per phase, the split of a stride-2 copy took 4 cycles an
/// element (LLVM gathers the strided reads lane by lane): ResNet-18-style's
/// stem copy 1.9 ms at batch 32, its copy into the 14x14 stage 1.05 ms.
/// Here each input row is read once by whole vectors and split by two
/// shuffles.
#include "lib/Conversion/NNToExec/PhaseSplitCopy.h"

#include "lib/Conversion/NNToExec/LinalgUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;

namespace nncc {
namespace {

/// Any stride: zeros on the border, then per phase one strided copy of the
/// columns j that land inside x (one run [j0, j1), no bounds check).
Value buildStridedPhaseCopies(OpBuilder &b, Location loc, Value x, Value init, int64_t top, int64_t left) {
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  auto xShape = cast<RankedTensorType>(x.getType()).getShape();
  auto copyShape = cast<RankedTensorType>(init.getType()).getShape();
  int64_t n = xShape[0], c = xShape[1], h = xShape[2], w = xShape[3];
  int64_t phases = copyShape[3], columns = copyShape[4], bottom = copyShape[2] - top - h;
  Value copy = fillBox(b, loc, init, {0, 0, 0, 0, 0}, {n, c, top, phases, columns}, zero);
  copy = fillBox(b, loc, copy, {0, 0, top + h, 0, 0}, {n, c, bottom, phases, columns}, zero);
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> d;
  for (int64_t i = 0; i < 5; ++i)
    d.push_back(getAffineDimExpr(i, ctx));
  SmallVector<utils::IteratorType> parallel(5, utils::IteratorType::parallel);
  for (int64_t phase = 0; phase < phases; ++phase) {
    // j*s + phase - left in [0, w).
    int64_t j0 = std::max<int64_t>(0, (left - phase + phases - 1) / phases);
    int64_t j1 = std::min<int64_t>(columns, llvm::divideFloorSigned(w - 1 + left - phase, phases) + 1);
    j1 = std::max(j0, j1);
    copy = fillBox(b, loc, copy, {0, 0, top, phase, 0}, {n, c, h, 1, j0}, zero);
    copy = fillBox(b, loc, copy, {0, 0, top, phase, j1}, {n, c, h, 1, columns - j1}, zero);
    if (j1 == j0)
      continue;
    SmallVector<OpFoldResult> at{b.getIndexAttr(0), b.getIndexAttr(0), b.getIndexAttr(top), b.getIndexAttr(phase),
                                 b.getIndexAttr(j0)};
    SmallVector<OpFoldResult> extent{b.getIndexAttr(n), b.getIndexAttr(c), b.getIndexAttr(h), b.getIndexAttr(1),
                                     b.getIndexAttr(j1 - j0)};
    SmallVector<OpFoldResult> ones(5, b.getIndexAttr(1));
    Value run = tensor::ExtractSliceOp::create(b, loc, copy, at, extent, ones);
    AffineExpr column = (d[4] + j0) * phases + (phase - left);
    run = generic(b, loc, x, run, {AffineMap::get(5, 0, {d[0], d[1], d[2], column}, ctx), b.getMultiDimIdentityMap(5)},
                  parallel, [](OpBuilder &, Location, ValueRange s) -> SmallVector<Value> { return {s[0]}; })[0];
    copy = tensor::InsertSliceOp::create(b, loc, run, copy, at, extent, ones);
  }
  return copy;
}

/// Stride 2: task r of one scf.forall writes row r of the copy, both phases
/// ([2, columns], zeroed first: the zeros and the data meet in L1, and the
/// copy's lines go to memory once). An input row's columns 2t (even) land in
/// phase left % 2 at column t + left / 2, its odd ones in phase (left + 1) %
/// 2 at column t + (left + 1) / 2: per 2L input columns, two vector loads,
/// two shuffles (the even and the odd lanes) and two stores; a last part
/// chunk reads past the row's end as zeros and masks the lanes it stores.
Value buildStride2PhaseCopy(OpBuilder &b, Location loc, Value x, Value init, int64_t top, int64_t left,
                            int64_t lanes) {
  auto xShape = cast<RankedTensorType>(x.getType()).getShape();
  auto copyShape = cast<RankedTensorType>(init.getType()).getShape();
  int64_t n = xShape[0], c = xShape[1], h = xShape[2], w = xShape[3];
  int64_t rows = copyShape[2], columns = copyShape[4];
  Type f32 = b.getF32Type();
  auto vecType = VectorType::get({lanes}, f32);
  auto rowType = RankedTensorType::get({2, columns}, f32);

  auto forall = scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(n * c * rows)},
                                      ValueRange{init}, std::nullopt);
  OpBuilder fb = OpBuilder::atBlockBegin(forall.getBody());
  auto cst = [&](OpBuilder &ob, int64_t v) { return indexConstant(ob, loc, v); };
  SmallVector<Value> coord = gridCoordinates(fb, loc, forall.getInductionVars()[0], {n, c, rows});
  Value out = forall.getRegionIterArgs()[0];
  SmallVector<OpFoldResult> offsets{coord[0], coord[1], coord[2], fb.getIndexAttr(0), fb.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes{fb.getIndexAttr(1), fb.getIndexAttr(1), fb.getIndexAttr(1), fb.getIndexAttr(2),
                                  fb.getIndexAttr(columns)};
  SmallVector<OpFoldResult> ones(5, fb.getIndexAttr(1));
  Value row = tensor::ExtractSliceOp::create(fb, loc, rowType, out, offsets, sizes, ones);
  row = fill(fb, loc, row, arith::ConstantOp::create(fb, loc, fb.getF32FloatAttr(0)));

  // Rows of the frame stay zero.
  Value y = arith::SubIOp::create(fb, loc, coord[2], cst(fb, top));
  Value inside = arith::AndIOp::create(
      fb, loc, arith::CmpIOp::create(fb, loc, arith::CmpIPredicate::sge, coord[2], cst(fb, top)),
      arith::CmpIOp::create(fb, loc, arith::CmpIPredicate::slt, coord[2], cst(fb, top + h)));
  auto split = scf::IfOp::create(fb, loc, TypeRange{rowType}, inside, /*withElseRegion=*/true);
  {
    OpBuilder eb = split.getElseBodyBuilder();
    scf::YieldOp::create(eb, loc, row);
  }
  OpBuilder tb = split.getThenBodyBuilder();
  Value zero = arith::ConstantOp::create(tb, loc, tb.getF32FloatAttr(0));
  SmallVector<int64_t> evenLanes, oddLanes;
  for (int64_t t = 0; t < lanes; ++t) {
    evenLanes.push_back(2 * t);
    oddLanes.push_back(2 * t + 1);
  }
  int64_t evenPhase = left % 2, evenColumn0 = left / 2, oddPhase = (left + 1) % 2, oddColumn0 = (left + 1) / 2;
  // One chunk of 2L input columns from `base`: `valid` of them inside the
  // row (2L for a whole chunk).
  auto chunk = [&](OpBuilder &cb, Value base, Value rowTile, int64_t valid) -> Value {
    bool whole = valid == 2 * lanes;
    SmallVector<Value> halves;
    for (int64_t half = 0; half < 2; ++half) {
      Value col = arith::AddIOp::create(cb, loc, base, cst(cb, half * lanes));
      halves.push_back(vector::TransferReadOp::create(cb, loc, vecType, x, ValueRange{coord[0], coord[1], y, col},
                                                      zero, ArrayRef<bool>{whole}));
    }
    Value half = arith::DivUIOp::create(cb, loc, base, cst(cb, 2));
    auto store = [&](ArrayRef<int64_t> pick, int64_t phase, int64_t column0, int64_t count, Value tile) -> Value {
      Value v = vector::ShuffleOp::create(cb, loc, halves[0], halves[1], pick);
      SmallVector<Value> at{cst(cb, phase), arith::AddIOp::create(cb, loc, half, cst(cb, column0))};
      if (count == lanes)
        return vector::TransferWriteOp::create(cb, loc, v, tile, at, ArrayRef<bool>{true}).getResult();
      Value mask = vector::CreateMaskOp::create(cb, loc, VectorType::get({lanes}, cb.getI1Type()),
                                                ValueRange{cst(cb, count)});
      auto map = AffineMapAttr::get(AffineMap::getMinorIdentityMap(2, 1, cb.getContext()));
      return vector::TransferWriteOp::create(cb, loc, v, tile, at, map, mask, cb.getBoolArrayAttr({true}))
          .getResult();
    };
    rowTile = store(evenLanes, evenPhase, evenColumn0, (valid + 1) / 2, rowTile);
    return store(oddLanes, oddPhase, oddColumn0, valid / 2, rowTile);
  };
  int64_t wholeChunks = w / (2 * lanes), rest = w % (2 * lanes);
  auto loop = scf::ForOp::create(tb, loc, cst(tb, 0), cst(tb, wholeChunks * 2 * lanes), cst(tb, 2 * lanes),
                                 ValueRange{row}, [&](OpBuilder &lb, Location, Value base, ValueRange tile) {
                                   scf::YieldOp::create(lb, loc, chunk(lb, base, tile[0], 2 * lanes));
                                 });
  Value filled = loop.getResult(0);
  if (rest)
    filled = chunk(tb, cst(tb, wholeChunks * 2 * lanes), filled, rest);
  scf::YieldOp::create(tb, loc, filled);

  OpBuilder ib = OpBuilder::atBlockBegin(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(ib, loc, split.getResult(0), out, offsets, sizes, ones);
  return forall.getResult(0);
}

} // namespace

Value buildPhaseSplitCopy(OpBuilder &b, Location loc, Value x, Value init, int64_t top, int64_t left,
                          int64_t lanes) {
  if (cast<RankedTensorType>(init.getType()).getShape()[3] == 2)
    return buildStride2PhaseCopy(b, loc, x, init, top, left, lanes);
  return buildStridedPhaseCopies(b, loc, x, init, top, left);
}

} // namespace nncc
