#include "lib/Import/InputBinding.h"
#include "lib/Support/Error.h"

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

} // namespace nncc::import
