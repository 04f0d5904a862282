#ifndef NNCC_LIB_IMPORT_GRAPHIMPORTER_H
#define NNCC_LIB_IMPORT_GRAPHIMPORTER_H

#include "lib/Import/ModelLoader.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace nncc::import {

/// Turns the main graph of a prepared model into `func.func @<entry>` of nn ops.
class GraphImporter {
public:
  GraphImporter(mlir::MLIRContext &context, const LoadedModel &model, llvm::StringRef displayName)
      : context_(context), model_(model), displayName_(displayName.str()) {}

  llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> run(const ImportOptions &options);

  /// The value of an ONNX name defined so far (null when unknown).
  mlir::Value lookup(llvm::StringRef name) const { return values_.lookup(name); }
  /// The type shape inference recorded for an ONNX name, or null.
  const onnx::TypeProto *typeOf(llvm::StringRef name) const { return types_.lookup(name); }
  llvm::StringRef baseDir() const { return model_.baseDir; }
  void addError(std::string message) { errors_.push_back(std::move(message)); }
  /// Imports the nodes of `graph` (an If branch, a Loop or Scan body) at the
  /// builder's insertion point, its formal inputs bound to `inputs` and the
  /// enclosing graphs' names visible; its own names are dropped afterwards.
  /// Its outputs are appended to `outputs`. `owner` names the node that holds
  /// it in messages about the subgraph as a whole.
  mlir::LogicalResult importSubgraph(const onnx::GraphProto &graph, mlir::ValueRange inputs,
                                     mlir::OpBuilder &builder, llvm::StringRef owner,
                                     llvm::SmallVectorImpl<mlir::Value> &outputs);

private:
  mlir::LogicalResult importNode(const onnx::NodeProto &node, size_t index,
                                 mlir::OpBuilder &builder);
  llvm::Error takeErrors();

  mlir::MLIRContext &context_;
  const LoadedModel &model_;
  std::string displayName_;
  llvm::StringMap<mlir::Value> values_;
  llvm::StringMap<const onnx::TypeProto *> types_;
  std::vector<std::string> errors_;
};

} // namespace nncc::import

#endif // NNCC_LIB_IMPORT_GRAPHIMPORTER_H
