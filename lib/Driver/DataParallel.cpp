/// The driver's side of `--parallel=dp:N`: the option and the shapes of the
/// shard each rank compiles.
#include "lib/Driver/Driver.h"
#include "lib/Import/ModelLoader.h"
#include "lib/Import/ShardBatch.h"
#include "lib/Support/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "onnx/onnx_pb.h"

#include <set>

namespace nncc {

llvm::Error parseParallelOption(llvm::StringRef text, CompileOptions &options) {
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ',');
  std::set<std::string> seen;
  for (llvm::StringRef part : parts) {
    auto [kind, count] = part.split(':');
    int64_t n = 0;
    if ((kind != "dp" && kind != "tp" && kind != "pp") || count.getAsInteger(10, n) || n < 1 ||
        !seen.insert(kind.str()).second)
      return fail("--parallel: '" + text.str() +
                  "' is not a parallel layout (expected any of dp:N, tp:M and pp:P, comma separated, each "
                  "at least 1)");
    (kind == "dp" ? options.dataParallel : kind == "tp" ? options.tensorParallel : options.pipelineParallel) = n;
  }
  return llvm::Error::success();
}

llvm::Expected<ImportOptions> shardedImportOptions(mlir::ModuleOp imported, const ImportOptions &global,
                                                   int64_t ranks, llvm::StringRef split) {
  auto entry = imported.lookupSymbol<mlir::func::FuncOp>(global.entryName);
  if (!entry)
    return fail("--parallel: the imported model has no entry '" + global.entryName + "'");
  ImportOptions shard = global;
  int64_t batch = -1;
  std::string first;
  for (auto [i, type] : llvm::enumerate(entry.getArgumentTypes())) {
    auto name = entry.getArgAttrOfType<mlir::StringAttr>(i, "nn.name");
    std::string n = name ? name.str() : "input" + std::to_string(i);
    auto tensor = mlir::cast<mlir::RankedTensorType>(type);
    if (tensor.getRank() == 0)
      return fail(split.str() + ": input '" + n +
                  "' is a scalar: the batch is split along every input's first dimension");
    int64_t b = tensor.getShape().front();
    if (batch < 0) {
      batch = b;
      first = n;
    } else if (b != batch) {
      return fail(llvm::formatv("{0}: inputs '{1}' and '{2}' have batches {3} and {4}; the split needs one "
                                "batch",
                                split, first, n, batch, b)
                      .str());
    }
    if (b % ranks != 0)
      return fail(llvm::formatv("{0}: the global batch {1} (input '{2}') is not a multiple of {3} (data-parallel "
                                "ranks times micro-batches)",
                                split, b, n, ranks)
                      .str());
    std::vector<int64_t> dims(tensor.getShape().begin(), tensor.getShape().end());
    dims.front() = b / ranks;
    shard.inputShapes[n] = dims;
  }
  return shard;
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> importShard(mlir::MLIRContext &context, llvm::StringRef path,
                                                             mlir::ModuleOp imported, const ImportOptions &global,
                                                             int64_t ranks, llvm::StringRef split) {
  auto shard = shardedImportOptions(imported, global, ranks, split);
  if (!shard)
    return shard.takeError();
  int64_t batch = shard->inputShapes.begin()->second.front() * ranks;
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    return fail(path, "cannot read: " + file.getError().message());
  // The model as the global import saw it (upgraded, --shape and --bind-input
  // applied, shapes inferred at the global batch), with the constants that
  // carry the batch rewritten for the shard's.
  llvm::StringRef baseDir = llvm::sys::path::parent_path(path);
  auto loaded = import::loadModel((*file)->getBuffer(), path, baseDir, global);
  if (!loaded)
    return loaded.takeError();
  std::set<std::string> batchInputs;
  for (const auto &[name, dims] : shard->inputShapes)
    batchInputs.insert(name);
  if (auto err = import::shardBatchConstants(loaded->proto, batchInputs, batch, ranks, path))
    return std::move(err);
  // The bound inputs are constants of the loaded model already.
  shard->boundInputs.clear();
  std::string bytes;
  loaded->proto.SerializeToString(&bytes);
  return importOnnxBytes(context, bytes, path, baseDir, *shard);
}

} // namespace nncc
