#ifndef NNCC_LIB_IMPORT_ONNXIMPORT_H
#define NNCC_LIB_IMPORT_ONNXIMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nncc {

/// Options of the ONNX importer.
struct ImportOptions {
  /// Static shapes for graph inputs with dynamic dims (`--shape NAME:1x3x224x224`).
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Graph inputs replaced by constants read from TensorProto files
  /// (`--bind-input NAME=FILE.pb`).
  std::map<std::string, std::string> boundInputs;
  /// Refuse, before shape inference, graph inputs whose dims are still
  /// dynamic after `inputShapes` (code generation needs them fixed), listing
  /// the `--shape` flags to add.
  bool requireStaticInputs = false;
  /// Name of the function the graph becomes.
  std::string entryName = "forward";
};

/// Imports the ONNX model at `path` (binary protobuf; external data files are
/// resolved next to it) into a module holding one `func.func` of `nn` ops.
/// Every unsupported op, a bad file, an invalid attribute or a shape
/// contradiction is reported as an error naming the culprit.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxFile(mlir::MLIRContext &context, llvm::StringRef path, const ImportOptions &options);

/// Same, from bytes in memory; `baseDir` resolves external data ("" refuses it).
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxBytes(mlir::MLIRContext &context, llvm::StringRef bytes, llvm::StringRef displayName,
                llvm::StringRef baseDir, const ImportOptions &options);

/// Prints every supported default-domain op with the opsets it imports at, as
/// the rows of a Markdown table (`nncc --list-ops`; docs/compiler.md's op
/// table is this output).
void printSupportedOps(llvm::raw_ostream &os);

/// Loads every dialect the importer produces into `context`.
void loadImportDialects(mlir::MLIRContext &context);

/// Parses `NAME=FILE.pb` into `options.boundInputs`.
llvm::Error parseBindOption(llvm::StringRef text, ImportOptions &options);

/// Parses `NAME:1x3x224x224` into `options.inputShapes`.
llvm::Error parseShapeOption(llvm::StringRef text, ImportOptions &options);

} // namespace nncc

#endif // NNCC_LIB_IMPORT_ONNXIMPORT_H
