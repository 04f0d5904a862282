/// Direct 2-D convolutions for the CPU: register-blocked vector code instead
/// of im2col + GEMM.
///
/// Each task of one scf.forall computes a tile of MB output channels x R
/// output rows x CW output columns. Its accumulators are MB*R*ceil(CW/L)
/// vectors of L floats (L: the target's lanes, 16 with AVX-512, 8 with
/// AVX2; at most half its vector registers, VectorUnit, a quarter for tiles
/// that read the input in place) that stay in registers over the whole
/// reduction (input channels of the group x kernel taps; windows of more
/// than kMaxUnrolledTaps loop over their kernel rows): per tap, one vector
/// load of
/// an input row per (row, vector) and one broadcast weight per output
/// channel feed MB*R*ceil(CW/L) FMAs. The tile is stored with masked
/// writes. Two ways to read the input:
/// - a padded copy (tiles of 4+ output channels): zero-padded, widened on
///   the right so that the last vector of a row stays inside it, and for a
///   column stride s split into s column phases (tap kx then reads phase
///   (kx*d) % s from column ow + (kx*d) / s: a unit-stride run), read with
///   plain vector loads. The copy is one pass over the input, small against
///   the 4+ channels x taps FMAs per input element.
/// - in place (fewer channels per tile: depthwise): the copy would cost as
///   much as the arithmetic (9 FMAs per element). Lanes past a row's end
///   read as zero through the transfer's mask, rows above or below the image
///   as zero vectors, and in the leftmost tile the reads that start left of
///   the row start at its first element and shift in zeros (by a constant:
///   the tap and the pad are); stride 2 reads 2L elements and keeps the even
///   lanes. Masks and selects cost registers that the accumulators of an
///   ungrouped tile need (LLVM spilled its weights), hence the copy there.
/// This is explicit vector code on purpose: as linalg loops, LLVM fully
/// unrolls the short output rows (7-56) and then vectorizes the wrong loop
/// with gathers.
///
/// The measurements behind these choices are in docs/performance.md
/// ("Measurements behind kernel choices").
#include "lib/Conversion/NNToExec/DirectConv.h"

#include "lib/Conversion/NNToExec/LinalgUtils.h"
#include "lib/Conversion/NNToExec/PhaseSplitCopy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

#include <cassert>
#include <cmath>
#include <limits>
#include <tuple>

using namespace mlir;

namespace nncc {
namespace {

/// A row chunk narrower than 3/4 of a vector wastes more than a quarter of
/// its lanes: an ungrouped convolution then runs faster as im2col + GEMM.
int64_t minColumns(const VectorUnit &unit) { return 3 * unit.lanes / 4; }
/// Grouped convolutions have no GEMM path, and their generic loop kernel is
/// slow enough that 7 of 16 lanes on 7x7 depthwise planes still win
/// (docs/performance.md): a quarter of the lanes.
int64_t minGroupedColumns(const VectorUnit &unit) { return std::max<int64_t>(2, unit.lanes / 4); }
/// Kernel taps of one window, at most.
constexpr int64_t kMaxTaps = 64;
/// Kernel taps unrolled into the reduction loop's body, at most; larger
/// windows loop over their kernel rows (see buildDirect).
constexpr int64_t kMaxUnrolledTaps = 16;

struct Tiling {
  int64_t lanes;    // f32 lanes per vector
  int64_t columns;  // CW: output columns per tile (divides OW)
  int64_t vectors;  // ceil(CW / lanes)
  int64_t channels; // MB: output channels per tile (divides M / group)
  int64_t rows;     // R: output rows per tile (divides OH)
};

/// The window geometry a direct kernel is built from: a convolution's, or a
/// max pool's (a depthwise window whose taps are combined by max, with
/// -inf for padding, and no weights).
struct Window {
  RankedTensorType in, out;
  int64_t group, groupChannels; // groups; input channels per group
  int64_t kh, kw;
  ArrayRef<int64_t> strides, pads, dilations;
  bool supported; // static, non-empty, f32, 2-D
  bool max;
};

Window windowOf(nn::ConvOp conv) {
  auto in = cast<RankedTensorType>(conv.getInput().getType());
  auto w = cast<RankedTensorType>(conv.getWeight().getType());
  auto out = cast<RankedTensorType>(conv.getType());
  bool supported =
      out.getRank() == 4 && in.hasStaticShape() && w.hasStaticShape() && out.hasStaticShape() &&
      out.getNumElements() != 0 && w.getNumElements() != 0 && in.getElementType().isF32() &&
      w.getElementType().isF32() && out.getElementType().isF32() &&
      (!conv.getBias() || cast<RankedTensorType>(conv.getBias().getType()).getElementType().isF32());
  int64_t rank = w.getRank();
  return Window{in,
                out,
                static_cast<int64_t>(conv.getGroup()),
                rank == 4 ? w.getShape()[1] : 0,
                rank == 4 ? w.getShape()[2] : 0,
                rank == 4 ? w.getShape()[3] : 0,
                conv.getStrides(),
                conv.getPads(),
                conv.getDilations(),
                supported,
                false};
}

Window windowOf(nn::MaxPoolOp pool) {
  auto in = cast<RankedTensorType>(pool.getInput().getType());
  auto out = cast<RankedTensorType>(pool.getOutput().getType());
  ArrayRef<int64_t> kernel = pool.getKernelShape();
  bool supported = out.getRank() == 4 && kernel.size() == 2 && !pool.getIndices() && in.hasStaticShape() &&
                   out.hasStaticShape() && out.getNumElements() != 0 && in.getElementType().isF32() &&
                   out.getElementType().isF32();
  return Window{in,
                out,
                out.getRank() == 4 ? out.getShape()[1] : 1,
                1,
                kernel.size() == 2 ? kernel[0] : 0,
                kernel.size() == 2 ? kernel[1] : 0,
                pool.getStrides(),
                pool.getPads(),
                pool.getDilations(),
                supported,
                true};
}

int64_t largestDivisorAtMost(int64_t n, int64_t bound) {
  for (int64_t d = std::min(n, bound); d > 1; --d)
    if (n % d == 0)
      return d;
  return 1;
}

/// The output columns per tile: a divisor of the row width `ow` of at least
/// `minimum` columns and at most four vectors, with the most of its vectors'
/// lanes in use (every vector of a tile costs its FMAs whether its lanes
/// hold columns or not); between equal fills, at most two vectors (more
/// vectors leave fewer accumulators for channels and rows), then the widest.
/// 0 when no divisor qualifies. An 80-wide row on 16 lanes: 16 columns (one
/// full vector), not 4 chunks of 20 (two vectors, 62% of their lanes).
int64_t chooseRowChunk(int64_t ow, int64_t lanes, int64_t minimum) {
  int64_t best = 0;
  auto rank = [&](int64_t columns) {
    int64_t vectors = (columns + lanes - 1) / lanes;
    return std::make_tuple(static_cast<double>(columns) / static_cast<double>(vectors * lanes), vectors <= 2,
                           columns);
  };
  for (int64_t columns = std::max<int64_t>(minimum, 1); columns <= std::min(ow, 4 * lanes); ++columns)
    if (ow % columns == 0 && (best == 0 || rank(columns) > rank(best)))
      best = columns;
  return best;
}

/// Tiles of this many output channels read a padded copy of the input (see
/// the file comment).
bool readsPaddedCopy(int64_t channels) { return channels >= 4; }

std::optional<Tiling> chooseTiling(const Window &g, const VectorUnit &unit) {
  if (!g.supported)
    return std::nullopt;
  // Every tap of a kernel row is unrolled in the kernel body.
  if (g.kh * g.kw > kMaxTaps)
    return std::nullopt;
  // An ungrouped 1x1 convolution is a plain GEMM on the input as it lies (no
  // im2col): the BLAS measured as fast or faster there (docs/performance.md).
  if (!g.max && g.group == 1 && g.kh == 1 && g.kw == 1)
    return std::nullopt;
  RankedTensorType out = g.out;
  int64_t oh = out.getShape()[2], ow = out.getShape()[3];
  int64_t mg = out.getShape()[1] / g.group;
  bool grouped = g.group > 1 || g.max;
  int64_t lanes = unit.lanes, minimum = grouped ? minGroupedColumns(unit) : minColumns(unit);
  int64_t columns = chooseRowChunk(ow, lanes, minimum);
  if (columns == 0)
    return std::nullopt;
  // Only the leftmost tile may read left of a row's start.
  if (g.pads[1] > columns)
    return std::nullopt;
  int64_t vectors = (columns + lanes - 1) / lanes;
  // Up to 8 channels per tile, as many as the accumulators allow with one row.
  int64_t channels = largestDivisorAtMost(mg, std::min<int64_t>(8, unit.maxAccumulators / vectors));
  // Column strides: a copy split into column phases when padded, two reads
  // and an even-lane shuffle in place (stride 2 only).
  if (!readsPaddedCopy(channels) && g.strides[1] > 2)
    return std::nullopt;
  // Reading in place keeps masks, selects, shifted reads and the window's
  // weights (one broadcast per tap) live beside the accumulators: with the
  // full budget, LLVM spilled a 3x3 depthwise tile's vectors to the stack
  // (287 stack accesses in its kernel, 74 with half).
  int64_t accumulators = readsPaddedCopy(channels) ? unit.maxAccumulators : unit.maxAccumulators / 2;
  int64_t rows = largestDivisorAtMost(oh, accumulators / (channels * vectors));
  return Tiling{lanes, columns, vectors, channels, rows};
}

/// The tiling of a window that isDirectConvolution / isDirectMaxPool accepted.
Tiling tilingOf(const Window &g, const VectorUnit &unit) {
  std::optional<Tiling> t = chooseTiling(g, unit);
  assert(t && "not a direct kernel");
  return *t;
}

} // namespace

bool isDirectConvolution(nn::ConvOp conv, const VectorUnit &unit) {
  return chooseTiling(windowOf(conv), unit).has_value();
}

double directConvLaneFill(nn::ConvOp conv, const VectorUnit &unit) {
  std::optional<Tiling> t = chooseTiling(windowOf(conv), unit);
  return t ? static_cast<double>(t->columns) / static_cast<double>(t->vectors * t->lanes) : 0.0;
}

bool directConvIsLoadBound(nn::ConvOp conv, const VectorUnit &unit) {
  std::optional<Tiling> t = chooseTiling(windowOf(conv), unit);
  return t && t->rows * t->vectors + t->channels > t->channels * t->rows * t->vectors;
}

bool rowsFillVectors(int64_t width, const VectorUnit &unit) {
  return chooseRowChunk(width, unit.lanes, minColumns(unit)) != 0;
}

bool isDirectMaxPool(nn::MaxPoolOp pool, const VectorUnit &unit) {
  return chooseTiling(windowOf(pool), unit).has_value();
}

namespace {

/// The padded copy's ONNX-style pads (raised on the right to cover the last
/// tile's last vector, and to whole column phases) and its columns per phase.
struct CopyLayout {
  SmallVector<int64_t> pads;
  int64_t phaseColumns;
};

CopyLayout copyLayout(nn::ConvOp conv, const VectorUnit &unit) {
  Tiling t = tilingOf(windowOf(conv), unit);
  auto inShape = cast<RankedTensorType>(conv.getInput().getType()).getShape();
  auto wShape = cast<RankedTensorType>(conv.getWeight().getType()).getShape();
  auto outShape = cast<RankedTensorType>(conv.getType()).getShape();
  int64_t colStride = conv.getStrides()[1];
  SmallVector<int64_t> pads = coveringPads(conv.getPads(), inShape, outShape, wShape.drop_front(2),
                                           conv.getStrides(), conv.getDilations());
  // Tap kx of a strided convolution reads phase (kx*d) % s at column
  // ow + (kx*d) / s: a unit-stride run.
  int64_t phaseColumns =
      outShape[3] - t.columns + t.vectors * t.lanes + (wShape[3] - 1) * conv.getDilations()[1] / colStride;
  int64_t width = std::max(phaseColumns * colStride, inShape[3] + pads[1] + pads[3]);
  phaseColumns = (width + colStride - 1) / colStride;
  pads[3] = phaseColumns * colStride - inShape[3] - pads[1];
  return {pads, phaseColumns};
}

} // namespace

bool readsInputCopy(nn::ConvOp conv, const VectorUnit &unit) {
  return readsPaddedCopy(tilingOf(windowOf(conv), unit).channels);
}

SmallVector<int64_t> inputCopyFrame(nn::ConvOp conv, const VectorUnit &unit) {
  if (!readsInputCopy(conv, unit) || conv.getStrides()[1] != 1)
    return {};
  return copyLayout(conv, unit).pads;
}

RankedTensorType inputCopyType(nn::ConvOp conv, const VectorUnit &unit) {
  CopyLayout layout = copyLayout(conv, unit);
  auto in = cast<RankedTensorType>(conv.getInput().getType());
  int64_t rows = in.getShape()[2] + layout.pads[0] + layout.pads[2], colStride = conv.getStrides()[1];
  SmallVector<int64_t> shape{in.getShape()[0], in.getShape()[1], rows};
  if (colStride > 1)
    shape.push_back(colStride);
  shape.push_back(layout.phaseColumns);
  return RankedTensorType::get(shape, in.getElementType());
}

Value buildInputCopy(OpBuilder &b, Location loc, nn::ConvOp conv, Value x, Value init, const VectorUnit &unit) {
  CopyLayout layout = copyLayout(conv, unit);
  int64_t colStride = conv.getStrides()[1];
  // Every element of the copy is written once: zeros on the border only,
  // then the input (filling the whole copy first wrote its interior twice;
  // at batch 32 the copies are memory-bound: FPN's 64-channel 80x80 ones
  // 5.2-5.7 ms each).
  if (colStride == 1)
    return copyWithZeroBorder(b, loc, x, init, layout.pads);
  return buildPhaseSplitCopy(b, loc, x, init, layout.pads[0], layout.pads[1], unit.lanes);
}

namespace {

/// Where a direct kernel's task writes its tile of output channels x rows x
/// columns: at the tile's place in the output, or, when the kernel writes
/// its output inside a zero frame (the padded copy the next direct
/// convolution reads, see buildDirectConvolution), in a rectangle of the
/// framed output that also covers the frame beside the tile (the first and
/// last row and column tiles reach the frame's edges, corners included):
/// the rectangles partition the framed output, so each frame element is
/// zeroed by one task and the kernel stays one parallel loop.
struct TileWindow {
  OpFoldResult row, column;              // the rectangle's corner in the output
  OpFoldResult rows, columns;            // its extent
  Value rowOffset, columnOffset;         // the tile's first element inside it
  Value onFrame;                         // null without a frame
  RankedTensorType type;                 // [channels, rows, columns]
  int64_t tileRows = 0, tileColumns = 0; // the tile's own extent

  static TileWindow plain(OpBuilder &b, Location loc, Value oh0, Value ow0, const Tiling &t) {
    TileWindow w;
    w.row = oh0;
    w.column = ow0;
    w.rows = b.getIndexAttr(t.rows);
    w.columns = b.getIndexAttr(t.columns);
    w.rowOffset = w.columnOffset = indexConstant(b, loc, 0);
    w.type = RankedTensorType::get({t.channels, t.rows, t.columns}, b.getF32Type());
    w.tileRows = t.rows;
    w.tileColumns = t.columns;
    return w;
  }

  /// `coord`: the task's tile coordinates (image, group, channel tile, row
  /// tile, column tile); `frame`: ONNX-style [top, left, bottom, right].
  static TileWindow framed(OpBuilder &b, Location loc, ArrayRef<Value> coord, Value oh0, Value ow0, const Tiling &t,
                           RankedTensorType out, ArrayRef<int64_t> frame) {
    auto c = [&](int64_t v) { return indexConstant(b, loc, v); };
    auto add = [&](Value x, Value y) { return b.createOrFold<arith::AddIOp>(loc, x, y); };
    auto sub = [&](Value x, Value y) { return b.createOrFold<arith::SubIOp>(loc, x, y); };
    auto is = [&](Value x, int64_t v) { return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, c(v)); };
    int64_t oh = out.getShape()[2], ow = out.getShape()[3];
    int64_t height = frame[0] + oh + frame[2], width = frame[1] + ow + frame[3];
    Value firstRow = is(coord[3], 0), lastRow = is(coord[3], oh / t.rows - 1);
    Value firstColumn = is(coord[4], 0), lastColumn = is(coord[4], ow / t.columns - 1);
    Value y = add(oh0, c(frame[0])), x = add(ow0, c(frame[1]));
    Value y0 = arith::SelectOp::create(b, loc, firstRow, c(0), y);
    Value y1 = arith::SelectOp::create(b, loc, lastRow, c(height), add(y, c(t.rows)));
    Value x0 = arith::SelectOp::create(b, loc, firstColumn, c(0), x);
    Value x1 = arith::SelectOp::create(b, loc, lastColumn, c(width), add(x, c(t.columns)));
    Value onFrame = arith::OrIOp::create(b, loc, arith::OrIOp::create(b, loc, firstRow, lastRow),
                                         arith::OrIOp::create(b, loc, firstColumn, lastColumn));
    TileWindow w = plain(b, loc, oh0, ow0, t);
    w.row = y0;
    w.column = x0;
    w.rows = sub(y1, y0);
    w.columns = sub(x1, x0);
    w.rowOffset = sub(y, y0);
    w.columnOffset = sub(x, x0);
    w.onFrame = onFrame;
    w.type = RankedTensorType::get({t.channels, ShapedType::kDynamic, ShapedType::kDynamic}, b.getF32Type());
    return w;
  }

  SmallVector<OpFoldResult> offsets(Value img, Value m0) const { return {img, m0, row, column}; }
  SmallVector<OpFoldResult> sizes(OpBuilder &b, int64_t channels) const {
    return {b.getIndexAttr(1), b.getIndexAttr(channels), rows, columns};
  }

  /// The task's rectangle of `out`, zeroed when it covers frame.
  Value extract(OpBuilder &b, Location loc, Value out, Value img, Value m0, int64_t channels) const {
    SmallVector<OpFoldResult> ones(4, b.getIndexAttr(1));
    Value tile = tensor::ExtractSliceOp::create(b, loc, type, out, offsets(img, m0), sizes(b, channels), ones);
    if (!onFrame)
      return tile;
    // The frame beside the tile: rows above and below it (the rectangle's
    // width), then columns left and right of it (the tile's rows); empty
    // strips where the tile is not on that edge.
    auto zeroed = scf::IfOp::create(
        b, loc, onFrame,
        [&](OpBuilder &ib, Location l) {
          auto c = [&](int64_t v) { return indexConstant(ib, l, v); };
          auto add = [&](Value x, int64_t y) { return ib.createOrFold<arith::AddIOp>(l, x, c(y)); };
          auto sub = [&](OpFoldResult x, Value y) {
            return ib.createOrFold<arith::SubIOp>(l, getValueOrCreateConstantIndexOp(ib, l, x), y);
          };
          Value zero = arith::ConstantOp::create(ib, l, ib.getF32FloatAttr(0));
          Value below = add(rowOffset, tileRows), right = add(columnOffset, tileColumns);
          Value t = tile;
          auto fill = [&](Value row, OpFoldResult rowCount, Value column, OpFoldResult columnCount) {
            SmallVector<OpFoldResult> at{ib.getIndexAttr(0), row, column};
            SmallVector<OpFoldResult> extent{ib.getIndexAttr(channels), rowCount, columnCount};
            SmallVector<OpFoldResult> unit(3, ib.getIndexAttr(1));
            Value strip = tensor::ExtractSliceOp::create(ib, l, t, at, extent, unit);
            strip = linalg::FillOp::create(ib, l, zero, strip).getResult(0);
            t = tensor::InsertSliceOp::create(ib, l, strip, t, at, extent, unit);
          };
          fill(c(0), rowOffset, c(0), columns);
          fill(below, sub(rows, below), c(0), columns);
          fill(rowOffset, ib.getIndexAttr(tileRows), c(0), columnOffset);
          fill(rowOffset, ib.getIndexAttr(tileRows), right, sub(columns, right));
          scf::YieldOp::create(ib, l, t);
        },
        [&](OpBuilder &ib, Location l) { scf::YieldOp::create(ib, l, tile); });
    return zeroed.getResult(0);
  }

  /// Accumulator `v` of output channel `ch`, tile row `r`, at tile column
  /// `column`; lanes past the tile's width are masked (in a framed
  /// rectangle, explicitly: they would land on the frame or the next tile).
  Value write(OpBuilder &b, Location loc, Value v, Value tile, int64_t ch, int64_t r, int64_t column) const {
    auto c = [&](int64_t k) { return indexConstant(b, loc, k); };
    auto vecType = cast<VectorType>(v.getType());
    int64_t lanes = vecType.getNumElements();
    SmallVector<Value> indices{c(ch), b.createOrFold<arith::AddIOp>(loc, rowOffset, c(r)),
                               b.createOrFold<arith::AddIOp>(loc, columnOffset, c(column))};
    bool whole = column + lanes <= tileColumns;
    // A tile of its own static shape masks the lanes past its end itself.
    if (whole || !onFrame)
      return vector::TransferWriteOp::create(b, loc, v, tile, indices, ArrayRef<bool>{whole}).getResult();
    Value mask = vector::CreateMaskOp::create(b, loc, VectorType::get({lanes}, b.getI1Type()),
                                              ValueRange{c(tileColumns - column)});
    auto map = AffineMapAttr::get(AffineMap::getMinorIdentityMap(3, 1, b.getContext()));
    return vector::TransferWriteOp::create(b, loc, v, tile, indices, map, mask, b.getBoolArrayAttr({true}))
        .getResult();
  }

  void insert(OpBuilder &b, Location loc, Value tile, Value out, Value img, Value m0, int64_t channels) const {
    SmallVector<OpFoldResult> ones(4, b.getIndexAttr(1));
    tensor::ParallelInsertSliceOp::create(b, loc, tile, out, offsets(img, m0), sizes(b, channels), ones);
  }
};

/// The direct kernel of window `g` (see buildDirectConvolution; for a max
/// pool `w`, `bias` and `residual` are null and the epilogue empty).
Value buildDirect(OpBuilder &b, Location loc, const Window &g, Value x, Value w, Value bias, Value residual,
                  const ConvEpilogue &epilogue, Value init, const VectorUnit &unit, ArrayRef<int64_t> frame,
                  ArrayRef<int64_t> residualFrame) {
  Tiling t = tilingOf(g, unit);
  const int64_t vectorLanes = t.lanes;
  auto outShape = g.out.getShape();
  int64_t n = outShape[0], m = outShape[1], oh = outShape[2], ow = outShape[3];
  int64_t group = g.group, cg = g.groupChannels, mg = m / group, kh = g.kh, kw = g.kw;
  ArrayRef<int64_t> dilations = g.dilations;
  Type f32 = b.getF32Type();
  auto vecType = VectorType::get({vectorLanes}, f32);

  auto inShape = cast<RankedTensorType>(x.getType()).getShape();
  int64_t height = inShape[2];
  int64_t padTop = g.pads[0], padLeft = g.pads[1];
  // What padding reads as, and where the accumulators start: 0 for a
  // convolution's sums, -inf for a max pool's maxima.
  float padding = g.max ? -std::numeric_limits<float>::infinity() : 0.0f;
  Value zeroVector = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vecType, b.getF32FloatAttr(padding)));
  ArrayRef<int64_t> strides = g.strides;
  int64_t rowStride = strides[0], colStride = strides[1];
  // A padded copy (buildInputCopy) is read in its own coordinates.
  bool padded = readsPaddedCopy(t.channels);
  if (padded)
    padTop = padLeft = 0;
  int64_t channelTiles = mg / t.channels, rowTiles = oh / t.rows, columnTiles = ow / t.columns;
  SmallVector<int64_t> tileGrid{n, group, channelTiles, rowTiles, columnTiles};
  int64_t tiles = n * group * channelTiles * rowTiles * columnTiles;
  auto forall = scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(tiles)}, ValueRange{init},
                                      std::nullopt);
  OpBuilder fb = OpBuilder::atBlockBegin(forall.getBody());
  auto c = [&](int64_t v) { return indexConstant(fb, loc, v); };
  // Tile coordinates, innermost (column tile) fastest.
  SmallVector<Value> coord = gridCoordinates(fb, loc, forall.getInductionVars()[0], tileGrid);
  Value img = coord[0], grp = coord[1];
  Value m0 = arith::AddIOp::create(fb, loc, arith::MulIOp::create(fb, loc, grp, c(mg)),
                                   arith::MulIOp::create(fb, loc, coord[2], c(t.channels)));
  Value oh0 = arith::MulIOp::create(fb, loc, coord[3], c(t.rows));
  Value ow0 = arith::MulIOp::create(fb, loc, coord[4], c(t.columns));
  Value c0 = arith::MulIOp::create(fb, loc, grp, c(cg));

  // Accumulators [channel][row][vector].
  auto accIndex = [&](int64_t ch, int64_t r, int64_t v) { return (ch * t.rows + r) * t.vectors + v; };
  SmallVector<Value> initial(t.channels * t.rows * t.vectors, zeroVector);
  // The input row of tile row r under kernel row ky and, reading the input
  // as it lies, whether that row lies inside the image (the address then
  // clamped into it). ky is a constant when the kernel rows are unrolled,
  // the loop's induction variable otherwise.
  struct InputRow {
    Value row, inside;
  };
  auto inputRowOf = [&](OpBuilder &lb, Location l, int64_t r, Value ky) -> InputRow {
    auto ci = [&](int64_t v) { return indexConstant(lb, l, v); };
    std::optional<int64_t> fixed = getConstantIntValue(ky);
    Value offset = fixed ? ci(r * rowStride + *fixed * dilations[0] - padTop)
                         : arith::AddIOp::create(lb, l, arith::MulIOp::create(lb, l, ky, ci(dilations[0])),
                                                 ci(r * rowStride - padTop));
    Value y = arith::AddIOp::create(lb, l, arith::MulIOp::create(lb, l, oh0, ci(rowStride)), offset);
    if (padded)
      return {y, Value()};
    Value inside = arith::AndIOp::create(lb, l, arith::CmpIOp::create(lb, l, arith::CmpIPredicate::sge, y, ci(0)),
                                         arith::CmpIOp::create(lb, l, arith::CmpIPredicate::slt, y, ci(height)));
    return {arith::MinSIOp::create(lb, l, arith::MaxSIOp::create(lb, l, y, ci(0)), ci(height - 1)), inside};
  };
  // One vector of input for output columns [v*L, v*L + L) of the tile
  // under column tap offset `tap`, from input row `in`.
  auto shiftRight = [&](OpBuilder &lb, Location l, Value v, int64_t lanes) {
    SmallVector<int64_t> mask;
    for (int64_t i = 0; i < vectorLanes; ++i)
      mask.push_back(i < lanes ? i : vectorLanes + i - lanes);
    return (Value)vector::ShuffleOp::create(lb, l, zeroVector, v, mask);
  };
  Value zero = arith::ConstantOp::create(fb, loc, fb.getF32FloatAttr(padding));
  Value ow0x = arith::MulIOp::create(fb, loc, ow0, c(colStride)); // input column of the tile
  auto readInput = [&](OpBuilder &lb, Location l, Value cin, const InputRow &in, int64_t tap, int64_t v,
                       bool leftmost) -> Value {
    auto read = [&](Value col, ArrayRef<Value> phase, bool inBounds) {
      SmallVector<Value> at{img, cin, in.row};
      llvm::append_range(at, phase);
      at.push_back(col);
      return (Value)vector::TransferReadOp::create(lb, l, vecType, x, at, zero, ArrayRef<bool>{inBounds});
    };
    if (padded) {
      // Phase (tap % s), column ow + tap / s of the padded copy.
      SmallVector<Value> phase;
      if (colStride > 1)
        phase.push_back(indexConstant(lb, l, tap % colStride));
      return read(arith::AddIOp::create(lb, l, ow0, indexConstant(lb, l, v * vectorLanes + tap / colStride)), phase,
                  true);
    }
    // In place: lane i wants column (ow0 + v*L + i)*s + off. Reads that
    // would start left of column 0 (leftmost tile only) start at the first
    // element of the same phase and shift the missing lanes in as zeros.
    int64_t off = tap - padLeft;
    int64_t q = off >= 0 ? off / colStride : -((-off + colStride - 1) / colStride), ph = off - q * colStride;
    int64_t first = v * vectorLanes + q; // first lane's column, in units of s, past ph
    int64_t shift = leftmost && first < 0 ? -first : 0;
    Value col = leftmost ? indexConstant(lb, l, (first + shift) * colStride + ph)
                         : arith::AddIOp::create(lb, l, ow0x, indexConstant(lb, l, first * colStride + ph));
    Value lanes;
    if (colStride == 1) {
      lanes = read(col, {}, false);
    } else {
      // Stride 2: the even lanes of 2L consecutive elements.
      Value lo = read(col, {}, false);
      Value hi = read(arith::AddIOp::create(lb, l, col, indexConstant(lb, l, vectorLanes)), {}, false);
      SmallVector<int64_t> even;
      for (int64_t i = 0; i < vectorLanes; ++i)
        even.push_back(2 * i);
      lanes = vector::ShuffleOp::create(lb, l, lo, hi, even);
    }
    if (shift)
      lanes = shiftRight(lb, l, lanes, shift);
    return arith::SelectOp::create(lb, l, in.inside, lanes, zeroVector);
  };
  // The taps of kernel row ky (kw of them, unrolled) folded into `acc`.
  // rowsOf[r]: tile row r's input row under kernel row ky.
  auto kernelRow = [&](OpBuilder &lb, Location l, Value cin, Value ci, Value ky, ArrayRef<InputRow> rowsOf,
                       SmallVector<Value> &acc, bool leftmost) {
    for (int64_t kx = 0; kx < kw; ++kx) {
      SmallVector<Value> rowsIn;
      for (int64_t r = 0; r < t.rows; ++r)
        for (int64_t v = 0; v < t.vectors; ++v)
          rowsIn.push_back(readInput(lb, l, cin, rowsOf[r], kx * dilations[1], v, leftmost));
      if (g.max) {
        for (int64_t i = 0; i < t.rows * t.vectors; ++i)
          acc[i] = arith::MaximumFOp::create(lb, l, acc[i], rowsIn[i]);
        continue;
      }
      for (int64_t ch = 0; ch < t.channels; ++ch) {
        Value weight = tensor::ExtractOp::create(
            lb, l, w,
            ValueRange{arith::AddIOp::create(lb, l, m0, indexConstant(lb, l, ch)), ci, ky, indexConstant(lb, l, kx)});
        Value splat = vector::BroadcastOp::create(lb, l, vecType, weight);
        for (int64_t i = 0; i < t.rows * t.vectors; ++i) {
          int64_t at = ch * t.rows * t.vectors + i;
          acc[at] = vector::FMAOp::create(lb, l, splat, rowsIn[i], acc[at]);
        }
      }
    }
  };
  // The reduction over the group's input channels, for interior tiles or for
  // the leftmost one (whose reads left of column 0 shift in zeros). Small
  // windows unroll all their taps; larger ones loop over the kernel rows:
  // with a 7x7 window's 49 taps in one block, LLVM's scheduler hoisted the
  // weight broadcasts far ahead of their FMAs and spilled them (whole
  // vectors, to the stack), which halved the stem convolution's rate.
  bool loopKernelRows = kh * kw > kMaxUnrolledTaps;
  auto rowsAt = [&](OpBuilder &lb, Location l, Value ky) {
    SmallVector<InputRow> rows;
    for (int64_t r = 0; r < t.rows; ++r)
      rows.push_back(inputRowOf(lb, l, r, ky));
    return rows;
  };
  // Unrolled, every (kernel row, tile row) pair's input row is computed once
  // per tile, outside the reduction.
  SmallVector<Value> kernelRows;
  SmallVector<SmallVector<InputRow>> unrolledRows;
  if (!loopKernelRows)
    for (int64_t ky = 0; ky < kh; ++ky) {
      kernelRows.push_back(c(ky));
      unrolledRows.push_back(rowsAt(fb, loc, kernelRows.back()));
    }
  auto reduce = [&](OpBuilder &ob, bool leftmost) {
    return scf::ForOp::create(
        ob, loc, c(0), c(cg), c(1), initial,
        [&](OpBuilder &lb, Location l, Value ci, ValueRange accs) {
          Value cin = arith::AddIOp::create(lb, l, c0, ci);
          SmallVector<Value> acc(accs);
          if (loopKernelRows) {
            auto rows = scf::ForOp::create(
                lb, l, indexConstant(lb, l, 0), indexConstant(lb, l, kh), indexConstant(lb, l, 1), acc,
                [&](OpBuilder &kb, Location kl, Value ky, ValueRange rowAccs) {
                  SmallVector<Value> rowAcc(rowAccs);
                  kernelRow(kb, kl, cin, ci, ky, rowsAt(kb, kl, ky), rowAcc, leftmost);
                  scf::YieldOp::create(kb, kl, rowAcc);
                });
            acc.assign(rows.getResults().begin(), rows.getResults().end());
          } else {
            for (int64_t ky = 0; ky < kh; ++ky)
              kernelRow(lb, l, cin, ci, kernelRows[ky], unrolledRows[ky], acc, leftmost);
          }
          scf::YieldOp::create(lb, l, acc);
        });
  };
  SmallVector<Value> sums;
  if (padded || padLeft == 0) {
    sums = reduce(fb, false).getResults();
  } else {
    Value leftmost = arith::CmpIOp::create(fb, loc, arith::CmpIPredicate::eq, coord[4], c(0));
    auto branch = scf::IfOp::create(
        fb, loc, leftmost,
        [&](OpBuilder &ib, Location l) { scf::YieldOp::create(ib, l, reduce(ib, true).getResults()); },
        [&](OpBuilder &ib, Location l) { scf::YieldOp::create(ib, l, reduce(ib, false).getResults()); });
    sums = branch.getResults();
  }

  // The epilogue in registers, in ONNX order (the same roundings as the
  // separate kernels it replaces): the bias added to the finished sum, the
  // residual's tile (read like the output tile is written), then the ReLU or
  // Clip.
  std::optional<std::pair<double, double>> clamp = epilogue.clamp;
  for (int64_t ch = 0; ch < t.channels; ++ch) {
    Value biasSplat;
    if (bias)
      biasSplat = vector::BroadcastOp::create(
          fb, loc, vecType, tensor::ExtractOp::create(fb, loc, bias, ValueRange{arith::AddIOp::create(fb, loc, m0, c(ch))}));
    for (int64_t r = 0; r < t.rows; ++r)
      for (int64_t v = 0; v < t.vectors; ++v) {
        Value &sum = sums[accIndex(ch, r, v)];
        if (bias)
          sum = arith::AddFOp::create(fb, loc, sum, biasSplat);
        if (residual) {
          bool whole = (v + 1) * vectorLanes <= t.columns;
          auto plus = [&](Value base, int64_t k) { return fb.createOrFold<arith::AddIOp>(loc, base, c(k)); };
          // Inside a frame: offset by its top and left.
          int64_t top = residualFrame.empty() ? 0 : residualFrame[0];
          int64_t left = residualFrame.empty() ? 0 : residualFrame[1];
          Value tile = vector::TransferReadOp::create(
              fb, loc, vecType, residual,
              ValueRange{img, plus(m0, ch), plus(oh0, r + top), plus(ow0, v * vectorLanes + left)}, zero,
              ArrayRef<bool>{whole});
          sum = arith::AddFOp::create(fb, loc, sum, tile);
        }
        if (clamp)
          sum = applyClamp(fb, loc, sum, *clamp);
      }
  }

  // The tile of the output, written with masked stores past its width;
  // inside a zero frame, the tile's rectangle of the framed output.
  Value out = forall.getRegionIterArgs()[0];
  TileWindow window = frame.empty() ? TileWindow::plain(fb, loc, oh0, ow0, t)
                                    : TileWindow::framed(fb, loc, coord, oh0, ow0, t, g.out, frame);
  Value tile = window.extract(fb, loc, out, img, m0, t.channels);
  for (int64_t ch = 0; ch < t.channels; ++ch)
    for (int64_t r = 0; r < t.rows; ++r)
      for (int64_t v = 0; v < t.vectors; ++v)
        tile = window.write(fb, loc, sums[accIndex(ch, r, v)], tile, ch, r, v * vectorLanes);
  OpBuilder tb = OpBuilder::atBlockBegin(forall.getTerminator().getBody());
  window.insert(tb, loc, tile, out, img, m0, t.channels);
  return forall.getResult(0);
}

} // namespace

Value buildDirectConvolution(OpBuilder &b, Location loc, nn::ConvOp conv, Value x, Value w, Value bias,
                             Value residual, const ConvEpilogue &epilogue, Value init, const VectorUnit &unit,
                             ArrayRef<int64_t> frame, ArrayRef<int64_t> residualFrame) {
  return buildDirect(b, loc, windowOf(conv), x, w, bias, residual, epilogue, init, unit, frame, residualFrame);
}

Value buildDirectMaxPool(OpBuilder &b, Location loc, nn::MaxPoolOp pool, Value x, Value init, const VectorUnit &unit,
                         ArrayRef<int64_t> frame) {
  return buildDirect(b, loc, windowOf(pool), x, Value(), Value(), Value(), ConvEpilogue(), init, unit, frame, {});
}

} // namespace nncc
