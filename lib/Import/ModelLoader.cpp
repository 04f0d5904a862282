/// Parsing and preparation of ONNX models with libonnx: structural checks,
/// the checker, the version converter and shape inference. libonnx reports
/// problems with exceptions; they are caught here and become llvm::Errors.
#include "lib/Import/ModelLoader.h"
#include "lib/Support/Error.h"

#include "lib/Import/FoldShapes.h"
#include "lib/Import/InputBinding.h"

#include "lib/Import/ModelValidation.h"
#include "lib/Import/NodeContext.h"
#include "lib/Import/SizeLimits.h"

#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <google/protobuf/io/coded_stream.h>

namespace nncc::import {
namespace {

int defaultDomainOpset(const onnx::ModelProto &model) {
  for (const auto &opset : model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      return static_cast<int>(opset.version());
  return 0;
}

bool importsDomain(const onnx::ModelProto &model, llvm::StringRef domain) {
  return llvm::any_of(model.opset_import(),
                      [&](const onnx::OperatorSetIdProto &opset) { return opset.domain() == domain; });
}

void setDefaultDomainOpset(onnx::ModelProto &model, int version) {
  for (auto &opset : *model.mutable_opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      opset.set_version(version);
}

/// Applies `--shape NAME:dims` to the graph inputs before shape inference.
llvm::Error applyInputShapes(onnx::ModelProto &model, llvm::StringRef file,
                             const ImportOptions &options) {
  for (const auto &[name, dims] : options.inputShapes) {
    onnx::ValueInfoProto *input = nullptr;
    for (auto &candidate : *model.mutable_graph()->mutable_input())
      if (candidate.name() == name)
        input = &candidate;
    if (!input)
      return fail(file, "--shape names '" + name + "', which is not a graph input");
    auto *tensorType = input->mutable_type()->mutable_tensor_type();
    if (tensorType->has_shape() && tensorType->shape().dim_size() != (int)dims.size())
      return fail(file, llvm::formatv("--shape gives {0} dims for input '{1}' of rank {2}",
                                      dims.size(), name, tensorType->shape().dim_size()));
    auto *shape = tensorType->mutable_shape();
    shape->clear_dim();
    for (int64_t d : dims)
      shape->add_dim()->set_dim_value(d);
  }
  return llvm::Error::success();
}

/// Refuses graph inputs (with `--shape` applied) too large for nncc before
/// libonnx's shape inference computes with their sizes.
llvm::Error checkInputSizes(const onnx::GraphProto &graph, llvm::StringRef file) {
  for (const auto &input : graph.input()) {
    if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape())
      continue;
    const auto &tensorType = input.type().tensor_type();
    llvm::SmallVector<int64_t> dims;
    for (const auto &dim : tensorType.shape().dim())
      dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    if (auto problem = tensorSizeProblem(dims, onnxElementBytes(tensorType.elem_type())))
      return fail(file, "graph input '" + input.name() + "' has " + *problem);
  }
  return llvm::Error::success();
}

/// onnx::checker::check_model with external data resolved against `baseDir`
/// (the library's own entry point resolves it against the working folder).
void checkModel(const onnx::ModelProto &model, llvm::StringRef baseDir) {
  onnx::checker::CheckerContext ctx;
  ctx.set_ir_version(static_cast<int>(model.ir_version()));
  std::unordered_map<std::string, int> opsets;
  for (const auto &opset : model.opset_import())
    opsets[opset.domain()] = static_cast<int>(opset.version());
  ctx.set_opset_imports(opsets);
  ctx.set_is_main_graph(true);
  ctx.set_schema_registry(onnx::OpSchemaRegistry::Instance());
  ctx.set_model_dir(baseDir.str());
  onnx::checker::LexicalScopeContext scope;
  onnx::checker::check_graph(model.graph(), ctx, scope);
}

/// Whether every node of `graph` (and of its subgraphs) is a default-domain
/// op with a handler at `opset`, so the model needs no upgrade.
bool handledAtOpset(const onnx::GraphProto &graph, int opset) {
  const auto &registry = HandlerRegistry::instance();
  for (const auto &node : graph.node()) {
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    if (!defaultDomain || !registry.lookup(node.op_type(), opset))
      return false;
    for (const auto &attr : node.attribute()) {
      if (attr.has_g() && !handledAtOpset(attr.g(), opset))
        return false;
      for (const auto &g : attr.graphs())
        if (!handledAtOpset(g, opset))
          return false;
    }
  }
  return true;
}

} // namespace

llvm::Expected<LoadedModel> loadModel(llvm::StringRef bytes, llvm::StringRef displayName,
                                      llvm::StringRef baseDir, const ImportOptions &options) {
  LoadedModel loaded;
  loaded.baseDir = baseDir.str();
  if (bytes.empty())
    return fail(displayName, "the file is empty, not an ONNX model");
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(bytes.data()), static_cast<int>(bytes.size()));
  stream.SetTotalBytesLimit(INT32_MAX);
  if (!loaded.proto.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return fail(displayName, "cannot be parsed as an ONNX model (not an ONNX protobuf "
                             "file, or truncated)");
  onnx::ModelProto &model = loaded.proto;
  // Protobuf accepts many byte strings as a message with unknown fields, so
  // check that this one looks like a model.
  if (model.ir_version() <= 0 || !model.has_graph())
    return fail(displayName, "is not an ONNX model (no IR version or no graph)");
  if (model.ir_version() < 3 || model.ir_version() > 10)
    return fail(displayName, llvm::formatv("has ONNX IR version {0}; nncc reads IR versions "
                                           "3 to 10",
                                           model.ir_version()));
  loaded.originalOpset = loaded.opset = defaultDomainOpset(model);
  // A graph of optimizer ops alone (Adam...) imports only their domain; the
  // checker still rejects any default-domain node in it.
  if (loaded.opset <= 0 && importsDomain(model, kPreviewTrainingDomain))
    loaded.originalOpset = loaded.opset = kMaxOnnxLibOpset;
  if (loaded.opset <= 0)
    return fail(displayName, "imports no version of the default ONNX operator set");
  if (loaded.opset > kMaxOpset)
    return fail(displayName, llvm::formatv("uses opset {0}; nncc reads opsets 1 to {1}",
                                           loaded.opset, kMaxOpset));

  // Unsupported ops are listed all at once, before the checker stops at the
  // first op it does not know. An old model imports at its own opset when
  // every node has a handler there; otherwise it is upgraded, and checked
  // again after the upgrade, which may replace ops (Upsample becomes Resize).
  bool willUpgrade = loaded.opset < kMinHandlerOpset &&
                     !handledAtOpset(model.graph(), loaded.opset);
  if (auto err = checkOpsSupported(model.graph(), willUpgrade ? kMinHandlerOpset : loaded.opset,
                                   loaded.opset, displayName, /*skipKnownToOnnx=*/willUpgrade))
    return std::move(err);

  // Malformed models that would crash libonnx are rejected before it sees them.
  if (auto err = validateModel(model, displayName))
    return std::move(err);

  try {
    if (loaded.opset <= kMaxOnnxLibOpset)
      checkModel(model, baseDir);
  } catch (const std::exception &e) {
    return fail(displayName, llvm::Twine("is not a valid ONNX model: ") + e.what());
  }

  if (auto err = bindInputs(model, displayName, options))
    return std::move(err);
  if (auto err = applyInputShapes(model, displayName, options))
    return std::move(err);
  if (options.requireStaticInputs)
    if (auto err = checkStaticInputs(model.graph()))
      return std::move(err);
  if (auto err = checkInputSizes(model.graph(), displayName))
    return std::move(err);

  // Strict inference reports shape contradictions by node; for opsets newer
  // than libonnx knows, inference is best effort and the importer fills in.
  // It runs before the version converter too, whose adapters need shapes.
  bool known = loaded.opset <= kMaxOnnxLibOpset;
  auto inferShapes = [&]() -> llvm::Error {
    try {
      // Old exporters wrote types their opset did not allow yet (int64
      // Constants at opset 6), so types are checked only from opset 13.
      bool checkTypes = known && loaded.opset >= kMinHandlerOpset;
      onnx::ShapeInferenceOptions inferOptions(/*check_type=*/checkTypes,
                                               /*strict_mode=*/known ? 1 : 0,
                                               /*data_prop=*/true);
      onnx::shape_inference::InferShapes(model, shapeInferenceSchemas(),
                                         inferOptions);
    } catch (const std::exception &e) {
      return fail(displayName, llvm::Twine("shape inference failed: ") + e.what());
    }
    return llvm::Error::success();
  };
  if (auto err = inferShapes())
    return std::move(err);

  if (willUpgrade) {
    if (auto err = validateForUpgrade(model, loaded.opset, displayName))
      return std::move(err);
    try {
      model = onnx::version_conversion::ConvertVersion(model, kMinHandlerOpset);
    } catch (const std::exception &e) {
      return fail(displayName, llvm::formatv("cannot be upgraded from opset {0} to {1}: {2}",
                                             loaded.opset, kMinHandlerOpset, e.what()));
    }
    // The converter may add initializers without listing them as inputs, which
    // IR 3 forbids; opset 13 needs IR 7 anyway.
    if (model.ir_version() < 7)
      model.set_ir_version(7);
    setDefaultDomainOpset(model, kMinHandlerOpset);
    if (auto err = checkOpsSupported(model.graph(), kMinHandlerOpset, loaded.opset, displayName,
                                     /*skipKnownToOnnx=*/false))
      return std::move(err);
    loaded.opset = kMinHandlerOpset;
    if (auto err = inferShapes())
      return std::move(err);
  }
  // Shape computations that --shape made constant, then the shapes they give.
  if (foldShapeComputations(model) > 0)
    if (auto err = inferShapes())
      return std::move(err);
  return loaded;
}

} // namespace nncc::import
