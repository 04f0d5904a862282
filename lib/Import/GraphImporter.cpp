#include "lib/Import/GraphImporter.h"
#include "lib/Support/Error.h"

#include "lib/Import/NodeContext.h"
#include "lib/Import/SizeLimits.h"
#include "lib/Import/Subgraph.h"
#include "lib/Import/TensorConversion.h"

#include "dialects/NN/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace nncc::import {

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node, size_t index,
                                        OpBuilder &builder) {
  std::string name = node.name().empty()
                         ? llvm::formatv("{0}_{1}", node.op_type(), index).str()
                         : node.name();
  Location loc = NameLoc::get(builder.getStringAttr(name));
  NodeContext ctx(*this, node, index, builder, loc, model_.opset);
  for (int i = 0; i < node.input_size(); ++i)
    if (!node.input(i).empty() && !lookup(node.input(i)))
      return ctx.error("input '" + node.input(i) + "' is not produced by any earlier node");
  // libonnx computes sizes in int64 without overflow checks (Conv or Pad
  // with pads of 2^62): a negative dim is such an overflow, not a dynamic dim.
  for (const auto &output : node.output())
    if (const onnx::TypeProto *type = typeOf(output);
        type && type->has_tensor_type() && type->tensor_type().has_shape())
      for (const auto &dim : type->tensor_type().shape().dim())
        if (dim.has_dim_value() && dim.dim_value() < 0)
          return ctx.error(llvm::formatv("shape inference gives output '{0}' the negative "
                                         "dimension {1}: its sizes overflow int64",
                                         output, dim.dim_value()));
  NodeHandler handler = HandlerRegistry::instance().lookup(qualifiedOpType(node), model_.opset);
  SmallVector<Value> outputs;
  if (failed(handler(ctx, outputs)))
    return failure();
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    if ((size_t)i >= outputs.size() || !outputs[i])
      return ctx.error("output '" + node.output(i) + "' is not supported");
    // Checked on what the handler built, which is shape inference's type or
    // the handler's own where inference gave none.
    if (auto type = dyn_cast<RankedTensorType>(outputs[i].getType()))
      if (auto problem = tensorSizeProblem(type))
        return ctx.error("output '" + node.output(i) + "' has " + *problem);
    values_[node.output(i)] = outputs[i];
  }
  return success();
}

LogicalResult GraphImporter::importSubgraph(const onnx::GraphProto &graph, ValueRange inputs,
                                           OpBuilder &builder, StringRef owner,
                                           SmallVectorImpl<Value> &outputs) {
  // Each use is specialized: an unrolled Loop's iterations see different
  // iteration numbers and may see different shapes.
  auto model = specializeSubgraph(
      model_.proto, graph, [&](StringRef name) { return lookup(name); }, inputs);
  if (!model) {
    addError(owner.str() + ": " + llvm::toString(model.takeError()));
    return failure();
  }
  const onnx::GraphProto &specialized = model->graph();
  if (auto err = checkOpsSupported(specialized, model_.opset, model_.opset,
                                   owner.str() + ": subgraph '" + graph.name() + "'",
                                   /*skipKnownToOnnx=*/false)) {
    addError(llvm::toString(std::move(err)));
    return failure();
  }
  auto outerValues = values_;
  auto outerTypes = types_;
  auto restore = llvm::make_scope_exit([&] {
    values_ = std::move(outerValues);
    types_ = std::move(outerTypes);
  });
  for (auto [info, value] : llvm::zip(graph.input(), inputs))
    values_[info.name()] = value;
  for (const auto &info : specialized.value_info())
    types_[info.name()] = &info.type();
  for (const auto &info : specialized.output())
    types_[info.name()] = &info.type();
  for (auto [index, node] : llvm::enumerate(specialized.node()))
    if (failed(importNode(node, index, builder)))
      return failure();
  for (const auto &output : specialized.output()) {
    Value value = lookup(output.name());
    if (!value) {
      addError(owner.str() + ": subgraph '" + graph.name() + "' output '" + output.name() +
               "' is not produced by any node");
      return failure();
    }
    outputs.push_back(value);
  }
  return success();
}

llvm::Expected<OwningOpRef<ModuleOp>> GraphImporter::run(const ImportOptions &options) {
  const onnx::GraphProto &graph = model_.proto.graph();
  for (const auto &info : graph.input())
    types_[info.name()] = &info.type();
  for (const auto &info : graph.value_info())
    types_[info.name()] = &info.type();
  for (const auto &info : graph.output())
    types_[info.name()] = &info.type();

  OpBuilder builder(&context_);
  Location fileLoc = FileLineColLoc::get(&context_, displayName_, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);

  llvm::StringSet<> initializerNames;
  for (const auto &init : graph.initializer())
    initializerNames.insert(init.name());

  // Graph inputs that are not initializers (IR 3 lists both) are the arguments.
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  for (const auto &info : graph.input()) {
    if (initializerNames.contains(info.name()))
      continue;
    auto type = convertTensorType(info.type(), &context_);
    if (!type) {
      addError("graph input '" + info.name() + "' " + llvm::toString(type.takeError()));
      continue;
    }
    argTypes.push_back(*type);
    argNames.push_back(info.name());
  }
  if (!errors_.empty())
    return takeErrors();

  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, fileLoc, options.entryName,
                                   builder.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, "nn.name", builder.getStringAttr(name));
    values_[name] = body->getArgument(i);
  }
  builder.setInsertionPointToStart(body);

  for (const auto &init : graph.initializer()) {
    auto value = convertTensor(init, model_.baseDir, &context_);
    if (!value) {
      addError(llvm::toString(value.takeError()));
      continue;
    }
    values_[init.name()] =
        nn::ConstantOp::create(builder, NameLoc::get(builder.getStringAttr(init.name())), *value);
  }
  if (!errors_.empty())
    return takeErrors();

  for (auto [index, node] : llvm::enumerate(graph.node()))
    if (failed(importNode(node, index, builder)))
      return takeErrors();

  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const auto &output : graph.output()) {
    Value value = lookup(output.name());
    if (!value) {
      addError("graph output '" + output.name() + "' is not produced by any node");
      continue;
    }
    results.push_back(value);
    resultTypes.push_back(value.getType());
  }
  if (!errors_.empty())
    return takeErrors();
  func::ReturnOp::create(builder, fileLoc, results);
  func.setFunctionType(builder.getFunctionType(argTypes, resultTypes));
  for (auto [i, output] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "nn.name", builder.getStringAttr(output.name()));

  // Verification failures here are importer or shape-inference disagreements;
  // report them with the node name the location carries.
  {
    ScopedDiagnosticHandler handler(&context_, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error) {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << diag.getLocation() << ": " << diag;
        addError(text);
      }
      return success();
    });
    if (failed(verify(*module)))
      return takeErrors();
  }
  return module;
}

llvm::Error GraphImporter::takeErrors() {
  std::string message = displayName_ + ": ";
  for (size_t i = 0; i < errors_.size(); ++i)
    message += (i ? "\n" : "") + errors_[i];
  errors_.clear();
  return fail(message);
}

} // namespace nncc::import
