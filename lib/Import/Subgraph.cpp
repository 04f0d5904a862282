#include "lib/Import/Subgraph.h"
#include "lib/Import/FoldShapes.h"
#include "lib/Import/ModelValidation.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/shape_inference/implementation.h"

using namespace mlir;

namespace nncc::import {
namespace {

/// Integer constants at most this large are given to shape inference as
/// values (FoldShapes' own limit); larger ones are data.
constexpr int64_t kMaxConstantElements = 64;

/// The ONNX data type of an MLIR element type, or UNDEFINED.
int32_t onnxElementType(Type type) {
  if (type.isF32())
    return onnx::TensorProto::FLOAT;
  if (type.isF64())
    return onnx::TensorProto::DOUBLE;
  if (type.isF16())
    return onnx::TensorProto::FLOAT16;
  if (type.isBF16())
    return onnx::TensorProto::BFLOAT16;
  if (auto i = dyn_cast<IntegerType>(type)) {
    if (i.getWidth() == 1)
      return onnx::TensorProto::BOOL;
    bool u = i.isUnsigned();
    switch (i.getWidth()) {
    case 8: return u ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8;
    case 16: return u ? onnx::TensorProto::UINT16 : onnx::TensorProto::INT16;
    case 32: return u ? onnx::TensorProto::UINT32 : onnx::TensorProto::INT32;
    case 64: return u ? onnx::TensorProto::UINT64 : onnx::TensorProto::INT64;
    }
  }
  return onnx::TensorProto::UNDEFINED;
}

/// Names `graph` (and the graphs nested in it) reads but does not define.
void outerNames(const onnx::GraphProto &graph, llvm::StringSet<> &defined,
                SmallVectorImpl<std::string> &used) {
  for (const auto &v : graph.input())
    defined.insert(v.name());
  for (const auto &t : graph.initializer())
    defined.insert(t.name());
  for (const auto &node : graph.node()) {
    for (const auto &name : node.input())
      if (!name.empty() && !defined.contains(name))
        used.push_back(name);
    for (const auto &attr : node.attribute()) {
      if (attr.has_g())
        outerNames(attr.g(), defined, used);
      for (const auto &sub : attr.graphs())
        outerNames(sub, defined, used);
    }
    for (const auto &name : node.output())
      defined.insert(name);
  }
  for (const auto &v : graph.output())
    if (!defined.contains(v.name()))
      used.push_back(v.name());
}

/// Declares `name` as a graph input of `value`'s type, or as an initializer
/// when it is a small integer constant.
llvm::Error bindName(onnx::GraphProto &graph, const std::string &name, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  int32_t dtype = onnxElementType(type.getElementType());
  if (dtype == onnx::TensorProto::UNDEFINED)
    return llvm::createStringError("value '" + name + "' has an element type ONNX lacks");
  DenseElementsAttr attr;
  bool isInt = dtype == onnx::TensorProto::INT64 || dtype == onnx::TensorProto::INT32;
  if (isInt && matchPattern(value, m_Constant(&attr)) &&
      attr.getNumElements() <= kMaxConstantElements) {
    onnx::TensorProto *t = graph.add_initializer();
    t->set_name(name);
    t->set_data_type(dtype);
    for (int64_t d : type.getShape())
      t->add_dims(d);
    for (const APInt &v : attr.getValues<APInt>()) {
      if (dtype == onnx::TensorProto::INT64)
        t->add_int64_data(v.getSExtValue());
      else
        t->add_int32_data((int32_t)v.getSExtValue());
    }
    return llvm::Error::success();
  }
  onnx::ValueInfoProto *info = graph.add_input();
  info->set_name(name);
  auto *tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(dtype);
  auto *shape = tensor->mutable_shape();
  for (int64_t d : type.getShape())
    if (ShapedType::isDynamic(d))
      shape->add_dim();
    else
      shape->add_dim()->set_dim_value(d);
  return llvm::Error::success();
}

} // namespace

llvm::Expected<onnx::ModelProto>
specializeSubgraph(const onnx::ModelProto &outer, const onnx::GraphProto &graph,
                   llvm::function_ref<Value(llvm::StringRef)> lookup, ValueRange inputs) {
  if ((size_t)graph.input_size() != inputs.size())
    return llvm::createStringError("subgraph '" + graph.name() + "' takes " +
                                   std::to_string(graph.input_size()) + " inputs, given " +
                                   std::to_string(inputs.size()));
  onnx::ModelProto model;
  model.set_ir_version(std::max<int64_t>(outer.ir_version(), 7));
  *model.mutable_opset_import() = outer.opset_import();
  onnx::GraphProto &g = *model.mutable_graph();
  g = graph;
  g.clear_input();
  g.clear_value_info();
  for (auto &output : *g.mutable_output())
    output.clear_type();
  for (auto [info, value] : llvm::zip(graph.input(), inputs))
    if (auto err = bindName(g, info.name(), value))
      return std::move(err);
  llvm::StringSet<> defined, seen;
  SmallVector<std::string> used;
  outerNames(graph, defined, used);
  for (const std::string &name : used) {
    if (!seen.insert(name).second)
      continue;
    Value value = lookup(name);
    if (!value)
      return llvm::createStringError("subgraph '" + graph.name() + "' reads '" + name +
                                     "', which no enclosing graph defines");
    if (auto err = bindName(g, name, value))
      return std::move(err);
  }
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0,
                                        /*data_prop=*/true);
    onnx::shape_inference::InferShapes(model, shapeInferenceSchemas(), options);
    if (foldShapeComputations(model) > 0)
      onnx::shape_inference::InferShapes(model, shapeInferenceSchemas(), options);
  } catch (const std::exception &e) {
    return llvm::createStringError("shape inference of subgraph '" + graph.name() +
                                   "' failed: " + e.what());
  }
  return model;
}

} // namespace nncc::import
