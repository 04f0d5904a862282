#include "lib/Import/OnnxImport.h"
#include "lib/Support/Error.h"

#include "lib/Import/GraphImporter.h"
#include "lib/Import/ModelLoader.h"
#include "lib/Import/NodeContext.h"
#include "lib/Import/SizeLimits.h"

#include "dialects/NN/NNDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace nncc {

void printSupportedOps(llvm::raw_ostream &os) {
  os << "| Op | Opsets | Handlers since |\n|---|---|---|\n";
  for (const auto &[op, versions] : import::HandlerRegistry::instance().versions()) {
    // Ranges of consecutive versions with a handler; a null one ends a range.
    std::string ranges, since;
    for (size_t i = 0; i < versions.size(); ++i) {
      if (!versions[i].second)
        continue;
      since += (since.empty() ? "" : ", ") + std::to_string(versions[i].first);
      if (i > 0 && versions[i - 1].second)
        continue;
      size_t end = i;
      while (end + 1 < versions.size() && versions[end + 1].second)
        ++end;
      int last = end + 1 < versions.size() ? versions[end + 1].first - 1 : import::kMaxOpset;
      ranges += (ranges.empty() ? "" : ", ") + std::to_string(versions[i].first) + "-" +
                std::to_string(last);
    }
    os << "| " << op << " | " << ranges << " | " << since << " |\n";
  }
}

void loadImportDialects(mlir::MLIRContext &context) {
  context.loadDialect<nn::NNDialect, mlir::func::FuncDialect>();
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxBytes(mlir::MLIRContext &context, llvm::StringRef bytes, llvm::StringRef displayName,
                llvm::StringRef baseDir, const ImportOptions &options) {
  loadImportDialects(context);
  auto model = import::loadModel(bytes, displayName, baseDir, options);
  if (!model)
    return model.takeError();
  return import::GraphImporter(context, *model, displayName).run(options);
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxFile(mlir::MLIRContext &context, llvm::StringRef path, const ImportOptions &options) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s: cannot read the file: %s",
                                   path.str().c_str(), buffer.getError().message().c_str());
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  return importOnnxBytes(context, (*buffer)->getBuffer(), path, dir.empty() ? "." : dir, options);
}

llvm::Error parseBindOption(llvm::StringRef text, ImportOptions &options) {
  auto [name, path] = text.split('=');
  if (name.empty() || path.empty())
    return fail("--bind-input expects NAME=FILE.pb, got '" + text + "'");
  options.boundInputs[name.str()] = path.str();
  return llvm::Error::success();
}

llvm::Error parseShapeOption(llvm::StringRef text, ImportOptions &options) {
  auto [name, dimsText] = text.rsplit(':');
  auto bad = [&] {
    return fail("--shape expects NAME:D0xD1x... (NAME: for a scalar), got '" + text + "'");
  };
  if (name.empty() || !text.contains(':'))
    return bad();
  // "NAME:" gives a scalar (rank 0): a sample-rate or flag input.
  std::vector<int64_t> dims;
  llvm::SmallVector<llvm::StringRef> parts;
  if (!dimsText.empty())
    dimsText.split(parts, 'x');
  for (llvm::StringRef part : parts) {
    int64_t d;
    if (part.getAsInteger(10, d) || d < 0)
      return bad();
    dims.push_back(d);
  }
  // The element type is not known here; even one byte per element must fit.
  std::optional<int64_t> count = import::elementCount(dims);
  if (!count || *count > import::kMaxTensorBytes)
    return fail("--shape '" + text + "' describes more elements than nncc's limit of 2^40 " +
                "per tensor (1 TiB)");
  options.inputShapes[name.str()] = dims;
  return llvm::Error::success();
}

} // namespace nncc
