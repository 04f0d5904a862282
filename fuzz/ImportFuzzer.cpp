/// libFuzzer entry point for the ONNX importer: every input is handed to
/// importOnnxBytes as a model file. Errors are expected and dropped; the only
/// findings are crashes, aborts, sanitizer reports, leaks and timeouts.
#include "lib/Import/OnnxImport.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>

namespace {

struct FuzzState {
  mlir::MLIRContext context;
  // Swallows every diagnostic the importer does not catch itself (the
  // importer's own handler only covers verification), so nothing is printed.
  mlir::ScopedDiagnosticHandler silence;
  nncc::ImportOptions options;

  FuzzState()
      : context(mlir::MLIRContext::Threading::DISABLED),
        silence(&context, [](mlir::Diagnostic &) { return mlir::success(); }) {
    context.printOpOnDiagnostic(false);
    context.printStackTraceOnDiagnostic(false);
    nncc::loadImportDialects(context);
  }
};

/// Inputs one MLIRContext serves before it is replaced. A context keeps every
/// type and attribute it uniques until it is destroyed, so one context for the
/// whole run grows without bound and ends in an out-of-memory report.
constexpr unsigned kInputsPerContext = 50000;

FuzzState &state() {
  // The current state is never destroyed: MLIR's uniqued storage stays
  // reachable from here, so LeakSanitizer does not report it at exit.
  static FuzzState *s = nullptr;
  static unsigned inputs = 0;
  if (s && ++inputs < kInputsPerContext)
    return *s;
  delete s;
  s = new FuzzState();
  inputs = 0;
  return *s;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzState &s = state();
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  auto module = nncc::importOnnxBytes(s.context, bytes, "fuzz.onnx", /*baseDir=*/"", s.options);
  if (!module)
    llvm::consumeError(module.takeError());
  return 0;
}
