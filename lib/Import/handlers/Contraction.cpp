/// Handlers of contractions: MatMul, Gemm, Conv, ConvTranspose, Einsum.
#include "lib/Import/handlers/HandlerUtils.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace nncc::import {
namespace {

LogicalResult matmul(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  out.push_back(build<nn::MatMulOp>(ctx, *type, {ctx.input(0), ctx.input(1)}));
  return success();
}

LogicalResult gemm(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  SmallVector<Value> operands = ctx.presentInputs(3);
  out.push_back(build<nn::GemmOp>(ctx, *type, operands,
                                  {f64Attr(ctx, "alpha", ctx.attrFloat("alpha", 1.0)),
                                   f64Attr(ctx, "beta", ctx.attrFloat("beta", 1.0)),
                                   boolAttr(ctx, "trans_a", ctx.attrInt("transA", 0)),
                                   boolAttr(ctx, "trans_b", ctx.attrInt("transB", 0))}));
  return success();
}

} // namespace

FailureOr<Window> readWindow(NodeContext &ctx, RankedTensorType input,
                             ArrayRef<int64_t> kernel) {
  int64_t spatial = input.getRank() - 2;
  Window w;
  w.kernel.assign(kernel.begin(), kernel.end());
  if ((int64_t)w.kernel.size() != spatial)
    return ctx.error("kernel_shape has " + llvm::Twine(w.kernel.size()) + " dims for " +
                     llvm::Twine(spatial) + " spatial axes");
  SmallVector<int64_t> ones(spatial, 1), zeros(2 * spatial, 0);
  w.strides = ctx.attrInts("strides", ones);
  w.dilations = ctx.attrInts("dilations", ones);
  w.pads = ctx.attrInts("pads", zeros);
  if ((int64_t)w.strides.size() != spatial || (int64_t)w.dilations.size() != spatial ||
      (int64_t)w.pads.size() != 2 * spatial)
    return ctx.error("strides, dilations or pads do not match the " + llvm::Twine(spatial) +
                     " spatial axes");
  if (llvm::any_of(w.strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(w.dilations, [](int64_t d) { return d < 1; }) ||
      llvm::any_of(w.kernel, [](int64_t k) { return k < 1; }))
    return ctx.error("kernel_shape, strides and dilations must be positive");
  if (llvm::any_of(w.pads, [](int64_t p) { return p < 0; }))
    return ctx.error("pads must be non-negative");
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET")
    return w;
  if (autoPad == "VALID") {
    w.pads = zeros;
    return w;
  }
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return ctx.error("auto_pad has unknown value '" + autoPad + "'");
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = input.getShape()[2 + i];
    if (ShapedType::isDynamic(in))
      return ctx.error("auto_pad=" + autoPad + " needs static spatial dims");
    int64_t outDim = (in + w.strides[i] - 1) / w.strides[i];
    int64_t total = std::max<int64_t>(
        0, (outDim - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 - in);
    int64_t small = total / 2, large = total - small;
    w.pads[i] = autoPad == "SAME_UPPER" ? small : large;
    w.pads[spatial + i] = autoPad == "SAME_UPPER" ? large : small;
  }
  return w;
}

namespace {

SmallVector<int64_t> weightKernel(NodeContext &ctx, RankedTensorType weight) {
  SmallVector<int64_t> fromWeight(weight.getShape().drop_front(2));
  return ctx.attrInts("kernel_shape", fromWeight);
}

LogicalResult conv(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto input = ctx.inputType(0), weight = ctx.inputType(1);
  if (input.getRank() < 3 || weight.getRank() != input.getRank())
    return ctx.error("input and weight must have the same rank >= 3");
  auto window = readWindow(ctx, input, weightKernel(ctx, weight));
  auto type = ctx.resultType(0);
  if (failed(window) || failed(type))
    return failure();
  SmallVector<Value> operands = ctx.presentInputs(3);
  out.push_back(build<nn::ConvOp>(
      ctx, *type, operands,
      {i64ArrayAttr(ctx, "strides", window->strides), i64ArrayAttr(ctx, "pads", window->pads),
       i64ArrayAttr(ctx, "dilations", window->dilations),
       i64Attr(ctx, "group", ctx.attrInt("group", 1))}));
  return success();
}

/// ConvTranspose: output_shape and auto_pad become explicit pads.
LogicalResult convTranspose(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 2)))
    return failure();
  auto input = ctx.inputType(0), weight = ctx.inputType(1);
  if (input.getRank() < 3 || weight.getRank() != input.getRank())
    return ctx.error("input and weight must have the same rank >= 3");
  int64_t spatial = input.getRank() - 2;
  SmallVector<int64_t> kernel = weightKernel(ctx, weight);
  SmallVector<int64_t> ones(spatial, 1), zeros(2 * spatial, 0);
  SmallVector<int64_t> strides = ctx.attrInts("strides", ones);
  SmallVector<int64_t> dilations = ctx.attrInts("dilations", ones);
  SmallVector<int64_t> pads = ctx.attrInts("pads", zeros);
  SmallVector<int64_t> outputPadding = ctx.attrInts("output_padding", SmallVector<int64_t>(spatial, 0));
  SmallVector<int64_t> outputShape = ctx.attrInts("output_shape");
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if ((int64_t)kernel.size() != spatial || (int64_t)strides.size() != spatial ||
      (int64_t)dilations.size() != spatial || (int64_t)pads.size() != 2 * spatial ||
      (int64_t)outputPadding.size() != spatial)
    return ctx.error("window attributes do not match the " + llvm::Twine(spatial) +
                     " spatial axes");
  if (!outputShape.empty() || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    if (!outputShape.empty() && (int64_t)outputShape.size() != spatial)
      outputShape.erase(outputShape.begin(), outputShape.begin() + 2);
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t in = input.getShape()[2 + i];
      if (ShapedType::isDynamic(in))
        return ctx.error("output_shape/auto_pad need static spatial dims");
      int64_t target = outputShape.empty() ? in * strides[i] : outputShape[i];
      int64_t total = strides[i] * (in - 1) + outputPadding[i] +
                      ((kernel[i] - 1) * dilations[i] + 1) - target;
      if (total < 0) {
        // A larger requested output than the kernel covers: the extra rows
        // are output padding (as onnxruntime does).
        outputPadding[i] -= total;
        total = 0;
      }
      int64_t half = total / 2;
      bool lower = autoPad == "SAME_LOWER";
      pads[i] = lower ? total - half : half;
      pads[spatial + i] = lower ? half : total - half;
    }
  } else if (autoPad == "VALID") {
    pads = zeros;
  } else if (autoPad != "NOTSET") {
    return ctx.error("auto_pad has unknown value '" + autoPad + "'");
  }
  auto type = ctx.resultType(0);
  if (failed(type))
    return failure();
  SmallVector<Value> operands = ctx.presentInputs(3);
  out.push_back(build<nn::ConvTransposeOp>(
      ctx, *type, operands,
      {i64ArrayAttr(ctx, "strides", strides), i64ArrayAttr(ctx, "pads", pads),
       i64ArrayAttr(ctx, "dilations", dilations),
       i64ArrayAttr(ctx, "output_padding", outputPadding),
       i64Attr(ctx, "group", ctx.attrInt("group", 1))}));
  return success();
}

/// Rewrites an Einsum equation into explicit form with ellipses expanded to
/// upper-case letters.
FailureOr<std::string> normalizeEinsum(NodeContext &ctx, std::string eq) {
  eq.erase(llvm::remove_if(eq, [](char c) { return c == ' '; }), eq.end());
  StringRef text(eq);
  auto arrow = text.find("->");
  SmallVector<StringRef> terms;
  text.substr(0, arrow).split(terms, ',');
  if (terms.size() != ctx.numInputs())
    return ctx.error("equation has " + llvm::Twine(terms.size()) + " terms for " +
                     llvm::Twine(ctx.numInputs()) + " inputs");
  int64_t ellipsisRank = 0;
  SmallVector<std::string> expanded;
  static const char *kEllipsisLetters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  for (auto [term, i] : llvm::zip(terms, llvm::seq<size_t>(0, terms.size()))) {
    int64_t rank = ctx.inputType(i).getRank();
    std::string t = term.str();
    auto pos = t.find("...");
    if (pos != std::string::npos) {
      int64_t n = rank - (int64_t)(t.size() - 3);
      if (n < 0 || n > 26)
        return ctx.error("equation term '" + t + "' does not match rank " + llvm::Twine(rank));
      ellipsisRank = std::max(ellipsisRank, n);
      // Right-aligned broadcasting: the last n of the ellipsis letters.
      t.replace(pos, 3, std::string(kEllipsisLetters + (26 - n), n));
    }
    expanded.push_back(t);
  }
  std::string lettersOfEllipsis(kEllipsisLetters + (26 - ellipsisRank), ellipsisRank);
  std::string output;
  if (arrow == StringRef::npos) {
    // Implicit output: the ellipsis, then letters used once, alphabetically.
    std::map<char, int> counts;
    for (const auto &t : expanded)
      for (char c : t)
        if (c >= 'a' && c <= 'z')
          counts[c]++;
    output = lettersOfEllipsis;
    for (auto [c, n] : counts)
      if (n == 1)
        output += c;
  } else {
    output = text.substr(arrow + 2).str();
    if (auto pos = output.find("..."); pos != std::string::npos)
      output.replace(pos, 3, lettersOfEllipsis);
  }
  std::string result;
  for (size_t i = 0; i < expanded.size(); ++i)
    result += (i ? "," : "") + expanded[i];
  return result + "->" + output;
}

LogicalResult einsum(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (ctx.numInputs() == 0 || failed(requireInputs(ctx, ctx.numInputs())))
    return ctx.error("needs inputs");
  if (!ctx.hasAttr("equation"))
    return ctx.error("attribute 'equation' is required");
  auto equation = normalizeEinsum(ctx, ctx.attrString("equation", ""));
  auto type = ctx.resultType(0);
  if (failed(equation) || failed(type))
    return failure();
  SmallVector<Value> inputs;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    inputs.push_back(ctx.input(i));
  out.push_back(build<nn::EinsumOp>(ctx, *type, inputs, {strAttr(ctx, "equation", *equation)}));
  return success();
}

} // namespace

FailureOr<SmallVector<int64_t>> poolPads(NodeContext &ctx, RankedTensorType input,
                                         ArrayRef<int64_t> kernel, SmallVector<int64_t> &strides,
                                         SmallVector<int64_t> &dilations) {
  auto window = readWindow(ctx, input, kernel);
  if (failed(window))
    return failure();
  strides = window->strides;
  dilations = window->dilations;
  return window->pads;
}

void registerContractionHandlers(HandlerRegistry &r) {
  r.add("MatMul", 9, matmul);
  r.add("Gemm", 11, gemm);
  r.add("Conv", 11, conv);
  r.add("ConvTranspose", 11, convTranspose);
  r.add("Einsum", 12, einsum);
}

} // namespace nncc::import
