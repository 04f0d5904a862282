#include "lib/Target/Package.h"
#include "lib/Support/Error.h"
#include "lib/Support/PendingFile.h"

#include "lib/Target/HostCodegen.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <optional>

#include "ModuleAbiText.inc"
#include "nncc/plan_hash.h"

namespace nncc {
namespace {

/// Writes (or with OF_Append, appends) `contents` to `path`.
llvm::Error writeFile(llvm::StringRef path, llvm::StringRef contents,
                      llvm::sys::fs::OpenFlags flags = llvm::sys::fs::OF_None) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, flags);
  if (ec)
    return fail("cannot write '" + path + "': " + ec.message());
  out << contents;
  out.close();
  if (out.has_error()) {
    std::string why = out.error().message();
    out.clear_error(); // else the stream's destructor aborts the compiler
    return fail("cannot write '" + path + "': " + why);
  }
  return llvm::Error::success();
}

/// Appends the integrity trailer of include/nncc/plan_hash.h to the linked
/// module at `path`.
llvm::Error appendFileTrailer(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail("cannot read '" + path + "': " + buffer.getError().message());
  llvm::StringRef bytes = (*buffer)->getBuffer();
  uint64_t sum = fileChecksum(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  std::string trailer(kFileTrailerMagic, sizeof(kFileTrailerMagic));
  for (int i = 0; i < 8; ++i)
    trailer.push_back(static_cast<char>(sum >> (8 * i)));
  return writeFile(path, trailer, llvm::sys::fs::OF_Append);
}

std::string pathIn(llvm::StringRef dir, llvm::StringRef name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

} // namespace

llvm::Error packageSharedLibrary(const ModulePlan &plan, mlir::ModuleOp llvmKernels,
                                 llvm::StringRef outputPath, const PackageOptions &options) {
  llvm::SmallString<256> dir;
  if (!options.keepDir.empty()) {
    dir = options.keepDir;
    if (auto ec = llvm::sys::fs::create_directories(dir))
      return fail("cannot create '" + dir + "': " + ec.message());
  } else if (auto ec = llvm::sys::fs::createUniqueDirectory("nncc", dir)) {
    return fail("cannot create a temporary folder: " + ec.message());
  }
  auto cleanup = llvm::make_scope_exit([&] {
    if (options.keepDir.empty())
      llvm::sys::fs::remove_directories(dir);
  });

  // Both outputs are written under temporary names and renamed only once
  // the link succeeded, the weights first: the module names its weights file.
  auto module = PendingFile::create(outputPath);
  if (!module)
    return module.takeError();
  std::optional<PendingFile> weights;
  std::string weightsName;
  if (options.weightsFile) {
    weightsName = llvm::sys::path::filename(outputPath).str() + ".weights";
    llvm::SmallString<256> weightsPath(llvm::sys::path::parent_path(outputPath));
    llvm::sys::path::append(weightsPath, weightsName);
    auto pending = PendingFile::create(weightsPath);
    if (!pending)
      return pending.takeError();
    weights.emplace(std::move(*pending));
    if (auto err = writeFile(weights->tempPath(), plan.weights.data))
      return err;
  }
  std::string planC = pathIn(dir, "plan.c"), kernelsO = pathIn(dir, "kernels.o"),
              blobsS = pathIn(dir, "blobs.S"), exportsMap = pathIn(dir, "exports.map");
  if (auto err = writeFile(pathIn(dir, "module_abi.h"), kModuleAbiHeader))
    return err;
  if (auto err = writeFile(planC, emitPlanSource(plan, weightsName)))
    return err;
  if (auto err = writeFile(exportsMap, "{ global: nncc_module_get; local: *; };\n"))
    return err;
  const char *ccEnv = std::getenv("NNCC_CC");
  auto cc = llvm::sys::findProgramByName(ccEnv ? ccEnv : "cc");
  if (!cc)
    return fail("no C compiler found to link the module (install gcc, or set NNCC_CC)");
  std::vector<std::string> args = {*cc, "-shared", "-fPIC", "-O1", "-fvisibility=hidden",
                                   "-I" + std::string(dir), "-o", module->tempPath(), planC};
  if (llvmKernels) {
    if (auto err = emitHostObject(llvmKernels, kernelsO, options.cpu))
      return err;
    args.push_back(kernelsO);
  }
  // Binary blobs (weights, PTX, cubins) are assembled in as-is; 64-byte
  // alignment keeps vector loads of the weights aligned, the trailing NUL
  // terminates the PTX text.
  std::string asmText = "  .section .rodata\n";
  auto addBlob = [&](const std::string &symbol, const std::string &data) -> llvm::Error {
    std::string path = pathIn(dir, symbol + ".bin");
    if (auto err = writeFile(path, data))
      return err;
    asmText += "  .balign 64\n  .globl " + symbol + "\n  .hidden " + symbol + "\n" + symbol +
               ":\n  .incbin \"" + path + "\"\n  .byte 0\n";
    return llvm::Error::success();
  };
  if (!options.weightsFile)
    if (auto err = addBlob("nncc_weights_blob", plan.weights.data))
      return err;
  for (size_t i = 0; i < plan.gpuImages.size(); ++i) {
    if (auto err = addBlob("nncc_gpu_ptx_" + std::to_string(i), plan.gpuImages[i].ptx))
      return err;
    if (!plan.gpuImages[i].cubin.empty())
      if (auto err = addBlob("nncc_gpu_cubin_" + std::to_string(i), plan.gpuImages[i].cubin))
        return err;
  }
  asmText += "  .section .note.GNU-stack,\"\",@progbits\n";
  if (auto err = writeFile(blobsS, asmText))
    return err;
  args.push_back(blobsS);
  args.push_back("-Wl,--version-script=" + exportsMap);
  // Every symbol resolved at link time: a module that needs something beyond
  // libc and libm (a compiler-rt builtin) fails here, not at dlopen on the
  // user's machine.
  args.push_back("-Wl,-z,defs");
  args.push_back("-lm");
  std::string log = pathIn(dir, "link.log");
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log), llvm::StringRef(log)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(*cc, argRefs, std::nullopt, redirects, 0, 0, &error);
  if (rc != 0) {
    std::string output;
    if (auto buffer = llvm::MemoryBuffer::getFile(log))
      output = (*buffer)->getBuffer().str();
    return fail("linking '" + outputPath + "' with " + *cc + " failed" +
                (error.empty() ? "" : ": " + error) + "\n" + output);
  }
  if (auto err = appendFileTrailer(module->tempPath()))
    return err;
  if (weights)
    if (auto err = weights->commit())
      return err;
  return module->commit();
}

} // namespace nncc
