/// Handlers of the control-flow ops If, Loop and Scan. Plans are static, so
/// control flow becomes straight-line nn ops: an If whose condition is known
/// at compile time is inlined and otherwise predicated (both branches
/// computed, nn.where picks); Loop and Scan are unrolled over their static
/// trip counts, their bodies imported once per iteration.
#include "lib/Import/handlers/HandlerUtils.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace nncc::import {
namespace {

/// Unrolling beyond this many iterations is refused rather than attempted.
constexpr int64_t kMaxUnrolledIterations = 4096;

const onnx::GraphProto *graphAttr(NodeContext &ctx, StringRef name) {
  const onnx::AttributeProto *attr = ctx.attr(name);
  if (!attr || !attr->has_g()) {
    (void)ctx.error("attribute '" + name + "' (a graph) is required");
    return nullptr;
  }
  return &attr->g();
}

/// The value of `v` when it is constant or folds from constants (an If
/// condition computed from a bound input, a Loop's trip count).
std::optional<DenseElementsAttr> foldedConstant(Value v, int depth = 0) {
  DenseElementsAttr attr;
  if (matchPattern(v, m_Constant(&attr)))
    return attr;
  Operation *op = v.getDefiningOp();
  if (!op || depth > 64 || op->getNumRegions() > 0)
    return std::nullopt;
  SmallVector<Attribute> operands;
  for (Value operand : op->getOperands()) {
    auto folded = foldedConstant(operand, depth + 1);
    if (!folded)
      return std::nullopt;
    operands.push_back(*folded);
  }
  SmallVector<OpFoldResult> results;
  if (failed(op->fold(operands, results)) || results.size() != op->getNumResults())
    return std::nullopt;
  OpFoldResult result = results[cast<OpResult>(v).getResultNumber()];
  if (auto value = dyn_cast<Value>(result))
    return foldedConstant(value, depth + 1);
  if (auto folded = dyn_cast_if_present<DenseElementsAttr>(dyn_cast<Attribute>(result)))
    return folded;
  return std::nullopt;
}

/// The truth of a one-element tensor known at compile time.
std::optional<bool> foldedBool(Value v) {
  auto attr = foldedConstant(v);
  if (!attr || attr->getNumElements() != 1)
    return std::nullopt;
  if (isa<FloatType>(attr->getElementType()))
    return !(*attr->value_begin<APFloat>()).isZero();
  return !(*attr->value_begin<APInt>()).isZero();
}

std::optional<int64_t> foldedInt(Value v) {
  auto attr = foldedConstant(v);
  if (!attr || attr->getNumElements() != 1 || !isa<IntegerType>(attr->getElementType()))
    return std::nullopt;
  return (*attr->value_begin<APInt>()).getSExtValue();
}

RankedTensorType withShape(Value v, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, cast<RankedTensorType>(v.getType()).getElementType());
}

std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// Stacks the per-iteration values of a scan output along a new `axis`
/// (every iteration must give the same static shape).
FailureOr<Value> stack(NodeContext &ctx, ArrayRef<Value> parts, int64_t axis,
                       StringRef outputName) {
  auto first = cast<RankedTensorType>(parts.front().getType());
  for (Value part : parts)
    if (part.getType() != first || !first.hasStaticShape())
      return ctx.error("scan output '" + outputName + "' has " + typeString(part.getType()) +
                       " in one iteration and " + typeString(first) +
                       " in another; stacking needs one static shape");
  SmallVector<int64_t> unit(first.getShape());
  unit.insert(unit.begin() + axis, 1);
  SmallVector<Value> units;
  for (Value part : parts)
    units.push_back(build<nn::ReshapeOp>(ctx, withShape(part, unit), part));
  if (units.size() == 1)
    return units.front();
  SmallVector<int64_t> shape(unit);
  shape[axis] = (int64_t)units.size();
  return Value(build<nn::ConcatOp>(ctx, withShape(units.front(), shape), units,
                                   {i64Attr(ctx, "axis", axis)}));
}

/// If: inlined when the condition folds, else both branches imported and
/// each output chosen by nn.where on the condition.
LogicalResult ifOp(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  if (failed(requireInputs(ctx, 1)))
    return failure();
  const onnx::GraphProto *thenBranch = graphAttr(ctx, "then_branch");
  const onnx::GraphProto *elseBranch = graphAttr(ctx, "else_branch");
  if (!thenBranch || !elseBranch)
    return failure();
  Value cond = ctx.input(0);
  auto condType = ctx.inputType(0);
  if (!condType.hasStaticShape() || condType.getNumElements() != 1)
    return ctx.error("condition must hold one element, has " + typeString(condType));
  if (auto taken = foldedBool(cond))
    return ctx.importSubgraph(*taken ? *thenBranch : *elseBranch, {}, out);
  SmallVector<Value> thenOut, elseOut;
  if (failed(ctx.importSubgraph(*thenBranch, {}, thenOut)) ||
      failed(ctx.importSubgraph(*elseBranch, {}, elseOut)))
    return failure();
  if (thenOut.size() != elseOut.size())
    return ctx.error("then_branch gives " + llvm::Twine(thenOut.size()) +
                     " outputs, else_branch " + llvm::Twine(elseOut.size()));
  if (!condType.getElementType().isInteger(1))
    return ctx.error("condition must be bool, is " + typeString(condType));
  Value pick = build<nn::ReshapeOp>(ctx, withShape(cond, {}), cond);
  for (auto [i, pair] : llvm::enumerate(llvm::zip(thenOut, elseOut))) {
    auto [a, b] = pair;
    auto type = cast<RankedTensorType>(a.getType());
    if (a.getType() != b.getType() || !type.hasStaticShape())
      return ctx.error("the condition is only known at run time, so both branches run and "
                       "output " + llvm::Twine(i) + " is chosen elementwise; that needs one "
                       "static type, but then_branch gives " + typeString(a.getType()) +
                       " and else_branch " + typeString(b.getType()));
    out.push_back(build<nn::WhereOp>(ctx, type, {pick, a, b}));
  }
  return success();
}

/// Loop (opset 11+ semantics): unrolled while the trip count and the
/// condition, each known at compile time, allow; the loop-carried values of
/// one iteration feed the next and the scan outputs are stacked.
LogicalResult loop(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  const onnx::GraphProto *body = graphAttr(ctx, "body");
  if (!body)
    return failure();
  int64_t numCarried = std::max<int64_t>(0, (int64_t)ctx.numInputs() - 2);
  int64_t numScans = body->output_size() - 1 - numCarried;
  if (body->input_size() != 2 + numCarried || numScans < 0)
    return ctx.error("body takes " + llvm::Twine(body->input_size()) + " inputs and gives " +
                     llvm::Twine(body->output_size()) + " outputs for " +
                     llvm::Twine(numCarried) + " loop-carried values");
  std::optional<int64_t> tripCount;
  if (Value m = ctx.input(0)) {
    tripCount = foldedInt(m);
    if (!tripCount)
      return ctx.error("the trip count M is only known at run time (a data-dependent trip "
                       "count); nncc unrolls loops and needs it constant (--bind-input the "
                       "inputs it is computed from)");
  }
  bool cond = true;
  if (Value c = ctx.input(1)) {
    auto folded = foldedBool(c);
    if (!folded)
      return ctx.error("the loop condition is only known at run time (a data-dependent trip "
                       "count); nncc unrolls loops and needs it constant");
    cond = *folded;
  }
  SmallVector<Value> carried;
  for (int64_t i = 0; i < numCarried; ++i) {
    if (!ctx.input(2 + i))
      return ctx.error("loop-carried input " + llvm::Twine(2 + i) + " is required");
    carried.push_back(ctx.input(2 + i));
  }
  auto boolType = RankedTensorType::get({}, ctx.builder().getI1Type());
  SmallVector<SmallVector<Value>> scans(numScans);
  for (int64_t i = 0; cond && (!tripCount || i < *tripCount); ++i) {
    if (i == kMaxUnrolledIterations)
      return ctx.error("runs more than " + llvm::Twine(kMaxUnrolledIterations) +
                       " iterations; nncc unrolls loops");
    SmallVector<Value> inputs = {ctx.constantI64({i}, {}),
                                 ctx.constant(DenseElementsAttr::get(boolType, cond))};
    inputs.append(carried);
    SmallVector<Value> outputs;
    if (failed(ctx.importSubgraph(*body, inputs, outputs)))
      return failure();
    auto next = foldedBool(outputs[0]);
    if (!next)
      return ctx.error("the condition the body computes in iteration " + llvm::Twine(i) +
                       " is only known at run time (a data-dependent trip count); nncc "
                       "unrolls loops and needs it constant");
    cond = *next;
    for (int64_t k = 0; k < numCarried; ++k)
      carried[k] = outputs[1 + k];
    for (int64_t k = 0; k < numScans; ++k)
      scans[k].push_back(outputs[1 + numCarried + k]);
  }
  out.append(carried);
  for (int64_t k = 0; k < numScans; ++k) {
    std::string name = body->output(1 + numCarried + k).name();
    if (scans[k].empty())
      return ctx.error("runs no iteration, so its scan output '" + name + "' would be empty");
    auto stacked = stack(ctx, scans[k], 0, name);
    if (failed(stacked))
      return failure();
    out.push_back(*stacked);
  }
  return success();
}

/// Scan (opset 9+): unrolled over the scan axis, each scan input sliced per
/// iteration in its direction, the scan outputs stacked along their axes.
LogicalResult scan(NodeContext &ctx, SmallVectorImpl<Value> &out) {
  const onnx::GraphProto *body = graphAttr(ctx, "body");
  if (!body)
    return failure();
  int64_t numScanInputs = ctx.attrInt("num_scan_inputs", 0);
  int64_t numStates = (int64_t)ctx.numInputs() - numScanInputs;
  int64_t numScanOutputs = body->output_size() - numStates;
  if (numScanInputs < 1 || numStates < 0 || numScanOutputs < 0 ||
      body->input_size() != ctx.numInputs())
    return ctx.error("num_scan_inputs, the inputs and the body's inputs and outputs disagree");
  if (failed(requireInputs(ctx, ctx.numInputs())))
    return failure();
  SmallVector<int64_t> inAxes = ctx.attrInts("scan_input_axes",
                                             SmallVector<int64_t>(numScanInputs, 0));
  SmallVector<int64_t> inDirs = ctx.attrInts("scan_input_directions",
                                             SmallVector<int64_t>(numScanInputs, 0));
  SmallVector<int64_t> outAxes = ctx.attrInts("scan_output_axes",
                                              SmallVector<int64_t>(numScanOutputs, 0));
  SmallVector<int64_t> outDirs = ctx.attrInts("scan_output_directions",
                                              SmallVector<int64_t>(numScanOutputs, 0));
  if ((int64_t)inAxes.size() != numScanInputs || (int64_t)inDirs.size() != numScanInputs ||
      (int64_t)outAxes.size() != numScanOutputs || (int64_t)outDirs.size() != numScanOutputs)
    return ctx.error("scan_input_*/scan_output_* attributes do not match the scan inputs and "
                     "outputs");
  int64_t seqLen = -1;
  for (int64_t j = 0; j < numScanInputs; ++j) {
    auto type = ctx.inputType(numStates + j);
    auto axis = nn::normalizeAxis(inAxes[j], type.getRank());
    if (!axis || !type.hasStaticShape())
      return ctx.error("scan input " + llvm::Twine(j) + " needs a static shape and an axis "
                       "in range");
    inAxes[j] = *axis;
    int64_t len = type.getShape()[*axis];
    if (seqLen >= 0 && len != seqLen)
      return ctx.error("scan inputs have different lengths along their scan axes");
    seqLen = len;
  }
  if (seqLen > kMaxUnrolledIterations)
    return ctx.error("runs " + llvm::Twine(seqLen) + " iterations, more than the " +
                     llvm::Twine(kMaxUnrolledIterations) + " nncc unrolls");
  SmallVector<Value> states;
  for (int64_t i = 0; i < numStates; ++i)
    states.push_back(ctx.input(i));
  SmallVector<SmallVector<Value>> scans(numScanOutputs);
  auto &b = ctx.builder();
  for (int64_t t = 0; t < seqLen; ++t) {
    SmallVector<Value> inputs(states);
    for (int64_t j = 0; j < numScanInputs; ++j) {
      Value x = ctx.input(numStates + j);
      auto type = cast<RankedTensorType>(x.getType());
      int64_t index = inDirs[j] ? seqLen - 1 - t : t;
      SmallVector<int64_t> starts(type.getRank(), 0), ends(type.getShape()),
          steps(type.getRank(), 1), sliceShape(type.getShape());
      starts[inAxes[j]] = index;
      ends[inAxes[j]] = index + 1;
      sliceShape[inAxes[j]] = 1;
      Value slice = nn::SliceOp::create(
          b, ctx.loc(), withShape(x, sliceShape), x, Value(), Value(), Value(), Value(),
          b.getDenseI64ArrayAttr(starts), b.getDenseI64ArrayAttr(ends),
          b.getDenseI64ArrayAttr(steps));
      sliceShape.erase(sliceShape.begin() + inAxes[j]);
      inputs.push_back(build<nn::ReshapeOp>(ctx, withShape(x, sliceShape), slice));
    }
    SmallVector<Value> outputs;
    if (failed(ctx.importSubgraph(*body, inputs, outputs)))
      return failure();
    for (int64_t i = 0; i < numStates; ++i)
      states[i] = outputs[i];
    for (int64_t k = 0; k < numScanOutputs; ++k)
      scans[k].push_back(outputs[numStates + k]);
  }
  out.append(states);
  for (int64_t k = 0; k < numScanOutputs; ++k) {
    std::string name = body->output(numStates + k).name();
    if (scans[k].empty())
      return ctx.error("scans a sequence of length 0, so its scan output '" + name +
                       "' would be empty");
    if (outDirs[k])
      std::reverse(scans[k].begin(), scans[k].end());
    int64_t rank = cast<RankedTensorType>(scans[k].front().getType()).getRank();
    auto axis = nn::normalizeAxis(outAxes[k], rank + 1);
    if (!axis)
      return ctx.error("scan_output_axes entry " + llvm::Twine(outAxes[k]) + " is out of range");
    auto stacked = stack(ctx, scans[k], *axis, name);
    if (failed(stacked))
      return failure();
    out.push_back(*stacked);
  }
  return success();
}

} // namespace

void registerControlFlowHandlers(HandlerRegistry &r) {
  r.add("If", 1, ifOp);
  r.add("Loop", 1, loop);
  r.add("Scan", 9, scan);
}

} // namespace nncc::import
