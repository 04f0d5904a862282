#ifndef NNCC_LIB_IMPORT_NODECONTEXT_H
#define NNCC_LIB_IMPORT_NODECONTEXT_H

#include "onnx/onnx_pb.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace nncc::import {

class GraphImporter;

/// What a handler sees of one ONNX node: its inputs as values, its result
/// types from shape inference, typed attribute access with ONNX defaults, and
/// an error channel that names the node.
class NodeContext {
public:
  NodeContext(GraphImporter &graph, const onnx::NodeProto &node, size_t index,
              mlir::OpBuilder &builder, mlir::Location loc, int opset);

  const onnx::NodeProto &node() const { return node_; }
  int opset() const { return opset_; }
  mlir::OpBuilder &builder() { return builder_; }
  mlir::Location loc() const { return loc_; }
  mlir::MLIRContext *context() { return builder_.getContext(); }

  /// Inputs; an omitted optional input (empty name or past the end) is null.
  size_t numInputs() const { return inputs_.size(); }
  mlir::Value input(size_t i) const { return i < inputs_.size() ? inputs_[i] : mlir::Value(); }
  mlir::RankedTensorType inputType(size_t i) const;
  /// The present inputs among the first `count` (omitted optional ones left
  /// out), for ops whose trailing operands are optional.
  llvm::SmallVector<mlir::Value> presentInputs(size_t count) const;
  /// Replaces (or appends) input `i`: handlers of older opsets pass what an
  /// attribute held as the input later versions take, then run the newer
  /// handler on the same node.
  void setInput(size_t i, mlir::Value value);
  /// The values of a constant input (initializer, Constant node or folded).
  std::optional<mlir::DenseElementsAttr> constInput(size_t i) const;
  /// constInput, or the value of a small input computed from constants by ops
  /// that fold (sizes an expanded function computes from a bound input).
  std::optional<mlir::DenseElementsAttr> foldedInput(size_t i) const;
  std::optional<llvm::SmallVector<int64_t>> constInts(size_t i) const;
  std::optional<llvm::SmallVector<double>> constFloats(size_t i) const;

  size_t numOutputs() const { return node_.output_size(); }
  bool outputUsed(size_t i) const {
    return i < (size_t)node_.output_size() && !node_.output(i).empty();
  }
  /// The type shape inference gave output `i`; fails (with a message naming the
  /// output) when it gave none.
  mlir::FailureOr<mlir::RankedTensorType> resultType(size_t i);
  /// The type of output `i`, or `fallback` when shape inference gave none.
  mlir::RankedTensorType resultTypeOr(size_t i, mlir::RankedTensorType fallback);

  bool hasAttr(llvm::StringRef name) const;
  int64_t attrInt(llvm::StringRef name, int64_t dflt) const;
  double attrFloat(llvm::StringRef name, double dflt) const;
  std::string attrString(llvm::StringRef name, llvm::StringRef dflt) const;
  llvm::SmallVector<int64_t> attrInts(llvm::StringRef name,
                                      llvm::ArrayRef<int64_t> dflt = {}) const;
  llvm::SmallVector<double> attrFloats(llvm::StringRef name) const;
  const onnx::AttributeProto *attr(llvm::StringRef name) const;

  /// Imports a subgraph attribute of this node in place (GraphImporter::importSubgraph).
  mlir::LogicalResult importSubgraph(const onnx::GraphProto &graph, mlir::ValueRange inputs,
                                     llvm::SmallVectorImpl<mlir::Value> &outputs);

  /// Records "node 'N' (Op): message" and returns failure.
  mlir::LogicalResult error(const llvm::Twine &message);

  /// An nn.constant holding `values` (an i64 tensor of `shape`).
  mlir::Value constantI64(llvm::ArrayRef<int64_t> values, llvm::ArrayRef<int64_t> shape);
  /// A 0-d nn.constant of `elementType` holding `value`.
  mlir::Value scalar(mlir::Type elementType, double value);
  mlir::Value constant(mlir::DenseElementsAttr value);

  /// Converts a tensor attribute/initializer through the graph's converter.
  llvm::Expected<mlir::DenseElementsAttr> convertTensor(const onnx::TensorProto &tensor);

private:
  GraphImporter &graph_;
  const onnx::NodeProto &node_;
  size_t index_;
  mlir::OpBuilder &builder_;
  mlir::Location loc_;
  int opset_;
  llvm::SmallVector<mlir::Value> inputs_;
  llvm::StringMap<const onnx::AttributeProto *> attrs_;
};

/// Builds the nn ops of one ONNX node and returns its outputs in order (a null
/// value for an output the handler does not produce because it is unused).
using NodeHandler = mlir::LogicalResult (*)(NodeContext &ctx,
                                            llvm::SmallVectorImpl<mlir::Value> &outputs);

/// Handlers by (op type, since-version): a node of opset N gets the handler
/// with the highest since-version <= N. A null handler ends the op's range
/// (an op removed from ONNX, as Upsample at 10). Ops of other domains than
/// the default one are registered by their qualifiedOpType.
class HandlerRegistry {
public:
  void add(llvm::StringRef opType, int sinceVersion, NodeHandler handler);
  NodeHandler lookup(llvm::StringRef opType, int opset) const;
  /// Each op (sorted by name) with its since-versions in ascending order,
  /// each with whether it has a handler (false: the op's range ends there).
  std::vector<std::pair<std::string, llvm::SmallVector<std::pair<int, bool>>>> versions() const;
  /// The registry with every handler of lib/Import/handlers.
  static const HandlerRegistry &instance();

private:
  llvm::StringMap<llvm::SmallVector<std::pair<int, NodeHandler>>> handlers_;
};

/// The domain of ONNX's optimizer ops (Adagrad, Adam, Momentum).
inline constexpr llvm::StringLiteral kPreviewTrainingDomain = "ai.onnx.preview.training";

/// The registry name of `opType` of `domain`: the op type in the default
/// domain ("" or "ai.onnx"), "DOMAIN.OpType" in another.
std::string qualifiedOpType(llvm::StringRef domain, llvm::StringRef opType);
inline std::string qualifiedOpType(const onnx::NodeProto &node) {
  return qualifiedOpType(node.domain(), node.op_type());
}

/// "node 'NAME'", or for an unnamed node "node #INDEX (output 'OUT')".
std::string describeNode(const onnx::NodeProto &node, size_t index);

/// Fails listing every node of `graph` whose op has no handler at `opset`
/// (each with its name, op type and the model's opset or domain). With
/// `skipKnownToOnnx`, ops libonnx knows at `declaredOpset` are not listed
/// (the version converter may still turn them into handled ones).
llvm::Error checkOpsSupported(const onnx::GraphProto &graph, int opset, int declaredOpset,
                              llvm::StringRef displayName, bool skipKnownToOnnx);

void registerElementwiseHandlers(HandlerRegistry &registry);
void registerContractionHandlers(HandlerRegistry &registry);
void registerNormalizationHandlers(HandlerRegistry &registry);
void registerReductionHandlers(HandlerRegistry &registry);
void registerDataMovementHandlers(HandlerRegistry &registry);
void registerLossHandlers(HandlerRegistry &registry);
void registerStructuredHandlers(HandlerRegistry &registry);
void registerScatterHandlers(HandlerRegistry &registry);
void registerTrainingHandlers(HandlerRegistry &registry);
void registerSignalHandlers(HandlerRegistry &registry);
void registerRecurrentHandlers(HandlerRegistry &registry);
void registerControlFlowHandlers(HandlerRegistry &registry);
void registerQuantizationHandlers(HandlerRegistry &registry);
void registerSamplingHandlers(HandlerRegistry &registry);
/// Registers last: the old opsets' handlers delegate to (or alias) the ones
/// registered before them.
void registerOldOpsetHandlers(HandlerRegistry &registry);

} // namespace nncc::import

#endif // NNCC_LIB_IMPORT_NODECONTEXT_H
