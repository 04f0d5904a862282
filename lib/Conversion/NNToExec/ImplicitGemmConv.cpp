/// Implicit-GEMM convolutions for the CPU: output channels in the vector
/// lanes, for the small output planes a direct kernel cannot fill.
///
/// A direct convolution (DirectConv.cpp) puts output columns in the lanes,
/// which needs rows of at least 3/4 of a vector; narrower planes (ResNet's
/// 7x7 and 4x4 stages) ran as im2col + GEMM, which writes every input value
/// kh*kw times into the columns, and the GEMM then packs those columns again
/// (a sixth of a ResNet-18-style batch-32 run went to im2col and that
/// packing). Here each task of one scf.forall computes P output positions of
/// one output row x V vectors of L output channels (P*V accumulators, at
/// most half the vector registers): per input channel and tap, V vector
/// loads of the weights (laid out at compile time so that a tile's channel
/// block is one contiguous run per tap) and one broadcast input value per
/// position feed P*V FMAs. The input is read through a zero-padded copy, so
/// no read needs a bound check. The output is position-major, [N, P, M]:
/// the transpose kernel after it writes the NCHW result (as after the
/// transposed GEMM product this replaces).
#include "lib/Conversion/NNToExec/ImplicitGemmConv.h"

#include "lib/Conversion/NNToExec/Contractions.h"
#include "lib/Conversion/NNToExec/DirectConv.h"
#include "lib/Conversion/NNToExec/LinalgUtils.h"

#include "dialects/NN/NNUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>
#include <tuple>

using namespace mlir;

namespace nncc {
namespace {

/// Kernel taps unrolled into the reduction loop's body, at most (as for
/// direct kernels: larger windows made LLVM hoist and spill broadcasts).
constexpr int64_t kMaxTaps = 16;

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
/// multiple of L) but its position-major result costs the transpose, where
/// each element leaves its vector by a lane extract and a scalar store (no
/// scatters): two cycles, 4L. ResNet's 14x14 stage (C = 64, f = 7/8): 82
/// idle against 64, implicit; its 28x28 one and the stride-2 convolution
/// into the 14x14 one (C = 32): 41, direct; a 7x7 stem (C = 3): 21, direct.
bool implicitBeatsDirect(nn::ConvOp conv, const VectorUnit &unit, int64_t outWidth) {
  double fill = directConvLaneFill(conv, unit);
  if (fill == 0)
    return !rowsFillVectors(outWidth, unit);
  if (fill >= 1)
    return false;
  auto w = cast<RankedTensorType>(conv.getWeight().getType()).getShape();
  double idle = static_cast<double>(w[1] * w[2] * w[3]) * (1 / fill - 1);
  return idle > 4 * static_cast<double>(unit.lanes);
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
  int64_t m = out.getShape()[1], ow = out.getShape()[3], lanes = unit.lanes;
  if (w.getShape()[2] * w.getShape()[3] > kMaxTaps || m % lanes != 0 || !implicitBeatsDirect(conv, unit, ow) ||
      !conv.getWeight().getDefiningOp<nn::ConstantOp>())
    return std::nullopt;
  // The most accumulators (FMA chains) that fit, then the fewest loads per
  // tap (V weight vectors + P broadcasts).
  std::optional<ImplicitGemmTiling> best;
  auto rank = [](const ImplicitGemmTiling &t) {
    return std::make_tuple(t.positions * t.vectors, -(t.positions + t.vectors));
  };
  for (int64_t vectors : {1, 2, 4})
    for (int64_t positions = 1; positions <= ow; ++positions) {
      ImplicitGemmTiling t{lanes, positions, vectors};
      if ((m / lanes) % vectors == 0 && ow % positions == 0 && positions * vectors <= unit.maxAccumulators &&
          (!best || rank(t) > rank(*best)))
        best = t;
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

Value buildFramedTranspose(OpBuilder &b, Location loc, nn::ConvOp conv, Value byPosition, Value init,
                           ArrayRef<int64_t> frame) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(conv.getType()).getShape();
  Value framed = zeroBorder(b, loc, init, shape, frame);
  Value interior = extractInterior(b, loc, framed, shape, frame);
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(getAffineDimExpr(i, ctx));
  // interior[n, m, y, x] = byPosition[n, y * OW + x, m].
  AffineMap read = AffineMap::get(4, 0, {d[0], d[2] * shape[3] + d[3], d[1]}, ctx);
  SmallVector<utils::IteratorType> parallel(4, utils::IteratorType::parallel);
  interior = generic(b, loc, byPosition, interior, {read, b.getMultiDimIdentityMap(4)}, parallel,
                     [](OpBuilder &, Location, ValueRange s) -> SmallVector<Value> { return {s[0]}; })[0];
  return insertInterior(b, loc, interior, framed, frame);
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

  // Tiles (image, channel block, output row, position chunk), the chunk
  // fastest: neighbouring tiles share their block of the weights.
  SmallVector<int64_t> grid{n, m / block, oh, ow / t.positions};
  int64_t tiles = n * (m / block) * oh * (ow / t.positions);
  auto forall = scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(tiles)}, ValueRange{init},
                                      std::nullopt);
  OpBuilder fb = OpBuilder::atBlockBegin(forall.getBody());
  auto c = [&](int64_t v) { return indexConstant(fb, loc, v); };
  SmallVector<Value> coord = gridCoordinates(fb, loc, forall.getInductionVars()[0], grid);
  Value img = coord[0], mb = coord[1], oy = coord[2];
  Value x0 = arith::MulIOp::create(fb, loc, coord[3], c(t.positions));
  // Padded input coordinates of the tile's first position: row oy*s, column x0*s.
  Value row0 = arith::MulIOp::create(fb, loc, oy, c(strides[0]));
  Value col0 = arith::MulIOp::create(fb, loc, x0, c(strides[1]));
  SmallVector<Value> rows;
  SmallVector<SmallVector<Value>> cols(kw);
  for (int64_t ky = 0; ky < kh; ++ky)
    rows.push_back(arith::AddIOp::create(fb, loc, row0, c(ky * dilations[0])));
  for (int64_t kx = 0; kx < kw; ++kx)
    for (int64_t j = 0; j < t.positions; ++j)
      cols[kx].push_back(arith::AddIOp::create(fb, loc, col0, c(j * strides[1] + kx * dilations[1])));

  Value zeroVector = arith::ConstantOp::create(fb, loc, DenseElementsAttr::get(vecType, fb.getF32FloatAttr(0)));
  Value zero = arith::ConstantOp::create(fb, loc, fb.getF32FloatAttr(0));
  SmallVector<Value> initial(t.positions * t.vectors, zeroVector);
  auto sums = scf::ForOp::create(
      fb, loc, c(0), c(channels), c(1), initial, [&](OpBuilder &lb, Location l, Value ci, ValueRange accs) {
        SmallVector<Value> acc(accs);
        Value tap0 = arith::MulIOp::create(lb, l, ci, indexConstant(lb, l, kh * kw));
        for (int64_t ky = 0; ky < kh; ++ky)
          for (int64_t kx = 0; kx < kw; ++kx) {
            Value tap = arith::AddIOp::create(lb, l, tap0, indexConstant(lb, l, ky * kw + kx));
            SmallVector<Value> weight;
            for (int64_t v = 0; v < t.vectors; ++v)
              weight.push_back(vector::TransferReadOp::create(lb, l, vecType, weights,
                                                              ValueRange{mb, tap, indexConstant(lb, l, v * t.lanes)},
                                                              zero, ArrayRef<bool>{true}));
            for (int64_t j = 0; j < t.positions; ++j) {
              Value value = tensor::ExtractOp::create(lb, l, xPadded, ValueRange{img, ci, rows[ky], cols[kx][j]});
              Value splat = vector::BroadcastOp::create(lb, l, vecType, value);
              for (int64_t v = 0; v < t.vectors; ++v)
                acc[j * t.vectors + v] = vector::FMAOp::create(lb, l, splat, weight[v], acc[j * t.vectors + v]);
            }
          }
        scf::YieldOp::create(lb, l, acc);
      });

  // The bias and the clamp in registers, in ONNX order.
  Value m0 = arith::MulIOp::create(fb, loc, mb, c(block));
  auto splat = [&](double v) -> Value {
    return arith::ConstantOp::create(fb, loc, DenseElementsAttr::get(vecType, fb.getF32FloatAttr(static_cast<float>(v))));
  };
  // A ReLU's max is +inf: no min.
  Value lo = clamp ? splat(clamp->first) : Value();
  Value hi = clamp && clamp->second != std::numeric_limits<double>::infinity() ? splat(clamp->second) : Value();
  SmallVector<Value> results(sums.getResults());
  for (int64_t v = 0; v < t.vectors; ++v) {
    Value biasVector;
    if (bias)
      biasVector = vector::TransferReadOp::create(
          fb, loc, vecType, bias, ValueRange{arith::AddIOp::create(fb, loc, m0, c(v * t.lanes))}, zero,
          ArrayRef<bool>{true});
    for (int64_t j = 0; j < t.positions; ++j) {
      Value &sum = results[j * t.vectors + v];
      if (bias)
        sum = arith::AddFOp::create(fb, loc, sum, biasVector);
      if (lo)
        sum = arith::MaximumFOp::create(fb, loc, sum, lo);
      if (hi)
        sum = arith::MinimumFOp::create(fb, loc, sum, hi);
    }
  }

  // The tile [P, V*L] of the position-major output.
  Value out = forall.getRegionIterArgs()[0];
  Value p0 = arith::AddIOp::create(fb, loc, arith::MulIOp::create(fb, loc, oy, c(ow)), x0);
  SmallVector<OpFoldResult> offsets{img, p0, m0};
  SmallVector<OpFoldResult> sizes{fb.getIndexAttr(1), fb.getIndexAttr(t.positions), fb.getIndexAttr(block)};
  SmallVector<OpFoldResult> ones(3, fb.getIndexAttr(1));
  auto tileType = RankedTensorType::get({t.positions, block}, f32);
  Value tile = tensor::ExtractSliceOp::create(fb, loc, tileType, out, offsets, sizes, ones);
  for (int64_t j = 0; j < t.positions; ++j)
    for (int64_t v = 0; v < t.vectors; ++v)
      tile = vector::TransferWriteOp::create(fb, loc, results[j * t.vectors + v], tile,
                                             ValueRange{c(j), c(v * t.lanes)}, ArrayRef<bool>{true})
                 .getResult();
  OpBuilder tb = OpBuilder::atBlockBegin(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(tb, loc, tile, out, offsets, sizes, ones);
  return forall.getResult(0);
}

} // namespace nncc
