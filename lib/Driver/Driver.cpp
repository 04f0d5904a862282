#include "lib/Driver/Driver.h"

#include "passes/Pipelines.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

namespace nncc {

void loadCompilerDialects(mlir::MLIRContext &context) { loadImportDialects(context); }

/// Runs `pm` on `module`, turning diagnostics into one llvm::Error.
static llvm::Error runPasses(mlir::PassManager &pm, mlir::ModuleOp module, llvm::StringRef phase) {
  std::string messages;
  mlir::ScopedDiagnosticHandler handler(module.getContext(), [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error) {
      llvm::raw_string_ostream os(messages);
      os << "\n  " << diag.getLocation() << ": " << diag;
    }
    return mlir::success();
  });
  if (mlir::succeeded(pm.run(module)))
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "%s failed:%s", phase.str().c_str(), messages.c_str());
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
compileOnnxFile(mlir::MLIRContext &context, llvm::StringRef path, const CompileOptions &options) {
  loadCompilerDialects(context);
  auto module = importOnnxFile(context, path, options.import);
  if (!module)
    return module.takeError();
  if (!options.noSimplify) {
    mlir::PassManager pm(&context);
    buildNNSimplifyPipeline(pm);
    if (auto err = runPasses(pm, **module, "simplification"))
      return std::move(err);
  }
  return module;
}

} // namespace nncc
