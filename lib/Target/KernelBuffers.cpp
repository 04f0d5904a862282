/// The kernel module: extraction from the exec module, its marks, and running
/// its pipelines.
#include "lib/Target/KernelBuffers.h"
#include "lib/Support/Error.h"
#include "lib/Target/Passes.h"

#include "dialects/Exec/ExecOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace nncc {

DiagnosticCollector::DiagnosticCollector(MLIRContext *ctx)
    : handler(ctx, [this](Diagnostic &diag) {
        if (diag.getSeverity() == DiagnosticSeverity::Error) {
          llvm::raw_string_ostream os(text);
          os << "\n  " << diag.getLocation() << ": " << diag;
        }
        return success();
      }) {}

llvm::Error runPipeline(ModuleOp module, llvm::function_ref<void(OpPassManager &)> build, llvm::StringRef what) {
  MLIRContext *ctx = module.getContext();
  DiagnosticCollector diags(ctx);
  PassManager pm(ctx);
  // nncc's --mlir-print-ir-*, crash reproducer and pass statistics options.
  if (failed(applyPassManagerCLOptions(pm)))
    return fail(what + ": pass manager options:" + diags.text);
  build(pm);
  if (failed(pm.run(module)))
    return fail(what + " failed:" + diags.text);
  return llvm::Error::success();
}

OwningOpRef<ModuleOp> extractKernels(ModuleOp execModule) {
  // An in-place launch passes one buffer as the operand and the result (its
  // init argument, after the operands; in-place kernels have one result).
  llvm::StringMap<SmallVector<int64_t>> mayAlias;
  llvm::StringSet<> launched;
  execModule.walk([&](exec::LaunchOp launch) {
    launched.insert(launch.getKernel());
    auto inplace = launch.getInplaceOperands();
    if (!inplace || inplace->empty())
      return;
    SmallVector<int64_t> &args = mayAlias[launch.getKernel()];
    args.append(inplace->begin(), inplace->end());
    args.push_back(launch.getArgs().size());
    llvm::sort(args);
    args.erase(llvm::unique(args), args.end());
  });
  OwningOpRef<ModuleOp> kernels = ModuleOp::create(execModule.getLoc());
  OpBuilder b = OpBuilder::atBlockEnd(kernels->getBody());
  for (auto func : execModule.getOps<func::FuncOp>()) {
    if (func.isExternal() || !launched.contains(func.getName()))
      continue;
    Operation *clone = b.clone(*func);
    clone->setAttr(kKernelAttrName, b.getUnitAttr());
    if (auto it = mayAlias.find(func.getName()); it != mayAlias.end())
      clone->setAttr(kMayAliasAttrName, b.getDenseI64ArrayAttr(it->second));
  }
  return kernels;
}

llvm::SmallVector<std::string> kernelNames(ModuleOp kernels) {
  llvm::SmallVector<std::string> names;
  for (Operation &op : kernels.getBody()->getOperations())
    if (op.hasAttr(kKernelAttrName))
      names.push_back(cast<SymbolOpInterface>(op).getName().str());
  return names;
}

llvm::StringMap<SmallVector<int64_t>> kernelScratchBytes(ModuleOp kernels) {
  llvm::StringMap<SmallVector<int64_t>> scratch;
  for (auto func : kernels.getOps<func::FuncOp>())
    if (auto bytes = func->getAttrOfType<DenseI64ArrayAttr>(kScratchBytesAttrName))
      scratch[func.getName()].assign(bytes.asArrayRef().begin(), bytes.asArrayRef().end());
  return scratch;
}

void recordKernelFacts(ModuleOp execModule, const llvm::StringMap<SmallVector<int64_t>> &scratchBytes,
                       const llvm::StringMap<int64_t> &parallelExtents,
                       const llvm::StringMap<SmallVector<GpuLaunch>> &gpuLaunches) {
  Builder b(execModule.getContext());
  for (auto func : execModule.getOps<func::FuncOp>()) {
    if (!func.isPrivate())
      continue;
    StringRef name = func.getName();
    if (auto it = scratchBytes.find(name); it != scratchBytes.end())
      func->setAttr(kScratchBytesAttrName, b.getDenseI64ArrayAttr(it->second));
    if (auto it = parallelExtents.find(name); it != parallelExtents.end())
      func->setAttr(kParallelExtentAttrName, b.getI64IntegerAttr(it->second));
    if (auto it = gpuLaunches.find(name); it != gpuLaunches.end()) {
      SmallVector<Attribute> launches;
      for (const GpuLaunch &l : it->second)
        launches.push_back(b.getDictionaryAttr({b.getNamedAttr("name", b.getStringAttr(l.function)),
                                                b.getNamedAttr("grid", b.getI64IntegerAttr(l.grid[0])),
                                                b.getNamedAttr("block", b.getI64IntegerAttr(l.block[0]))}));
      func->setAttr(kGpuLaunchesAttrName, b.getArrayAttr(launches));
    }
  }
}

} // namespace nncc
