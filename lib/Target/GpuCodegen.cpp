/// Kernels to PTX (buildGpuCodegenPipeline), checked for device heap calls,
/// and ptxas for cubins.
#include "lib/Target/GpuCodegen.h"
#include "dialects/NN/NNUtils.h"
#include "lib/Support/Error.h"
#include "lib/Target/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"

#include <cstdlib>

using namespace mlir;

namespace nncc {
namespace {

llvm::Expected<std::string> assembleCubin(const std::string &ptxas, const std::string &ptx,
                                          StringRef arch) {
  llvm::SmallString<256> dir;
  if (auto ec = llvm::sys::fs::createUniqueDirectory("nncc-ptxas", dir))
    return fail("cannot create a temporary folder: " + ec.message());
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(dir); });
  std::string in = (dir + "/kernels.ptx").str(), out = (dir + "/kernels.cubin").str(),
              log = (dir + "/ptxas.log").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec)
      return fail("cannot write '" + in + "': " + ec.message());
    os << ptx;
  }
  std::string archFlag = ("-arch=" + arch).str();
  llvm::StringRef args[] = {ptxas, archFlag, "-O3", in, "-o", out};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log), llvm::StringRef(log)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0, &error);
  auto read = [](const std::string &path) {
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    return buffer ? (*buffer)->getBuffer().str() : std::string();
  };
  if (rc != 0) {
    std::string output = read(log);
    /// An unresolved `__nv_*` function means libdevice was not linked: say
    /// where to point nncc rather than leave the user with ptxas's words.
    std::string hint = llvm::StringRef(output).contains("function '__nv_")
                           ? "\nlibdevice (nvvm/libdevice/libdevice.10.bc) was not found; set CUDA_HOME to the "
                             "CUDA toolkit folder"
                           : "";
    return fail("ptxas (" + ptxas + ") rejected the PTX for " + arch + (error.empty() ? "" : ": " + error) +
                "\n" + output + hint);
  }
  return read(out);
}

/// The CUDA toolkit whose libdevice (the GPU math library: expf, erff...)
/// MLIR's NVVM target links; without one the math calls stay unresolved and
/// ptxas rejects the PTX. Empty where $CUDA_ROOT, $CUDA_HOME or $CUDA_PATH
/// names one (MLIR reads them) or none is found. The toolkit whose ptxas
/// assembles the cubins is the natural default.
std::string findToolkit(const std::string &ptxas) {
  if (std::getenv("CUDA_ROOT") || std::getenv("CUDA_HOME") || std::getenv("CUDA_PATH"))
    return "";
  /// `ptxas` on PATH may be a wrapper script outside the toolkit (CI has
  /// /usr/local/bin/ptxas exec'ing the real one), so its folder is only the
  /// first guess; the usual install folders follow.
  llvm::SmallVector<std::string, 3> roots;
  llvm::SmallString<256> real;
  if (!ptxas.empty() && !llvm::sys::fs::real_path(ptxas, real)) {
    llvm::sys::path::remove_filename(real); // bin/
    llvm::sys::path::remove_filename(real);
    roots.push_back(real.str().str());
  }
  roots.push_back("/usr/local/cuda");
  roots.push_back("/usr/lib/cuda");
  for (const std::string &root : roots)
    if (llvm::sys::fs::exists(root + "/nvvm/libdevice"))
      return root;
  return "";
}

/// The PTX function (entry or device function) around each call of the
/// device heap (malloc, free), in order of appearance.
SmallVector<std::pair<std::string, std::string>> deviceHeapCalls(StringRef ptx) {
  static const llvm::Regex function("^[.a-z ]*\\.(entry|func).*[ )]([A-Za-z_$][A-Za-z0-9_$]*)\\($");
  static const llvm::Regex heapCall("^[[:space:]]*call(\\.uni)?[[:space:]].*[ ,](malloc|free)[ ,;]");
  SmallVector<std::pair<std::string, std::string>> calls;
  std::string current;
  SmallVector<StringRef> lines, match;
  ptx.split(lines, '\n');
  for (StringRef line : lines) {
    if (!line.starts_with(".extern") && function.match(line.rtrim(), &match))
      current = match[2].str();
    else if (heapCall.match(line, &match))
      calls.emplace_back(current, match[2].str());
  }
  return calls;
}

/// A GPU kernel must not allocate: NVVM turns an allocation left in a kernel
/// (a per-thread temporary too large for the stack) into a call of the device
/// heap's malloc, which has no NULL check, is never freed, and serves all
/// threads from 8 MB by default: a long sequence would fault or corrupt
/// memory at run time. Refused at compile time instead, naming the kernel.
llvm::Error checkNoDeviceHeap(StringRef ptx, StringRef arch, ModuleOp kernels) {
  auto calls = deviceHeapCalls(ptx);
  if (calls.empty())
    return llvm::Error::success();
  auto [function, callee] = calls.front();
  // Launch functions are named <kernel>_<launch>; the kernel's location
  // names the ONNX nodes it computes.
  std::string kernel = function, nodes;
  for (const std::string &name : kernelNames(kernels))
    if (StringRef(function).starts_with(name + "_")) {
      kernel = name;
      nodes = nn::nodeNames(kernels.lookupSymbol(name)->getLoc());
    }
  if (!nodes.empty())
    kernel += "' (ONNX nodes " + nodes + ")";
  else
    kernel += "'";
  std::string more = calls.size() > 1 ? " (" + std::to_string(calls.size()) + " heap calls in all)" : "";
  return fail("kernel '" + kernel + " (PTX function '" + function + "', " + arch + ") calls the device heap's " +
              callee + ": a per-thread temporary of this kernel is too large for the stack, and GPU "
              "kernels must not allocate" + more);
}

} // namespace

std::string findPtxas() {
  if (const char *env = std::getenv("NNCC_PTXAS"))
    return env;
  if (auto onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  return "";
}

llvm::Expected<GpuKernels> lowerKernelsToGpu(ModuleOp kernels, llvm::ArrayRef<std::string> archs) {
  MLIRContext *ctx = kernels.getContext();
  DialectRegistry registry;
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllToLLVMIRTranslations(registry);
  ctx->appendDialectRegistry(registry);
  ctx->loadAllAvailableDialects();
  std::string ptxas = findPtxas();
  GpuCodegenOptions options{std::vector<std::string>(archs.begin(), archs.end()), findToolkit(ptxas)};
  OwningOpRef<ModuleOp> module = cast<ModuleOp>(kernels->clone());
  if (auto err = runPipeline(
          *module, [&](OpPassManager &pm) { buildGpuCodegenPipeline(pm, options); }, "GPU code generation"))
    return std::move(err);
  GpuKernels result;
  for (const std::string &name : kernelNames(kernels)) {
    auto launches = module->lookupSymbol(name)->getAttrOfType<ArrayAttr>(kGpuLaunchesAttrName);
    SmallVector<GpuLaunch> &list = result.launches[name];
    for (auto launch : launches.getAsRange<DictionaryAttr>())
      list.push_back(GpuLaunch{launch.getAs<StringAttr>("name").str(),
                               {static_cast<uint32_t>(launch.getAs<IntegerAttr>("grid").getInt()), 1, 1},
                               {static_cast<uint32_t>(launch.getAs<IntegerAttr>("block").getInt()), 1, 1}});
  }
  // One object per NVVM target, in the order of `archs`.
  llvm::StringMap<std::string> ptxByArch;
  module->walk([&](gpu::BinaryOp binary) {
    for (Attribute object : binary.getObjects()) {
      auto obj = cast<gpu::ObjectAttr>(object);
      ptxByArch[cast<NVVM::NVVMTargetAttr>(obj.getTarget()).getChip()] = obj.getObject().getValue().str();
    }
  });
  for (const std::string &arch : archs) {
    GpuImage image{arch, ptxByArch.lookup(arch), ""};
    if (image.ptx.empty())
      return fail("GPU code generation for " + arch + " produced no PTX");
    if (auto err = checkNoDeviceHeap(image.ptx, arch, kernels))
      return std::move(err);
    if (!ptxas.empty()) {
      auto cubin = assembleCubin(ptxas, image.ptx, arch);
      if (!cubin)
        return cubin.takeError();
      image.cubin = std::move(*cubin);
    }
    result.images.push_back(std::move(image));
  }
  return result;
}

} // namespace nncc
