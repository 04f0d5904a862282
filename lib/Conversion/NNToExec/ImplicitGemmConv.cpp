/// Implicit-GEMM convolutions for the CPU: output channels in the vector
/// lanes, for the small output planes a direct kernel cannot fill (and the
/// planes whose direct tiles would wait on their loads).
///
/// A direct convolution (DirectConv.cpp) puts output columns in the lanes,
/// which needs rows of at least 3/4 of a vector; narrower planes (ResNet's
/// 7x7 and 4x4 stages) ran as im2col + GEMM, which writes every input value
/// kh*kw times into the columns, and the GEMM then packs those columns again
/// (a sixth of a ResNet-18-style batch-32 run went to im2col and that
/// packing). Here each task of one scf.forall computes P consecutive output
/// positions x V vectors of L output channels (P*V accumulators,
/// implicitGemmAccumulators): per input channel and
/// tap, V vector loads of the weights (laid out at compile time so that a
/// tile's channel block is one contiguous run per tap) and one broadcast
/// input value per position feed P*V FMAs. The input is read through a
/// zero-padded copy, so no read needs a bound check. The output is position-major, [N, P, M]:
/// the transpose kernel after it writes the NCHW result (as after the
/// transposed GEMM product this replaces).
#include "lib/Conversion/NNToExec/ImplicitGemmConv.h"

#include "lib/Conversion/NNToExec/Contractions.h"
#include "lib/Conversion/NNToExec/DirectConv.h"
#include "lib/Conversion/NNToExec/LinalgUtils.h"

#include "dialects/NN/NNUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>
#include <tuple>

using namespace mlir;

namespace nncc {
namespace {

/// Kernel taps of one window, at most (as for direct kernels).
constexpr int64_t kMaxTaps = 64;
/// Kernel taps unrolled into the reduction loop's body, at most (as for
/// direct kernels: larger windows made LLVM hoist and spill broadcasts);
/// larger windows loop over their kernel rows.
constexpr int64_t kMaxUnrolledTaps = 16;

SmallVector<int64_t> paddingOf(nn::ConvOp conv) {
  auto in = cast<RankedTensorType>(conv.getInput().getType());
  auto w = cast<RankedTensorType>(conv.getWeight().getType());
  auto out = cast<RankedTensorType>(conv.getType());
  return coveringPads(conv.getPads(), in.getShape(), out.getShape(), w.getShape().drop_front(2), conv.getStrides(),
                      conv.getDilations());
}

/// Whether output channels in the lanes beat output columns for `conv`.
/// Without a direct kernel: where its rows cannot fill the lanes (a wide 1x1
/// convolution is a GEMM on the input as it lies). Beside a direct kernel
/// whose row chunks fill a share f < 1 of their lanes (14 columns in 16), in
/// FMA lanes per output element against two vector FMAs per cycle (the
/// units of sgemmTransposedIsCheaper): the direct kernel leaves
/// C*KH*KW*(1/f - 1) of them idle; the implicit one fills every lane (M is a
/// multiple of L) but its position-major result costs the transpose, counted
/// as the generic one's lane extract and scalar store an element (no
/// scatters): two cycles, 4L (the 8 x 8 blocks of rows of 8+ columns cost
/// less, which this does not count yet). ResNet's 14x14 stage (C = 64,
/// f = 7/8): 82 idle against 64, implicit; its 28x28 one and the stride-2
/// convolution into the 14x14 one (C = 32): 41, direct. Beside a direct
/// kernel that issues more loads than FMAs (directConvIsLoadBound: AVX2's
/// tiles of 8 columns x 8 channels, ResNet's 7x7 stem over 56 columns),
/// whose implicit tiles are FMA-bound: implicit.
bool implicitBeatsDirect(nn::ConvOp conv, const VectorUnit &unit, int64_t outWidth) {
  double fill = directConvLaneFill(conv, unit);
  if (fill == 0)
    return !rowsFillVectors(outWidth, unit);
  if (directConvIsLoadBound(conv, unit))
    return true;
  if (fill >= 1)
    return false;
  auto w = cast<RankedTensorType>(conv.getWeight().getType()).getShape();
  double idle = static_cast<double>(w[1] * w[2] * w[3]) * (1 / fill - 1);
  return idle > 4 * static_cast<double>(unit.lanes);
}

/// Bytes per cycle one core streams from beyond its L2: about 10 measured
/// on an Emerald Rapids Xeon (29 GB/s), more on AMD Zen. The tilings it
/// decides between (implicitGemmCycles) swap only above 28: see "How the
/// CPU plan picks a convolution's form", rule 2, in docs/compiler.md.
constexpr double kStreamBytesPerCycle = 10;
/// The L2 of the smallest x86-64 server cores a module may run on (AMD Zen 2
/// and 3: 512 KiB a core; Intel since Skylake-SP: 1-2 MiB). What is larger
/// is read again from beyond L2 by every pass over it.
constexpr double kL2Bytes = 512 * 1024;

/// The extents of a convolution the tiling is chosen for.
struct ConvExtents {
  int64_t images, channelsOut, rows, cols;
  /// Input channels x taps: the reduction each output element runs.
  int64_t reduction;
  double weightBytes, inputBytes;
};

ConvExtents extentsOf(nn::ConvOp conv) {
  auto w = cast<RankedTensorType>(conv.getWeight().getType());
  ArrayRef<int64_t> out = cast<RankedTensorType>(conv.getType()).getShape();
  int64_t reduction = w.getNumElements() / w.getShape()[0];
  return {out[0], out[1], out[2], out[3], reduction, 4.0 * static_cast<double>(w.getNumElements()),
          4.0 * static_cast<double>(implicitGemmInputType(conv).getNumElements())};
}

/// Whether the tiles walk the channel blocks outside the images: when the
/// weights do not stay in L2 from one image to the next, and the batch's
/// input, which that order reads once per block, stays in L2 or streams
/// fewer bytes than the weights once per image.
bool blocksOuterIsCheaper(const ConvExtents &e, int64_t blocks) {
  if (e.images == 1 || e.weightBytes <= kL2Bytes)
    return false;
  return e.inputBytes <= kL2Bytes ||
         static_cast<double>(blocks) * e.inputBytes < static_cast<double>(e.images) * e.weightBytes;
}

/// FMA chains a tile should keep: two FMA ports of 4-cycle latency need 8
/// in flight, and half again hides a late load (MLAS's AVX2 convolution and
/// GEMM kernels keep 12 too).
constexpr int64_t kWantedChains = 12;

/// The cycle model of tiling `t`. Per input channel and tap, a tile issues
/// P*V FMAs and P + V loads (a broadcast input per position, a weight
/// vector per V) on two FMA and two load ports (the x86 cores since Haswell
/// and Zen 2), and no fewer cycles than kWantedChains FMAs take: a tile of
/// fewer chains waits on their latency. The tile count includes a plane's
/// overlapping last tile. A model's weights together exceed a core's L2, so each kernel
/// finds its own cold: every pass of a channel block's weights from beyond
/// L2 (once per block, or once per image and block when the images are
/// outer and the weights exceed L2) holds the tile that makes it for as
/// long as the stream outlasts the tile's work. At batch 1 on a 4x4 plane
/// this is what matters: one row of 4 positions x 4 vectors reads 64
/// weights per 64 FMAs and waits on the stream (ResNet-18-style's 256-channel
/// stage at batch 1: 164 us a convolution, against 82 us for its 2.4 MB of
/// weights at 29 GB/s and 110 us of FMA work), where all 16 positions x 1
/// vector read each weight once per 16 FMAs and hide the stream behind the
/// work (115 us).
double implicitGemmCycles(const ImplicitGemmTiling &t, const ConvExtents &e) {
  int64_t positions = t.positions, block = t.vectors * t.lanes, blocks = e.channelsOut / block;
  double tiles = static_cast<double>(e.images * blocks * llvm::divideCeil(e.rows * e.cols, positions));
  double reduction = static_cast<double>(e.reduction);
  double perTile =
      reduction * static_cast<double>(std::max({positions * t.vectors, positions + t.vectors, kWantedChains})) / 2;
  double stream = reduction * static_cast<double>(4 * block) / kStreamBytesPerCycle;
  bool weightsStay = t.blocksOuter || e.weightBytes <= kL2Bytes;
  double passes = static_cast<double>(weightsStay ? blocks : blocks * e.images);
  return tiles * perTile + passes * std::max(0.0, stream - perTile);
}

/// The accumulators a tile of `vectors` weight vectors may keep: half the
/// registers (the direct kernels' budget, VectorUnit), or where that is
/// fewer than kWantedChains (AVX2's 16 registers leave 8) up to
/// kWantedChains, as far as the registers hold them beside the tap's weight
/// vectors, its broadcast and one spare. AVX2 with 2 weight vectors: 12
/// (ResNet-18-style's 3x3 convolutions at batch 1 ran at 80% of the FMA
/// peak with 8, onnxruntime's at 90% with 12: docs/performance.md).
int64_t implicitGemmAccumulators(const VectorUnit &unit, int64_t vectors) {
  return std::max(unit.maxAccumulators, std::min(kWantedChains, unit.registers - vectors - 2));
}

/// Tiles whose positions do not follow the rows (neither within one row nor
/// whole rows) keep one input offset per position in a general register:
/// at most this many, so that the loop's own registers stay.
constexpr int64_t kMaxUnalignedPositions = 8;

/// Whether tiles of `positions` stay within one row of `width` or take
/// whole rows of a `height` x `width` plane: their positions' input offsets
/// then follow from the first one by constants.
bool followsRows(int64_t positions, int64_t height, int64_t width) {
  return width % positions == 0 || (positions % width == 0 && height % (positions / width) == 0);
}

} // namespace

std::optional<ImplicitGemmTiling> implicitGemmTiling(nn::ConvOp conv, const VectorUnit &unit) {
  auto in = cast<RankedTensorType>(conv.getInput().getType());
  auto w = cast<RankedTensorType>(conv.getWeight().getType());
  auto out = cast<RankedTensorType>(conv.getType());
  if (out.getRank() != 4 || w.getRank() != 4 || !in.hasStaticShape() || !w.hasStaticShape() ||
      !out.hasStaticShape() || out.getNumElements() == 0 || !isF32(conv.getInput()) || !isF32(conv.getWeight()) ||
      !isF32(conv.getResult()) || (conv.getBias() && !isF32(conv.getBias())) || conv.getGroup() != 1)
    return std::nullopt;
  int64_t m = out.getShape()[1], oh = out.getShape()[2], ow = out.getShape()[3], lanes = unit.lanes;
  if (w.getShape()[2] * w.getShape()[3] > kMaxTaps || m % lanes != 0 || !implicitBeatsDirect(conv, unit, ow) ||
      !conv.getWeight().getDefiningOp<nn::ConstantOp>())
    return std::nullopt;
  // The fewest cycles, then the most accumulators, then the fewest loads.
  ConvExtents extents = extentsOf(conv);
  int64_t plane = oh * ow;
  std::optional<ImplicitGemmTiling> best;
  std::tuple<double, int64_t, int64_t> bestRank;
  for (int64_t vectors : {1, 2, 4})
    for (int64_t positions = 1; positions <= std::min(plane, implicitGemmAccumulators(unit, vectors) / vectors);
         ++positions) {
      int64_t accumulators = positions * vectors;
      if ((m / lanes) % vectors != 0 || accumulators > implicitGemmAccumulators(unit, vectors) ||
          (!followsRows(positions, oh, ow) && positions > kMaxUnalignedPositions))
        continue;
      ImplicitGemmTiling t{lanes, positions, vectors, blocksOuterIsCheaper(extents, m / (vectors * lanes))};
      auto rank = std::make_tuple(-implicitGemmCycles(t, extents), accumulators, -(positions + vectors));
      if (!best || rank > bestRank) {
        best = t;
        bestRank = rank;
      }
    }
  // Fewer than 4 chains leave the FMA units idle: the GEMM form then wins.
  if (!best || best->positions * best->vectors < 4)
    return std::nullopt;
  return best;
}

RankedTensorType implicitGemmInputType(nn::ConvOp conv) {
  auto in = cast<RankedTensorType>(conv.getInput().getType());
  SmallVector<int64_t> pads = paddingOf(conv), shape(in.getShape());
  shape[2] += pads[0] + pads[2];
  shape[3] += pads[1] + pads[3];
  return RankedTensorType::get(shape, in.getElementType());
}

SmallVector<int64_t> implicitGemmInputFrame(nn::ConvOp conv) {
  if (implicitGemmInputType(conv) == conv.getInput().getType())
    return {};
  return paddingOf(conv);
}

Value buildImplicitGemmInputCopy(OpBuilder &b, Location loc, nn::ConvOp conv, Value x, Value init) {
  return copyWithZeroBorder(b, loc, x, init, paddingOf(conv));
}

namespace {

/// The first index of tile `chunk` of `size` along an extent that `size`
/// may not divide: the last tile starts `size` before the extent's end,
/// computing some of its neighbour's elements again (the same values; the
/// overlapping parallel_insert_slices are then plain stores of equal values
/// after bufferization, where MLIR leaves overlapping inserts unspecified:
/// e2e.direct-conv checks the result on a NaN-filled arena).
Value overlappingTileStart(OpBuilder &b, Location loc, Value chunk, int64_t size, int64_t extent) {
  Value start = arith::MulIOp::create(b, loc, chunk, indexConstant(b, loc, size));
  if (extent % size == 0)
    return start;
  return arith::MinUIOp::create(b, loc, start, indexConstant(b, loc, extent - size));
}

/// Positions and channels of a transpose block: an 8 x 8 block is eight
/// vectors of AVX2 (half vectors on AVX-512) and transposes in 24 shuffles.
constexpr int64_t kTransposeBlock = 8;

/// Whether the transpose goes by blocks: rows of at least a block (the
/// narrower 7x7 and 4x4 planes keep the generic, whose reads gather).
bool transposesByBlocks(ArrayRef<int64_t> shape) {
  return shape[3] >= kTransposeBlock && shape[1] % kTransposeBlock == 0;
}

/// `rows` (8 vectors of 8) transposed: the unpack, shuffle and 128-bit
/// permute steps of the x86 8 x 8 transpose, as vector.shuffle.
SmallVector<Value> transpose8x8(OpBuilder &b, Location loc, ArrayRef<Value> rows) {
  auto shuffle = [&](Value x, Value y, ArrayRef<int64_t> mask) -> Value {
    return vector::ShuffleOp::create(b, loc, x, y, mask);
  };
  SmallVector<Value> t, s(8), out(8);
  for (int64_t i = 0; i < 8; i += 2) {
    t.push_back(shuffle(rows[i], rows[i + 1], {0, 8, 1, 9, 4, 12, 5, 13}));
    t.push_back(shuffle(rows[i], rows[i + 1], {2, 10, 3, 11, 6, 14, 7, 15}));
  }
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t k = 0; k < 2; ++k) {
      s[4 * h + 2 * k] = shuffle(t[4 * h + k], t[4 * h + 2 + k], {0, 1, 8, 9, 4, 5, 12, 13});
      s[4 * h + 2 * k + 1] = shuffle(t[4 * h + k], t[4 * h + 2 + k], {2, 3, 10, 11, 6, 7, 14, 15});
    }
  for (int64_t j = 0; j < 4; ++j) {
    out[j] = shuffle(s[j], s[j + 4], {0, 1, 2, 3, 8, 9, 10, 11});
    out[j + 4] = shuffle(s[j], s[j + 4], {4, 5, 6, 7, 12, 13, 14, 15});
  }
  return out;
}

/// The transpose by blocks into `framed` (zero border already written):
/// each task reads 8 positions of one output row x 8 channels of the
/// position-major result (8 vector loads), transposes them in registers,
/// adds the residual and clamps, and stores 8 runs of 8 columns. A row's
/// last block starts 8 columns before its end, writing some of its
/// neighbour's columns again (overlappingTileStart). The channel block is the
/// fastest grid coordinate, so that neighbouring tasks read the same lines.
Value buildBlockedTranspose(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Value byPosition, Value residual,
                            ArrayRef<int64_t> residualFrame, std::optional<std::pair<double, double>> clamp,
                            Value framed, ArrayRef<int64_t> frame) {
  int64_t n = shape[0], m = shape[1], oh = shape[2], ow = shape[3], block = kTransposeBlock;
  int64_t chunks = llvm::divideCeil(ow, block), blocks = m / block;
  auto forall = scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(n * oh * chunks * blocks)},
                                      ValueRange{framed}, std::nullopt);
  OpBuilder fb = OpBuilder::atBlockBegin(forall.getBody());
  auto c = [&](int64_t v) { return indexConstant(fb, loc, v); };
  auto add = [&](Value x, int64_t v) { return v == 0 ? x : arith::AddIOp::create(fb, loc, x, c(v)).getResult(); };
  SmallVector<Value> coord = gridCoordinates(fb, loc, forall.getInductionVars()[0], {n, oh, chunks, blocks});
  Value img = coord[0], y = coord[1];
  Value x0 = overlappingTileStart(fb, loc, coord[2], block, ow);
  Value m0 = arith::MulIOp::create(fb, loc, coord[3], c(block));
  Value p0 = arith::AddIOp::create(fb, loc, arith::MulIOp::create(fb, loc, y, c(ow)), x0);
  Type f32 = fb.getF32Type();
  auto vecType = VectorType::get({block}, f32);
  Value zero = arith::ConstantOp::create(fb, loc, fb.getF32FloatAttr(0));
  SmallVector<Value> rows;
  for (int64_t i = 0; i < block; ++i)
    rows.push_back(vector::TransferReadOp::create(fb, loc, vecType, byPosition, ValueRange{img, add(p0, i), m0}, zero,
                                                  ArrayRef<bool>{true}));
  SmallVector<Value> columns = transpose8x8(fb, loc, rows);
  int64_t rTop = residualFrame.empty() ? 0 : residualFrame[0], rLeft = residualFrame.empty() ? 0 : residualFrame[1];
  Value tile = emptyTensor(fb, loc, {block, block}, f32);
  for (int64_t j = 0; j < block; ++j) {
    Value v = columns[j];
    if (residual)
      v = arith::AddFOp::create(fb, loc, v,
                                vector::TransferReadOp::create(fb, loc, vecType, residual,
                                                               ValueRange{img, add(m0, j), add(y, rTop), add(x0, rLeft)},
                                                               zero, ArrayRef<bool>{true}));
    if (clamp)
      v = applyClamp(fb, loc, v, *clamp);
    tile = vector::TransferWriteOp::create(fb, loc, v, tile, ValueRange{c(j), c(0)}, ArrayRef<bool>{true}).getResult();
  }
  int64_t top = frame.empty() ? 0 : frame[0], left = frame.empty() ? 0 : frame[1];
  OpBuilder tb = OpBuilder::atBlockBegin(forall.getTerminator().getBody());
  SmallVector<OpFoldResult> offsets{img, m0, add(y, top), add(x0, left)};
  SmallVector<OpFoldResult> sizes{tb.getIndexAttr(1), tb.getIndexAttr(block), tb.getIndexAttr(1),
                                  tb.getIndexAttr(block)};
  SmallVector<OpFoldResult> ones(4, tb.getIndexAttr(1));
  tensor::ParallelInsertSliceOp::create(tb, loc, tile, forall.getRegionIterArgs()[0], offsets, sizes, ones);
  return forall.getResult(0);
}

} // namespace

Value buildTransposeEpilogue(OpBuilder &b, Location loc, nn::ConvOp conv, Value byPosition, Value residual,
                             ArrayRef<int64_t> residualFrame, std::optional<std::pair<double, double>> clamp,
                             Value init, ArrayRef<int64_t> frame) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(conv.getType()).getShape();
  Value framed = frame.empty() ? init : zeroBorder(b, loc, init, shape, frame);
  if (transposesByBlocks(shape))
    return buildBlockedTranspose(b, loc, shape, byPosition, residual, residualFrame, clamp, framed, frame);
  Value interior = frame.empty() ? init : extractInterior(b, loc, framed, shape, frame);
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(getAffineDimExpr(i, ctx));
  // interior[n, m, y, x] = byPosition[n, y * OW + x, m] (+ residual[n, m, y, x]).
  SmallVector<Value> inputs{byPosition};
  SmallVector<AffineMap> maps{AffineMap::get(4, 0, {d[0], d[2] * shape[3] + d[3], d[1]}, ctx)};
  if (residual) {
    inputs.push_back(residualFrame.empty() ? residual : extractInterior(b, loc, residual, shape, residualFrame));
    maps.push_back(b.getMultiDimIdentityMap(4));
  }
  maps.push_back(b.getMultiDimIdentityMap(4));
  SmallVector<utils::IteratorType> parallel(4, utils::IteratorType::parallel);
  interior = generic(b, loc, inputs, interior, maps, parallel,
                     [&](OpBuilder &gb, Location l, ValueRange s) -> SmallVector<Value> {
                       Value v = residual ? arith::AddFOp::create(gb, l, s[0], s[1]).getResult() : s[0];
                       return {clamp ? applyClamp(gb, l, v, *clamp) : v};
                     })[0];
  return frame.empty() ? interior : insertInterior(b, loc, interior, framed, frame);
}

DenseElementsAttr implicitGemmWeights(nn::ConvOp conv, const ImplicitGemmTiling &t) {
  auto w = cast<RankedTensorType>(conv.getWeight().getType());
  std::optional<SmallVector<float>> values = nn::constantFloats(conv.getWeight());
  assert(values && "implicitGemmTiling accepts constant weights only");
  int64_t m = w.getShape()[0], taps = w.getNumElements() / m, block = t.vectors * t.lanes;
  SmallVector<float> blocked(values->size());
  // [M, C*KH*KW] -> [M / block, C*KH*KW, block].
  for (int64_t o = 0; o < m; ++o)
    for (int64_t k = 0; k < taps; ++k)
      blocked[((o / block) * taps + k) * block + o % block] = (*values)[o * taps + k];
  auto type = RankedTensorType::get({m / block, taps, block}, w.getElementType());
  return DenseElementsAttr::get(type, ArrayRef<float>(blocked));
}

Value buildImplicitGemmConvolution(OpBuilder &b, Location loc, nn::ConvOp conv, Value xPadded, Value weights,
                                   Value bias, std::optional<std::pair<double, double>> clamp, Value init,
                                   const ImplicitGemmTiling &t) {
  auto in = cast<RankedTensorType>(conv.getInput().getType());
  auto wShape = cast<RankedTensorType>(conv.getWeight().getType()).getShape();
  auto outShape = cast<RankedTensorType>(conv.getType()).getShape();
  int64_t n = outShape[0], m = outShape[1], oh = outShape[2], ow = outShape[3];
  int64_t channels = in.getShape()[1], kh = wShape[2], kw = wShape[3], block = t.vectors * t.lanes;
  ArrayRef<int64_t> strides = conv.getStrides(), dilations = conv.getDilations();
  Type f32 = b.getF32Type();
  auto vecType = VectorType::get({t.lanes}, f32);

  // Tiles (image, channel block, position chunk), or channel block outside
  // the images (t.blocksOuter); the chunk fastest: neighbouring tiles share
  // their block of the weights.
  int64_t plane = oh * ow, positions = t.positions, chunks = llvm::divideCeil(plane, positions);
  int64_t blocks = m / block, tiles = n * blocks * chunks;
  SmallVector<int64_t> grid{n, blocks, chunks};
  if (t.blocksOuter)
    std::swap(grid[0], grid[1]);
  auto forall = scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(tiles)}, ValueRange{init},
                                      std::nullopt);
  OpBuilder fb = OpBuilder::atBlockBegin(forall.getBody());
  auto c = [&](int64_t v) { return indexConstant(fb, loc, v); };
  SmallVector<Value> coord = gridCoordinates(fb, loc, forall.getInductionVars()[0], grid);
  if (t.blocksOuter)
    std::swap(coord[0], coord[1]);
  Value img = coord[0], mb = coord[1];
  // The tile's first position; a plane's last tile ends at the plane's end.
  Value p0 = overlappingTileStart(fb, loc, coord[2], positions, plane);
  // Each position's output row and column: from the first position's by
  // constants when the tile stays in one row or takes whole rows, else each
  // its own.
  SmallVector<Value> outRow, outCol;
  bool aligned = followsRows(positions, oh, ow);
  Value y0 = aligned ? arith::DivUIOp::create(fb, loc, p0, c(ow)).getResult() : Value();
  Value x0 = aligned ? arith::RemUIOp::create(fb, loc, p0, c(ow)).getResult() : Value();
  for (int64_t j = 0; j < positions; ++j) {
    if (aligned) {
      // Within one row (x0 + j < OW), or whole rows (x0 = 0).
      outRow.push_back(arith::AddIOp::create(fb, loc, y0, c(j / ow)));
      outCol.push_back(arith::AddIOp::create(fb, loc, x0, c(j % ow)));
    } else {
      Value p = arith::AddIOp::create(fb, loc, p0, c(j));
      outRow.push_back(arith::DivUIOp::create(fb, loc, p, c(ow)));
      outCol.push_back(arith::RemUIOp::create(fb, loc, p, c(ow)));
    }
  }
  // Padded input coordinates of position j's tap (ky, kx); windows whose
  // kernel rows loop (below) need the first row's only.
  bool rowsLoop = kh * kw > kMaxUnrolledTaps;
  SmallVector<SmallVector<Value>> rows(kh), cols(kw);
  for (int64_t ky = 0; ky < (rowsLoop ? 1 : kh); ++ky)
    for (int64_t j = 0; j < positions; ++j)
      rows[ky].push_back(arith::AddIOp::create(
          fb, loc, arith::MulIOp::create(fb, loc, outRow[j], c(strides[0])), c(ky * dilations[0])));
  for (int64_t kx = 0; kx < kw; ++kx)
    for (int64_t j = 0; j < positions; ++j)
      cols[kx].push_back(arith::AddIOp::create(
          fb, loc, arith::MulIOp::create(fb, loc, outCol[j], c(strides[1])), c(kx * dilations[1])));

  Value zeroVector = arith::ConstantOp::create(fb, loc, DenseElementsAttr::get(vecType, fb.getF32FloatAttr(0)));
  Value zero = arith::ConstantOp::create(fb, loc, fb.getF32FloatAttr(0));
  SmallVector<Value> initial(positions * t.vectors, zeroVector);
  // One kernel row's taps: `rowOf(j)` is position j's padded input row,
  // `tapOf(kx)` the weights' tap index.
  auto kernelRow = [&](OpBuilder &lb, Location l, Value ci, function_ref<Value(int64_t)> rowOf,
                       function_ref<Value(int64_t)> tapOf, SmallVector<Value> &acc) {
    for (int64_t kx = 0; kx < kw; ++kx) {
      Value tap = tapOf(kx);
      SmallVector<Value> weight;
      for (int64_t v = 0; v < t.vectors; ++v)
        weight.push_back(vector::TransferReadOp::create(lb, l, vecType, weights,
                                                        ValueRange{mb, tap, indexConstant(lb, l, v * t.lanes)}, zero,
                                                        ArrayRef<bool>{true}));
      for (int64_t j = 0; j < positions; ++j) {
        Value value = tensor::ExtractOp::create(lb, l, xPadded, ValueRange{img, ci, rowOf(j), cols[kx][j]});
        Value splat = vector::BroadcastOp::create(lb, l, vecType, value);
        for (int64_t v = 0; v < t.vectors; ++v)
          acc[j * t.vectors + v] = vector::FMAOp::create(lb, l, splat, weight[v], acc[j * t.vectors + v]);
      }
    }
  };
  auto sums = scf::ForOp::create(
      fb, loc, c(0), c(channels), c(1), initial, [&](OpBuilder &lb, Location l, Value ci, ValueRange accs) {
        SmallVector<Value> acc(accs);
        Value tap0 = arith::MulIOp::create(lb, l, ci, indexConstant(lb, l, kh * kw));
        if (!rowsLoop) {
          for (int64_t ky = 0; ky < kh; ++ky)
            kernelRow(
                lb, l, ci, [&](int64_t j) { return rows[ky][j]; },
                [&](int64_t kx) {
                  return arith::AddIOp::create(lb, l, tap0, indexConstant(lb, l, ky * kw + kx)).getResult();
                },
                acc);
          scf::YieldOp::create(lb, l, acc);
          return;
        }
        // Larger windows loop over their kernel rows, the row's taps unrolled.
        auto perRow = scf::ForOp::create(
            lb, l, indexConstant(lb, l, 0), indexConstant(lb, l, kh), indexConstant(lb, l, 1), acc,
            [&](OpBuilder &rb, Location rl, Value ky, ValueRange rowAccs) {
              SmallVector<Value> rowAcc(rowAccs);
              Value rowTap0 = arith::AddIOp::create(
                  rb, rl, tap0, arith::MulIOp::create(rb, rl, ky, indexConstant(rb, rl, kw)));
              Value dy = arith::MulIOp::create(rb, rl, ky, indexConstant(rb, rl, dilations[0]));
              kernelRow(
                  rb, rl, ci, [&](int64_t j) { return arith::AddIOp::create(rb, rl, rows[0][j], dy).getResult(); },
                  [&](int64_t kx) {
                    return arith::AddIOp::create(rb, rl, rowTap0, indexConstant(rb, rl, kx)).getResult();
                  },
                  rowAcc);
              scf::YieldOp::create(rb, rl, rowAcc);
            });
        scf::YieldOp::create(lb, l, perRow.getResults());
      });

  // The bias and the clamp in registers, in ONNX order.
  Value m0 = arith::MulIOp::create(fb, loc, mb, c(block));
  SmallVector<Value> results(sums.getResults());
  for (int64_t v = 0; v < t.vectors; ++v) {
    Value biasVector;
    if (bias)
      biasVector = vector::TransferReadOp::create(
          fb, loc, vecType, bias, ValueRange{arith::AddIOp::create(fb, loc, m0, c(v * t.lanes))}, zero,
          ArrayRef<bool>{true});
    for (int64_t j = 0; j < positions; ++j) {
      Value &sum = results[j * t.vectors + v];
      if (bias)
        sum = arith::AddFOp::create(fb, loc, sum, biasVector);
      if (clamp)
        sum = applyClamp(fb, loc, sum, *clamp);
    }
  }

  // The tile [P, V*L] of the position-major output.
  Value out = forall.getRegionIterArgs()[0];
  SmallVector<OpFoldResult> offsets{img, p0, m0};
  SmallVector<OpFoldResult> sizes{fb.getIndexAttr(1), fb.getIndexAttr(positions), fb.getIndexAttr(block)};
  SmallVector<OpFoldResult> ones(3, fb.getIndexAttr(1));
  auto tileType = RankedTensorType::get({positions, block}, f32);
  Value tile = tensor::ExtractSliceOp::create(fb, loc, tileType, out, offsets, sizes, ones);
  for (int64_t j = 0; j < positions; ++j)
    for (int64_t v = 0; v < t.vectors; ++v)
      tile = vector::TransferWriteOp::create(fb, loc, results[j * t.vectors + v], tile,
                                             ValueRange{c(j), c(v * t.lanes)}, ArrayRef<bool>{true})
                 .getResult();
  OpBuilder tb = OpBuilder::atBlockBegin(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(tb, loc, tile, out, offsets, sizes, ones);
  return forall.getResult(0);
}

} // namespace nncc
