#ifndef NNCC_LIB_DRIVER_DRIVER_H
#define NNCC_LIB_DRIVER_DRIVER_H

#include "lib/Import/OnnxImport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

namespace nncc {

/// Where the compile pipeline stops.
enum class EmitKind {
  /// The imported graph, canonicalized and constant-folded.
  NN,
};

struct CompileOptions {
  ImportOptions import;
  EmitKind emit = EmitKind::NN;
  /// Skip canonicalization (print the importer's raw output).
  bool noSimplify = false;
};

/// Registers every dialect the pipeline uses with `context`.
void loadCompilerDialects(mlir::MLIRContext &context);

/// Runs the compile pipeline on an ONNX file up to `options.emit`.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
compileOnnxFile(mlir::MLIRContext &context, llvm::StringRef path, const CompileOptions &options);

} // namespace nncc

#endif // NNCC_LIB_DRIVER_DRIVER_H
