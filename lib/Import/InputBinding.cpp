#include "lib/Import/InputBinding.h"
#include "lib/Support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"

namespace nncc::import {

llvm::Error bindInputs(onnx::ModelProto &model, llvm::StringRef displayName,
                       const ImportOptions &options) {
  auto *graph = model.mutable_graph();
  for (const auto &[name, path] : options.boundInputs) {
    auto *inputs = graph->mutable_input();
    auto it = std::find_if(inputs->begin(), inputs->end(),
                           [&](const onnx::ValueInfoProto &v) { return v.name() == name; });
    if (it == inputs->end())
      return fail(displayName, "--bind-input names '" + name + "', which is not a graph input");
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer)
      return fail(displayName, "--bind-input " + name + ": cannot read '" + path +
                  "': " + buffer.getError().message());
    onnx::TensorProto tensor;
    if (!tensor.ParseFromArray((*buffer)->getBufferStart(), (int)(*buffer)->getBufferSize()))
      return fail(displayName, "--bind-input " + name + ": '" + path + "' is not an ONNX TensorProto");
    if (it->type().has_tensor_type() &&
        it->type().tensor_type().elem_type() != tensor.data_type())
      return fail(displayName, "--bind-input " + name + ": '" + path + "' holds another element type than the input");
    tensor.set_name(name);
    // An initializer that is also a graph input would stay overridable; the
    // binding makes it a constant, so the input goes away (IR >= 4).
    inputs->erase(it);
    bool replaced = false;
    for (auto &init : *graph->mutable_initializer())
      if (init.name() == name) {
        init = tensor;
        replaced = true;
      }
    if (!replaced)
      *graph->add_initializer() = tensor;
    if (model.ir_version() < 4)
      model.set_ir_version(4);
  }
  return llvm::Error::success();
}

llvm::Error checkStaticInputs(const onnx::GraphProto &graph) {
  llvm::StringSet<> initializers;
  for (const auto &init : graph.initializer())
    initializers.insert(init.name());
  std::string listed, flags;
  for (const auto &input : graph.input()) {
    // Non-tensor inputs (sequences) are the importer's to report.
    if (initializers.contains(input.name()) || !input.type().has_tensor_type())
      continue;
    const auto &type = input.type();
    bool ranked = type.tensor_type().has_shape();
    std::string declared, flag;
    bool dynamic = !ranked;
    if (ranked)
      for (const auto &[k, dim] : llvm::enumerate(type.tensor_type().shape().dim())) {
        bool known = dim.has_dim_value() && dim.dim_value() >= 0;
        dynamic |= !known;
        declared += (k ? "," : "") + (known ? std::to_string(dim.dim_value()) : "?");
        flag += (k ? "x" : "") + (known ? std::to_string(dim.dim_value()) : "1");
      }
    if (!dynamic)
      continue;
    listed += "\n  input '" + input.name() + "' " +
              (ranked ? "[" + declared + "]" : std::string("of unknown rank"));
    if (ranked)
      flags += " --shape " + input.name() + ":" + flag;
  }
  if (listed.empty())
    return llvm::Error::success();
  return fail("the model's inputs have dynamic dimensions, and code generation needs them "
              "fixed:" +
              listed +
              (flags.empty() ? std::string()
                             : "\nadd (with the sizes you will run with in place of each "
                               "dynamic 1):" +
                                   flags));
}


} // namespace nncc::import
