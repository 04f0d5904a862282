#include "lib/Import/ModelValidation.h"
#include "lib/Support/Error.h"

#include "lib/Import/NodeContext.h"
#include "lib/Import/SizeLimits.h"

#include "onnx/defs/shape_inference.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

namespace nncc::import {
namespace {

using GraphCheck = llvm::function_ref<llvm::Error(const onnx::GraphProto &)>;

/// Runs `check` on `graph` and on every graph nested in its nodes' attributes.
llvm::Error forEachGraph(const onnx::GraphProto &graph, GraphCheck check) {
  if (auto err = check(graph))
    return err;
  for (const auto &node : graph.node())
    for (const auto &attr : node.attribute()) {
      if (attr.has_g())
        if (auto err = forEachGraph(attr.g(), check))
          return err;
      for (const auto &sub : attr.graphs())
        if (auto err = forEachGraph(sub, check))
          return err;
    }
  return llvm::Error::success();
}

/// What is wrong with a tensor's raw data, if anything. libonnx 1.12's
/// ParseData (shape inference of Reshape, Slice, ... with constant inputs)
/// reads past the buffer when raw_data is not exactly dims x element size.
/// (It refuses raw data of other types itself.)
/// A tensor without raw data must hold its values in the typed field of its
/// data type, one per element (two for complex): libonnx 1.12's data
/// propagation (Range, shape computations) reads that field and dereferences
/// element 0 of an empty one (found by the import fuzzer: an INT64 tensor
/// whose values sat in int32_data).
std::optional<std::string> typedDataProblem(const onnx::TensorProto &tensor) {
  using T = onnx::TensorProto;
  if (tensor.has_raw_data() || tensor.data_location() == T::EXTERNAL)
    return std::nullopt;
  int64_t held = -1, perElement = 1;
  switch (tensor.data_type()) {
  case T::COMPLEX64: perElement = 2; [[fallthrough]];
  case T::FLOAT: held = tensor.float_data_size(); break;
  case T::INT32: case T::INT16: case T::INT8: case T::UINT16: case T::UINT8: case T::BOOL:
  case T::FLOAT16: case T::BFLOAT16: held = tensor.int32_data_size(); break;
  case T::STRING: held = tensor.string_data_size(); break;
  case T::INT64: held = tensor.int64_data_size(); break;
  case T::COMPLEX128: perElement = 2; [[fallthrough]];
  case T::DOUBLE: held = tensor.double_data_size(); break;
  case T::UINT32: case T::UINT64: held = tensor.uint64_data_size(); break;
  default: return std::nullopt;
  }
  uint64_t elements = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0)
      return std::string("has a negative dimension");
    if (dim && elements > UINT64_MAX / (uint64_t)dim)
      return std::string("has too many elements");
    elements *= (uint64_t)dim;
  }
  if ((uint64_t)held != elements * perElement)
    return std::string(llvm::formatv("holds {0} values in the field of its data type; its dims need {1}", held,
                                     elements * perElement));
  return std::nullopt;
}

std::optional<std::string> rawDataProblem(const onnx::TensorProto &tensor) {
  if (auto typed = typedDataProblem(tensor))
    return typed;
  size_t elemBytes = onnxElementBytes(tensor.data_type());
  if (!tensor.has_raw_data() || tensor.data_location() == onnx::TensorProto::EXTERNAL ||
      !elemBytes)
    return std::nullopt;
  uint64_t bytes = elemBytes;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0)
      return std::string("has a negative dimension");
    if (dim && bytes > UINT64_MAX / (uint64_t)dim)
      return std::string("has too many elements");
    bytes *= (uint64_t)dim;
  }
  if (tensor.raw_data().size() != bytes)
    return std::string(llvm::formatv("holds {0} bytes of raw data; its dims and data type need {1}",
                                     tensor.raw_data().size(), bytes));
  return std::nullopt;
}

llvm::Error checkTensors(const onnx::GraphProto &graph, llvm::StringRef file) {
  for (const auto &tensor : graph.initializer())
    if (auto problem = rawDataProblem(tensor))
      return fail(file, "initializer '" + tensor.name() + "' " + *problem);
  for (const auto &sparse : graph.sparse_initializer())
    for (const auto *tensor : {&sparse.values(), &sparse.indices()})
      if (auto problem = rawDataProblem(*tensor))
        return fail(file, "sparse initializer '" + sparse.values().name() + "' " + *problem);
  for (const auto &[index, node] : llvm::enumerate(graph.node()))
    for (const auto &attr : node.attribute()) {
      std::vector<const onnx::TensorProto *> tensors;
      if (attr.has_t())
        tensors.push_back(&attr.t());
      for (const auto &tensor : attr.tensors())
        tensors.push_back(&tensor);
      if (attr.has_sparse_tensor())
        tensors.insert(tensors.end(), {&attr.sparse_tensor().values(),
                                       &attr.sparse_tensor().indices()});
      for (const auto &sparse : attr.sparse_tensors())
        tensors.insert(tensors.end(), {&sparse.values(), &sparse.indices()});
      for (const auto *tensor : tensors)
        if (auto problem = rawDataProblem(*tensor))
          return fail(file, describeNode(node, index) + " (" + node.op_type() + "): attribute '" +
                                attr.name() + "' " + *problem);
    }
  return llvm::Error::success();
}

/// ONNX graphs are in single static assignment form: every name is defined
/// once, by a graph input, an initializer (which IR 3 also lists as a graph
/// input) or one node output, and graph outputs are distinct. ONNX's checker
/// enforces it only for the opsets libonnx knows, and the importer's value
/// table would silently let the last definition win.
llvm::Error checkSingleAssignment(const onnx::GraphProto &graph, llvm::StringRef file) {
  std::set<std::string> inputs, initializers, outputs;
  for (const auto &input : graph.input())
    if (!inputs.insert(input.name()).second)
      return fail(file, "graph input '" + input.name() + "' is listed twice");
  for (const auto &tensor : graph.initializer())
    if (!initializers.insert(tensor.name()).second)
      return fail(file, "initializer '" + tensor.name() + "' is defined twice");
  for (const auto &sparse : graph.sparse_initializer())
    if (!initializers.insert(sparse.values().name()).second)
      return fail(file, "initializer '" + sparse.values().name() + "' is defined twice");
  std::map<std::string, size_t> writers;
  for (const auto &[index, node] : llvm::enumerate(graph.node()))
    for (const auto &output : node.output()) {
      if (output.empty())
        continue;
      auto culprit = [&] {
        return describeNode(node, index) + " (" + node.op_type() + "): output '" + output + "' ";
      };
      if (inputs.count(output))
        return fail(file, culprit() + "has the name of a graph input");
      if (initializers.count(output))
        return fail(file, culprit() + "has the name of an initializer");
      auto [writer, inserted] = writers.emplace(output, index);
      if (!inserted)
        return fail(file, culprit() + "is also written by " +
                              describeNode(graph.node(writer->second), writer->second));
    }
  for (const auto &output : graph.output())
    if (!outputs.insert(output.name()).second)
      return fail(file, "graph output '" + output.name() + "' is listed twice");
  return llvm::Error::success();
}

/// libonnx 1.12's IR importer (under the version converter) follows a null
/// pointer for a main-graph output that nothing defines.
llvm::Error checkOutputsDefined(const onnx::GraphProto &graph, llvm::StringRef file) {
  std::set<std::string> defined;
  for (const auto &input : graph.input())
    defined.insert(input.name());
  for (const auto &tensor : graph.initializer())
    defined.insert(tensor.name());
  for (const auto &sparse : graph.sparse_initializer())
    defined.insert(sparse.values().name());
  for (const auto &node : graph.node())
    defined.insert(node.output().begin(), node.output().end());
  for (const auto &output : graph.output())
    if (!defined.count(output.name()))
      return fail(file, "graph output '" + output.name() +
                            "' is not produced by any node, input or initializer");
  return llvm::Error::success();
}

/// Every node input names a graph input, an initializer, an earlier node's
/// output or (in a subgraph) a value of a graph around it. The checker says so
/// only for the opsets libonnx knows; for newer ones shape inference reads the
/// type of an undefined input through a null pointer (Shape at opset 20).
llvm::Error checkInputsDefined(const onnx::GraphProto &graph, std::set<std::string> visible,
                               llvm::StringRef file) {
  for (const auto &input : graph.input())
    visible.insert(input.name());
  for (const auto &tensor : graph.initializer())
    visible.insert(tensor.name());
  for (const auto &sparse : graph.sparse_initializer())
    visible.insert(sparse.values().name());
  for (const auto &[index, node] : llvm::enumerate(graph.node())) {
    for (const auto &input : node.input())
      if (!input.empty() && !visible.count(input))
        return fail(file, describeNode(node, index) + " (" + node.op_type() + "): input '" + input +
                              "' is not produced by any earlier node, input or initializer");
    for (const auto &attr : node.attribute()) {
      if (attr.has_g())
        if (auto err = checkInputsDefined(attr.g(), visible, file))
          return err;
      for (const auto &sub : attr.graphs())
        if (auto err = checkInputsDefined(sub, visible, file))
          return err;
    }
    visible.insert(node.output().begin(), node.output().end());
  }
  return llvm::Error::success();
}

/// For the ops whose shape inference is libonnx's convPoolShapeInference or
/// convTransposeShapeInference: the index of the weight input, -1 for pools.
std::optional<int> convPoolWeightIndex(llvm::StringRef opType, llvm::StringRef domain) {
  if (!domain.empty() && domain != "ai.onnx")
    return std::nullopt;
  if (opType == "Conv" || opType == "ConvInteger" || opType == "ConvTranspose")
    return 1;
  if (opType == "QLinearConv")
    return 3;
  if (opType == "MaxPool" || opType == "AveragePool" || opType == "LpPool")
    return -1;
  return std::nullopt;
}

/// For the ops whose shape inference is libonnx's getShapeInput: the index of
/// the input that holds the result's shape.
std::optional<int> shapeInputIndex(llvm::StringRef opType, llvm::StringRef domain) {
  if (!domain.empty() && domain != "ai.onnx")
    return std::nullopt;
  if (opType == "ConstantOfShape")
    return 0;
  if (opType == "Expand" || opType == "Reshape")
    return 1;
  if (opType == "Resize")
    return 3;
  return std::nullopt;
}

using AttrLookup = llvm::function_ref<const onnx::AttributeProto *(const std::string &)>;

/// The first of strides, dilations and kernel_shape holding a value below 1,
/// with that value. convPoolShapeInference divides by strides unchecked.
std::optional<std::pair<const char *, int64_t>> nonPositiveWindowAttr(AttrLookup attr) {
  for (const char *name : {"strides", "dilations", "kernel_shape"})
    if (const auto *found = attr(name))
      for (int64_t value : found->ints())
        if (value < 1)
          return std::make_pair(name, value);
  return std::nullopt;
}

llvm::Error checkConvPoolAttrs(const onnx::GraphProto &graph, llvm::StringRef file) {
  for (const auto &[index, node] : llvm::enumerate(graph.node())) {
    if (!convPoolWeightIndex(node.op_type(), node.domain()))
      continue;
    auto bad = nonPositiveWindowAttr([&](const std::string &name) -> const onnx::AttributeProto * {
      for (const auto &attr : node.attribute())
        if (attr.name() == name)
          return &attr;
      return nullptr;
    });
    if (bad)
      return fail(file, describeNode(node, index) + " (" + node.op_type() + "): " + bad->first +
                            " must be positive, got " + llvm::Twine(bad->second));
  }
  return llvm::Error::success();
}

/// Whether the input has a known shape of a rank other than `rank`.
bool knownRankIsNot(onnx::InferenceContext &ctx, size_t input, int rank) {
  return onnx::hasInputShape(ctx, input) && onnx::getInputShape(ctx, input).dim_size() != rank;
}

/// For the ops whose libonnx 1.12 inference function crashes on some inputs
/// instead of reporting them (or infers wrong shapes), a test for those
/// inputs; null for other ops.
std::function<bool(onnx::InferenceContext &)> inferenceCrashTest(const onnx::OpSchema &schema) {
  // Non-positive window attributes: checkConvPoolAttrs reports those in the
  // graph, but function bodies are inferred too. A weight of another rank than
  // the input: without kernel_shape, the kernel rank is taken from the weight
  // and indexes vectors sized by the input's rank past their end.
  if (std::optional<int> weight = convPoolWeightIndex(schema.Name(), schema.domain()))
    return [weight = *weight](onnx::InferenceContext &ctx) {
      return nonPositiveWindowAttr([&](const std::string &n) { return ctx.getAttribute(n); }) ||
             (weight >= 0 && onnx::hasInputShape(ctx, 0) &&
              knownRankIsNot(ctx, weight, onnx::getInputShape(ctx, 0).dim_size()));
    };
  // A shape input of known length but unknown values: libonnx makes a shape
  // of that many unknown dims, and runs out of memory for a length of 1e9.
  if (std::optional<int> shape = shapeInputIndex(schema.Name(), schema.domain()))
    return [shape = *shape](onnx::InferenceContext &ctx) {
      if (!onnx::hasInputShape(ctx, shape))
        return false;
      const auto &dims = onnx::getInputShape(ctx, shape);
      return dims.dim_size() == 1 && dims.dim(0).has_dim_value() &&
             dims.dim(0).dim_value() > kMaxRank;
    };
  // STFT-17's inference takes onesided as 0 when absent (its default is 1)
  // and counts frames with the bin count instead of the frame length: its
  // shapes contradict the ones exporters declare. The STFT handler computes
  // them.
  if (schema.Name() == "STFT" && schema.domain().empty() && schema.SinceVersion() == 17)
    return [](onnx::InferenceContext &) { return true; };
  // Gemm before opset 7 reads dims 0 and 1 of A and B unchecked.
  if (schema.Name() == "Gemm" && schema.domain().empty() && schema.SinceVersion() < 7)
    return [](onnx::InferenceContext &ctx) {
      return knownRankIsNot(ctx, 0, 2) || knownRankIsNot(ctx, 1, 2);
    };
  return nullptr;
}

/// ONNX's schema registry, except that for the nodes inferenceCrashTest picks
/// out, only element types are inferred (from the type constraints, so later
/// nodes are still typed). The op handlers or validateForUpgrade then report
/// the node by name, which an inference function cannot.
class GuardedSchemaRegistry final : public onnx::ISchemaRegistry {
public:
  const onnx::OpSchema *GetSchema(const std::string &key, const int maxInclusiveVersion,
                                  const std::string &domain) const override {
    const onnx::OpSchema *schema =
        onnx::OpSchemaRegistry::Schema(key, maxInclusiveVersion, domain);
    if (!schema || !schema->has_type_and_shape_inference_function())
      return schema;
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, inserted] = guarded_.try_emplace(schema);
    if (inserted)
      if (auto crashes = inferenceCrashTest(*schema)) {
        it->second = std::make_unique<onnx::OpSchema>(*schema);
        it->second->TypeAndShapeInferenceFunction(
            [schema, crashes](onnx::InferenceContext &ctx) {
              if (crashes(ctx))
                schema->CheckInputOutputType(ctx);
              else
                schema->GetTypeAndShapeInferenceFunction()(ctx);
            });
      }
    return it->second ? it->second.get() : schema;
  }

private:
  mutable std::mutex mutex_;
  /// Null for schemas that need no guard.
  mutable std::map<const onnx::OpSchema *, std::unique_ptr<onnx::OpSchema>> guarded_;
};

} // namespace

llvm::Error validateModel(const onnx::ModelProto &model, llvm::StringRef file) {
  if (auto err = checkSingleAssignment(model.graph(), file))
    return err;
  if (auto err = checkOutputsDefined(model.graph(), file))
    return err;
  if (auto err = checkInputsDefined(model.graph(), {}, file))
    return err;
  return forEachGraph(model.graph(), [&](const onnx::GraphProto &graph) -> llvm::Error {
    if (auto err = checkTensors(graph, file))
      return err;
    return checkConvPoolAttrs(graph, file);
  });
}

llvm::Error validateForUpgrade(const onnx::ModelProto &model, int opset, llvm::StringRef file) {
  if (opset >= 7)
    return llvm::Error::success();
  // Ranks as the converter sees them, from every graph (subgraphs read values
  // of the graphs around them).
  std::map<std::string, int> ranks;
  llvm::cantFail(forEachGraph(model.graph(), [&](const onnx::GraphProto &graph) {
    for (const auto *values : {&graph.input(), &graph.value_info(), &graph.output()})
      for (const auto &value : *values)
        if (value.type().has_tensor_type() && value.type().tensor_type().has_shape())
          ranks[value.name()] = value.type().tensor_type().shape().dim_size();
    for (const auto &tensor : graph.initializer())
      ranks[tensor.name()] = tensor.dims_size();
    return llvm::Error::success();
  }));
  // Gemm_6_7 reads dims 0 and 1 of A and B unchecked.
  return forEachGraph(model.graph(), [&](const onnx::GraphProto &graph) -> llvm::Error {
    for (const auto &[index, node] : llvm::enumerate(graph.node())) {
      if (node.op_type() != "Gemm" || !(node.domain().empty() || node.domain() == "ai.onnx"))
        continue;
      for (int i = 0; i < std::min(node.input_size(), 2); ++i) {
        auto rank = ranks.find(node.input(i));
        if (rank != ranks.end() && rank->second != 2)
          return fail(file, describeNode(node, index) + " (Gemm): input '" + node.input(i) +
                                "' has rank " + llvm::Twine(rank->second) +
                                ", but Gemm takes matrices");
      }
    }
    return llvm::Error::success();
  });
}

const onnx::ISchemaRegistry *shapeInferenceSchemas() {
  static const GuardedSchemaRegistry registry;
  return &registry;
}

} // namespace nncc::import
