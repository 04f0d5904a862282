/// Kernels from tensors to loops over buffers (shared by every target).
#include "lib/Target/KernelBuffers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace nncc {
namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Kernel arguments are static, identity-layout memrefs (passed as bare
/// pointers on every target).
constexpr const char *kBufferizePipeline =
    "one-shot-bufferize{bufferize-function-boundaries=1 "
    "function-boundary-type-conversion=identity-layout-map},"
    "drop-equivalent-buffer-results";
/// Row kernels (layer norm, softmax, attention) are one scf.forall over rows:
/// as scf.parallel it is the nest the CPU splits and the GPU maps to threads.
constexpr const char *kLoopsPipeline =
    "func.func(convert-linalg-to-parallel-loops,scf-forall-to-parallel)";

/// Turns each statically shaped allocation at the top of a kernel into a new
/// trailing argument, so temporaries live in the arena instead of being
/// allocated on every run. Returns the bytes of each, per kernel.
llvm::StringMap<SmallVector<int64_t>> hoistScratch(ModuleOp module) {
  llvm::StringMap<SmallVector<int64_t>> scratch;
  module.walk([&](func::FuncOp func) {
    if (func.isExternal())
      return;
    SmallVector<int64_t> &sizes = scratch[func.getName()];
    Block &body = func.getBody().front();
    SmallVector<memref::AllocOp> allocs;
    for (Operation &op : body)
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        if (alloc.getType().hasStaticShape() && alloc.getType().getLayout().isIdentity() &&
            alloc.getDynamicSizes().empty())
          allocs.push_back(alloc);
    for (memref::AllocOp alloc : allocs) {
      MemRefType type = alloc.getType();
      unsigned index = func.getNumArguments();
      (void)func.insertArgument(index, type, {}, alloc.getLoc());
      alloc.replaceAllUsesWith(func.getBody().front().getArgument(index));
      alloc.erase();
      int64_t width = type.getElementTypeBitWidth();
      sizes.push_back(type.getNumElements() * std::max<int64_t>(1, width / 8));
    }
  });
  return scratch;
}

/// Small static allocations inside a kernel's loops (a row kernel's per-row
/// scores) become stack allocations: a heap allocation per row would cost
/// more than the row's work.
void stackAllocateInLoops(ModuleOp module) {
  constexpr int64_t kMaxStackBytes = 16384;
  SmallVector<memref::AllocOp> allocs;
  module.walk([&](memref::AllocOp alloc) {
    MemRefType type = alloc.getType();
    if (isa<func::FuncOp>(alloc->getParentOp()) || !type.hasStaticShape() ||
        type.getNumElements() * std::max<int64_t>(1, type.getElementTypeBitWidth() / 8) > kMaxStackBytes)
      return;
    allocs.push_back(alloc);
  });
  for (memref::AllocOp alloc : allocs) {
    OpBuilder b(alloc);
    auto alloca = memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType());
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    alloc.replaceAllUsesWith(alloca.getResult());
    alloc.erase();
  }
}

} // namespace

DiagnosticCollector::DiagnosticCollector(MLIRContext *ctx)
    : handler(ctx, [this](Diagnostic &diag) {
        if (diag.getSeverity() == DiagnosticSeverity::Error) {
          llvm::raw_string_ostream os(text);
          os << "\n  " << diag.getLocation() << ": " << diag;
        }
        return success();
      }) {}

llvm::Error runPipeline(ModuleOp module, llvm::StringRef pipeline, llvm::StringRef what) {
  static const bool passesRegistered = (registerAllPasses(), true);
  (void)passesRegistered;
  MLIRContext *ctx = module.getContext();
  DiagnosticCollector diags(ctx);
  PassManager pm(ctx);
  if (failed(parsePassPipeline(pipeline, pm)))
    return fail("internal error: bad pass pipeline for " + what);
  if (failed(pm.run(module)))
    return fail(what + " failed:" + diags.text);
  return llvm::Error::success();
}

llvm::Expected<BufferizedKernels> bufferizeKernels(ModuleOp execModule) {
  BufferizedKernels result;
  result.module = ModuleOp::create(execModule.getLoc());
  OpBuilder b(execModule.getContext());
  b.setInsertionPointToEnd(result.module->getBody());
  // Kernels stay private through bufferization, which lets it drop their
  // results (they equal the destination arguments).
  for (auto func : execModule.getOps<func::FuncOp>()) {
    if (!func.isPrivate() || func.isExternal())
      continue;
    result.names.push_back(cast<func::FuncOp>(b.clone(*func)).getName().str());
  }
  if (auto err = runPipeline(*result.module, kBufferizePipeline, "kernel bufferization"))
    return std::move(err);
  // memref.copy of strided views lowers to a call into MLIR's C runner
  // library, which modules do not link; as linalg.copy it becomes loops.
  result.module->walk([&](memref::CopyOp copy) {
    OpBuilder cb(copy);
    linalg::CopyOp::create(cb, copy.getLoc(), copy.getSource(), copy.getTarget());
    copy.erase();
  });
  result.scratchBytes = hoistScratch(*result.module);
  stackAllocateInLoops(*result.module);
  if (auto err = runPipeline(*result.module, kLoopsPipeline, "kernel loop generation"))
    return std::move(err);
  return result;
}

} // namespace nncc
