#include "lib/Import/NodeContext.h"
#include "lib/Support/Error.h"

#include "lib/Import/GraphImporter.h"
#include "lib/Import/TensorConversion.h"

#include "dialects/NN/NNOps.h"

#include "mlir/IR/Matchers.h"

#include "onnx/defs/schema.h"

using namespace mlir;

namespace nncc::import {

NodeContext::NodeContext(GraphImporter &graph, const onnx::NodeProto &node, size_t index,
                         OpBuilder &builder, Location loc, int opset)
    : graph_(graph), node_(node), index_(index), builder_(builder), loc_(loc), opset_(opset) {
  for (const auto &name : node.input())
    inputs_.push_back(name.empty() ? Value() : graph.lookup(name));
  for (const auto &attr : node.attribute())
    attrs_[attr.name()] = &attr;
}

RankedTensorType NodeContext::inputType(size_t i) const {
  Value v = input(i);
  return v ? cast<RankedTensorType>(v.getType()) : RankedTensorType();
}

SmallVector<Value> NodeContext::presentInputs(size_t count) const {
  SmallVector<Value> present;
  for (size_t i = 0; i < count; ++i)
    if (Value v = input(i))
      present.push_back(v);
  return present;
}

void NodeContext::setInput(size_t i, Value value) {
  if (i >= inputs_.size())
    inputs_.resize(i + 1);
  inputs_[i] = value;
}

/// Sizes and scalars, not data: folding stays cheap when repeated.
constexpr int64_t kMaxFoldedElements = 64;

/// The value of `v` when it is a constant or a small result of an op of
/// constant operands (`depth` deep) that folds: expanded ONNX functions
/// compute sizes from a bound input with Cast, Sub, Mul...
static DenseElementsAttr foldedConstant(Value v, int depth) {
  DenseElementsAttr attr;
  if (matchPattern(v, m_Constant(&attr)))
    return attr;
  Operation *op = v.getDefiningOp();
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!op || depth == 0 || op->getNumResults() != 1 || op->getNumRegions() != 0 || !type ||
      !type.hasStaticShape() || type.getNumElements() > kMaxFoldedElements)
    return {};
  SmallVector<Attribute> operands;
  for (Value operand : op->getOperands()) {
    DenseElementsAttr value = foldedConstant(operand, depth - 1);
    if (!value)
      return {};
    operands.push_back(value);
  }
  SmallVector<OpFoldResult> results;
  if (failed(op->fold(operands, results)) || results.size() != 1)
    return {};
  return dyn_cast_if_present<DenseElementsAttr>(dyn_cast_if_present<Attribute>(results[0]));
}

std::optional<DenseElementsAttr> NodeContext::constInput(size_t i) const {
  DenseElementsAttr attr;
  if (Value v = input(i); v && matchPattern(v, m_Constant(&attr)))
    return attr;
  return std::nullopt;
}

std::optional<DenseElementsAttr> NodeContext::foldedInput(size_t i) const {
  Value v = input(i);
  if (!v)
    return std::nullopt;
  if (DenseElementsAttr attr = foldedConstant(v, /*depth=*/8))
    return attr;
  return std::nullopt;
}

std::optional<SmallVector<int64_t>> NodeContext::constInts(size_t i) const {
  auto attr = constInput(i);
  if (!attr || !isa<IntegerType>(attr->getElementType()))
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &v : attr->getValues<APInt>())
    values.push_back(v.getSExtValue());
  return values;
}

std::optional<SmallVector<double>> NodeContext::constFloats(size_t i) const {
  auto attr = constInput(i);
  if (!attr || !isa<FloatType>(attr->getElementType()))
    return std::nullopt;
  SmallVector<double> values;
  for (const APFloat &v : attr->getValues<APFloat>())
    values.push_back(v.convertToDouble());
  return values;
}

FailureOr<RankedTensorType> NodeContext::resultType(size_t i) {
  if (i >= (size_t)node_.output_size() || node_.output(i).empty()) {
    (void)error("output " + llvm::Twine(i) + " is required");
    return failure();
  }
  const onnx::TypeProto *type = graph_.typeOf(node_.output(i));
  if (!type) {
    (void)error("shape inference gave no type for output '" + node_.output(i) + "'");
    return failure();
  }
  auto converted = convertTensorType(*type, context());
  if (!converted) {
    (void)error("output '" + node_.output(i) + "' " + llvm::toString(converted.takeError()));
    return failure();
  }
  return *converted;
}

RankedTensorType NodeContext::resultTypeOr(size_t i, RankedTensorType fallback) {
  if (i < (size_t)node_.output_size())
    if (const onnx::TypeProto *type = graph_.typeOf(node_.output(i))) {
      auto converted = convertTensorType(*type, context());
      if (!converted) {
        llvm::consumeError(converted.takeError());
        return fallback;
      }
      // Dims shape inference left dynamic take the handler's static ones
      // (a Range whose bounds only the importer folds).
      if (fallback && converted->getRank() == fallback.getRank() &&
          converted->getElementType() == fallback.getElementType()) {
        SmallVector<int64_t> dims(converted->getShape());
        for (auto [dim, known] : llvm::zip(dims, fallback.getShape()))
          if (ShapedType::isDynamic(dim))
            dim = known;
        return converted->clone(dims);
      }
      return *converted;
    }
  return fallback;
}

const onnx::AttributeProto *NodeContext::attr(llvm::StringRef name) const {
  return attrs_.lookup(name);
}

bool NodeContext::hasAttr(llvm::StringRef name) const { return attrs_.count(name); }

int64_t NodeContext::attrInt(llvm::StringRef name, int64_t dflt) const {
  const auto *a = attr(name);
  return a ? a->i() : dflt;
}

double NodeContext::attrFloat(llvm::StringRef name, double dflt) const {
  const auto *a = attr(name);
  return a ? a->f() : dflt;
}

std::string NodeContext::attrString(llvm::StringRef name, llvm::StringRef dflt) const {
  const auto *a = attr(name);
  return a ? a->s() : dflt.str();
}

SmallVector<int64_t> NodeContext::attrInts(llvm::StringRef name, ArrayRef<int64_t> dflt) const {
  const auto *a = attr(name);
  if (!a)
    return SmallVector<int64_t>(dflt);
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

SmallVector<double> NodeContext::attrFloats(llvm::StringRef name) const {
  const auto *a = attr(name);
  if (!a)
    return {};
  return SmallVector<double>(a->floats().begin(), a->floats().end());
}

LogicalResult NodeContext::importSubgraph(const onnx::GraphProto &graph, ValueRange inputs,
                                          SmallVectorImpl<Value> &outputs) {
  return graph_.importSubgraph(graph, inputs, builder_,
                               describeNode(node_, index_) + " (" + node_.op_type() + ")",
                               outputs);
}

LogicalResult NodeContext::error(const llvm::Twine &message) {
  graph_.addError(describeNode(node_, index_) + " (" + node_.op_type() + "): " + message.str());
  return failure();
}

Value NodeContext::constantI64(ArrayRef<int64_t> values, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, builder_.getI64Type());
  return constant(DenseElementsAttr::get(type, values));
}

Value NodeContext::scalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    APFloat f(value);
    bool lost;
    f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return constant(DenseElementsAttr::get(type, f));
  }
  unsigned width = elementType.getIntOrFloatBitWidth();
  return constant(DenseElementsAttr::get(type, APInt(width, (int64_t)value, /*isSigned=*/true,
                                                     /*implicitTrunc=*/true)));
}

Value NodeContext::constant(DenseElementsAttr value) {
  return nn::ConstantOp::create(builder_, loc_, value);
}

llvm::Expected<DenseElementsAttr> NodeContext::convertTensor(const onnx::TensorProto &tensor) {
  return import::convertTensor(tensor, graph_.baseDir(), context());
}

std::string qualifiedOpType(llvm::StringRef domain, llvm::StringRef opType) {
  if (domain.empty() || domain == "ai.onnx")
    return opType.str();
  return (domain + "." + opType).str();
}

std::string describeNode(const onnx::NodeProto &node, size_t index) {
  if (!node.name().empty())
    return "node '" + node.name() + "'";
  std::string text = "node #" + std::to_string(index);
  if (node.output_size() > 0)
    text += " (output '" + node.output(0) + "')";
  return text;
}

llvm::Error checkOpsSupported(const onnx::GraphProto &graph, int opset, int declaredOpset,
                              llvm::StringRef displayName, bool skipKnownToOnnx) {
  const auto &registry = HandlerRegistry::instance();
  std::vector<std::string> unsupported;
  for (const auto &[index, node] : llvm::enumerate(graph.node())) {
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    if (registry.lookup(qualifiedOpType(node), opset))
      continue;
    if (defaultDomain && skipKnownToOnnx &&
        onnx::OpSchemaRegistry::Schema(node.op_type(), declaredOpset, ""))
      continue;
    std::string where = defaultDomain ? "opset " + std::to_string(declaredOpset)
                                      : "domain '" + node.domain() + "'";
    unsupported.push_back("  " + describeNode(node, index) + ": " + node.op_type() + " (" +
                          where + ")");
  }
  if (unsupported.empty())
    return llvm::Error::success();
  std::string message = displayName.str() + ": " + std::to_string(unsupported.size()) +
                        " node(s) use ops nncc does not support:";
  for (const auto &line : unsupported)
    message += "\n" + line;
  return fail(message);
}

void HandlerRegistry::add(llvm::StringRef opType, int sinceVersion, NodeHandler handler) {
  auto &list = handlers_[opType];
  list.emplace_back(sinceVersion, handler);
  llvm::sort(list, [](const auto &a, const auto &b) { return a.first < b.first; });
}

NodeHandler HandlerRegistry::lookup(llvm::StringRef opType, int opset) const {
  auto it = handlers_.find(opType);
  if (it == handlers_.end())
    return nullptr;
  NodeHandler best = nullptr;
  for (const auto &[since, handler] : it->second)
    if (since <= opset)
      best = handler;
  return best;
}

std::vector<std::pair<std::string, SmallVector<std::pair<int, bool>>>>
HandlerRegistry::versions() const {
  std::vector<std::pair<std::string, SmallVector<std::pair<int, bool>>>> result;
  for (const auto &entry : handlers_) {
    SmallVector<std::pair<int, bool>> since;
    // A version aliasing the handler before it (same semantics) is no new entry.
    NodeHandler previous = nullptr;
    for (const auto &[version, handler] : entry.getValue()) {
      if (handler && handler == previous)
        continue;
      since.emplace_back(version, handler != nullptr);
      previous = handler;
    }
    result.emplace_back(entry.getKey().str(), since);
  }
  llvm::sort(result, [](const auto &a, const auto &b) { return a.first < b.first; });
  return result;
}

const HandlerRegistry &HandlerRegistry::instance() {
  static const HandlerRegistry registry = [] {
    HandlerRegistry r;
    registerElementwiseHandlers(r);
    registerContractionHandlers(r);
    registerNormalizationHandlers(r);
    registerReductionHandlers(r);
    registerDataMovementHandlers(r);
    registerLossHandlers(r);
    registerStructuredHandlers(r);
    registerScatterHandlers(r);
    registerTrainingHandlers(r);
    registerSignalHandlers(r);
    registerRecurrentHandlers(r);
    registerControlFlowHandlers(r);
    registerQuantizationHandlers(r);
    registerSamplingHandlers(r);
    registerOldOpsetHandlers(r);
    return r;
  }();
  return registry;
}

} // namespace nncc::import
