/// Handlers of the signal ops DFT, STFT and MelWeightMatrix for constant sizes.
/// A DFT is one matmul with a constant matrix of cosines and sines built at
/// import (the transforms of ONNX models are short: frames of an STFT, a few
/// hundred points), STFT gathers its frames first, and MelWeightMatrix is a
/// constant.
#include "lib/Import/handlers/HandlerUtils.h"
#include "lib/Import/TensorConversion.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;

namespace nncc::import {
namespace {

/// Input `i` as a constant integer scalar, nullopt when it is omitted.
FailureOr<std::optional<int64_t>> constIntInput(NodeContext &ctx, size_t i, StringRef name) {
  if (!ctx.input(i))
    return std::optional<int64_t>();
  auto values = ctx.constInts(i);
  if (!values || values->size() != 1)
    return ctx.error(name + " must be a constant scalar (bind it with --bind-input)");
  return std::optional<int64_t>((*values)[0]);
}

/// cos and sin of 2π m / n, exact at the quarter turns (m reduced mod n first
/// keeps the angle exact for long transforms).
std::pair<double, double> unitRoot(int64_t m, int64_t n) {
  if ((4 * m) % n == 0) {
    const double quarter[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
    int64_t q = 4 * m / n;
    return {quarter[q][0], quarter[q][1]};
  }
  double angle = 2 * M_PI * (double)m / (double)n;
  return {std::cos(angle), std::sin(angle)};
}

/// The matrix that maps `samples` points of `channels` interleaved values (1:
/// real, 2: real and imaginary) to the first `bins` frequencies of a
/// `length`-point DFT, real and imaginary parts interleaved: row t*channels+c,
/// column 2k+d. Samples past `length` are dropped, missing ones are zeros.
/// With θ = ∓2π kt/L: (xr + i xi)(cos θ + i sin θ) = (xr cos θ - xi sin θ) +
/// i (xr sin θ + xi cos θ); the inverse is scaled by 1/L.
DenseElementsAttr dftMatrix(FloatType elem, int64_t samples, int64_t channels, int64_t length,
                            int64_t bins, bool inverse) {
  int64_t rows = samples * channels, cols = 2 * bins;
  SmallVector<double> w(rows * cols, 0.0);
  double sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / length : 1.0;
  for (int64_t t = 0; t < std::min(samples, length); ++t)
    for (int64_t k = 0; k < bins; ++k) {
      auto [c, s] = unitRoot((k * t) % length, length);
      c *= scale;
      s *= sign * scale;
      // + 0.0 turns the -0 of a negated zero sine into 0.
      w[(t * channels) * cols + 2 * k] = c;
      w[(t * channels) * cols + 2 * k + 1] = s + 0.0;
      if (channels == 2) {
        w[(t * channels + 1) * cols + 2 * k] = -s + 0.0;
        w[(t * channels + 1) * cols + 2 * k + 1] = c;
      }
    }
  SmallVector<APFloat> values;
  for (double v : w) {
    APFloat f(v);
    bool lost;
    f.convert(elem.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    values.push_back(f);
  }
  return DenseElementsAttr::get(RankedTensorType::get({rows, cols}, elem), values);
}

/// `x` of shape [..., samples, channels] transformed along its second-last
/// axis: [..., bins, 2].
Value transformLastAxis(NodeContext &ctx, Value x, int64_t length, int64_t bins, bool inverse) {
  auto type = cast<RankedTensorType>(x.getType());
  auto elem = cast<FloatType>(type.getElementType());
  auto shape = type.getShape();
  int64_t rank = type.getRank(), samples = shape[rank - 2], channels = shape[rank - 1];
  int64_t rows = 1;
  for (int64_t d : shape.drop_back(2))
    rows *= d;
  Value flat = build<nn::ReshapeOp>(
      ctx, RankedTensorType::get({rows, samples * channels}, elem), x);
  Value matrix = ctx.constant(dftMatrix(elem, samples, channels, length, bins, inverse));
  Value product = build<nn::MatMulOp>(ctx, RankedTensorType::get({rows, 2 * bins}, elem),
                                      {flat, matrix});
  SmallVector<int64_t> result(shape.drop_back(2));
  result.append({bins, 2});
  return build<nn::ReshapeOp>(ctx, RankedTensorType::get(result, elem), product);
}

/// `x` with axis `from` moved to position `to` (the others in order).
Value moveAxis(NodeContext &ctx, Value x, int64_t from, int64_t to) {
  if (from == to)
    return x;
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (i != from)
      perm.push_back(i);
  perm.insert(perm.begin() + to, from);
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  return build<nn::TransposeOp>(ctx, RankedTensorType::get(shape, type.getElementType()), x,
                                {i64ArrayAttr(ctx, "perm", perm)});
}

/// The signal input `i`: a static float tensor of rank >= 2 whose last axis
/// holds 1 (real) or 2 (complex) values.
FailureOr<RankedTensorType> signalType(NodeContext &ctx, size_t i) {
  auto type = ctx.inputType(i);
  if (!type.hasStaticShape() || type.getRank() < 2 || !isa<FloatType>(type.getElementType()))
    return ctx.error("needs a static float input of rank >= 2");
  int64_t channels = type.getShape().back();
  if (channels != 1 && channels != 2)
    return ctx.error(llvm::formatv("the last axis of the input must hold 1 (real) or 2 "
                                   "(complex) values, not {0}",
                                   channels));
  return type;
}

LogicalResult dft(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  auto type = signalType(ctx, 0);
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  int64_t axis = ctx.attrInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank - 1)
    return ctx.error(llvm::formatv("axis {0} is not a signal axis of the rank-{1} input",
                                   ctx.attrInt("axis", 1), rank));
  auto given = constIntInput(ctx, 1, "dft_length");
  if (failed(given))
    return failure();
  int64_t length = given->value_or(type->getDimSize(axis));
  if (length <= 0)
    return ctx.error(llvm::formatv("dft_length {0} is not positive", length));
  bool inverse = ctx.attrInt("inverse", 0), onesided = ctx.attrInt("onesided", 0);
  if (inverse && onesided)
    return ctx.error("an inverse one-sided DFT is not supported");
  int64_t bins = onesided ? length / 2 + 1 : length;
  Value x = moveAxis(ctx, ctx.input(0), axis, rank - 2);
  Value y = transformLastAxis(ctx, x, length, bins, inverse);
  out.push_back(moveAxis(ctx, y, rank - 2, axis));
  return success();
}

LogicalResult stft(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto type = signalType(ctx, 0);
  if (failed(type))
    return failure();
  if (type->getRank() != 3)
    return ctx.error("the signal must be [batch, length, 1 or 2]");
  auto step = constIntInput(ctx, 1, "frame_step");
  auto frameLength = constIntInput(ctx, 3, "frame_length");
  if (failed(step) || failed(frameLength))
    return failure();
  if (!*step || **step <= 0)
    return ctx.error("frame_step must be positive");
  Value window = ctx.input(2);
  std::optional<int64_t> length = *frameLength;
  if (window) {
    auto windowType = ctx.inputType(2);
    if (windowType.getRank() != 1 || !windowType.hasStaticShape())
      return ctx.error("the window must be a static 1-d tensor");
    if (length && *length != windowType.getDimSize(0))
      return ctx.error(llvm::formatv("frame_length {0} differs from the window's length {1}",
                                     *length, windowType.getDimSize(0)));
    length = windowType.getDimSize(0);
  }
  int64_t batch = type->getDimSize(0), samples = type->getDimSize(1);
  int64_t channels = type->getDimSize(2);
  if (!length || *length <= 0 || *length > samples)
    return ctx.error("needs a frame_length or window between 1 and the signal's length");
  int64_t frames = (samples - *length) / **step + 1;
  bool onesided = ctx.attrInt("onesided", 1);
  if (onesided && channels == 2)
    return ctx.error("a one-sided STFT needs a real signal");
  // The frames: signal[:, f * step + t, :] as [batch, frames, length, channels].
  SmallVector<int64_t> indices;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t t = 0; t < *length; ++t)
      indices.push_back(f * **step + t);
  Type elem = type->getElementType();
  auto framesType = RankedTensorType::get({batch, frames, *length, channels}, elem);
  Value framed = build<nn::GatherOp>(ctx, framesType,
                                     {ctx.input(0), ctx.constantI64(indices, {frames, *length})},
                                     {i64Attr(ctx, "axis", 1)});
  if (window) {
    Value column = build<nn::ReshapeOp>(
        ctx, RankedTensorType::get({*length, 1}, ctx.inputType(2).getElementType()), window);
    if (ctx.inputType(2).getElementType() != elem)
      column = build<nn::CastOp>(ctx, RankedTensorType::get({*length, 1}, elem), column);
    framed = build<nn::MulOp>(ctx, framesType, {framed, column});
  }
  out.push_back(transformLastAxis(ctx, framed, *length, onesided ? *length / 2 + 1 : *length,
                                  /*inverse=*/false));
  return success();
}

/// The triangular mel filters of ONNX's definition: num_mel_bins + 2 points
/// evenly spaced on the mel scale between the edge frequencies, mapped to
/// spectrogram bins; filter i rises from point i to i + 1 and falls to i + 2.
LogicalResult melWeightMatrix(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 5)))
    return failure();
  auto mels = constIntInput(ctx, 0, "num_mel_bins");
  auto dftLength = constIntInput(ctx, 1, "dft_length");
  auto rate = constIntInput(ctx, 2, "sample_rate");
  if (failed(mels) || failed(dftLength) || failed(rate))
    return failure();
  auto lower = ctx.constFloats(3), upper = ctx.constFloats(4);
  if (!lower || lower->size() != 1 || !upper || upper->size() != 1)
    return ctx.error("lower_edge_hertz and upper_edge_hertz must be constant scalars (bind "
                     "them with --bind-input)");
  int64_t melBins = **mels, length = **dftLength, sampleRate = **rate;
  if (melBins <= 0 || length <= 0 || sampleRate <= 0)
    return ctx.error("num_mel_bins, dft_length and sample_rate must be positive");
  auto elem = convertElementType(ctx.attrInt("output_datatype", 1), ctx.context());
  if (!elem)
    return ctx.error(llvm::toString(elem.takeError()));
  auto floatType = dyn_cast<FloatType>(*elem);
  if (!floatType)
    return ctx.error("output_datatype must be a float type");
  int64_t spectrogramBins = length / 2 + 1;
  auto toMel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  double lowMel = toMel((*lower)[0]), highMel = toMel((*upper)[0]);
  double melStep = (highMel - lowMel) / (melBins + 2);
  SmallVector<int64_t> points;
  for (int64_t i = 0; i < melBins + 2; ++i) {
    double hz = 700 * (std::pow(10.0, (i * melStep + lowMel) / 2595) - 1);
    points.push_back((int64_t)std::floor((length + 1) * hz / sampleRate));
  }
  for (int64_t p : points)
    if (p < 0 || p >= spectrogramBins)
      return ctx.error(llvm::formatv("the edge frequencies map to bin {0}, outside the {1} "
                                     "spectrogram bins",
                                     p, spectrogramBins));
  SmallVector<double> w(spectrogramBins * melBins, 0.0);
  for (int64_t i = 0; i < melBins; ++i) {
    int64_t low = points[i], center = points[i + 1], high = points[i + 2];
    if (center == low)
      w[center * melBins + i] = 1;
    else
      for (int64_t j = low; j <= center; ++j)
        w[j * melBins + i] = double(j - low) / double(center - low);
    for (int64_t j = center; j < high; ++j)
      w[j * melBins + i] = double(high - j) / double(high - center);
  }
  SmallVector<APFloat> values;
  for (double v : w) {
    APFloat f(v);
    bool lost;
    f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    values.push_back(f);
  }
  out.push_back(ctx.constant(
      DenseElementsAttr::get(RankedTensorType::get({spectrogramBins, melBins}, floatType), values)));
  return success();
}

} // namespace

void registerSignalHandlers(HandlerRegistry &r) {
  r.add("DFT", 17, dft);
  r.add("STFT", 17, stft);
  r.add("MelWeightMatrix", 17, melWeightMatrix);
}

} // namespace nncc::import
