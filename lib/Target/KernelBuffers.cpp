/// Kernels from tensors to loops over buffers (shared by every target).
#include "lib/Target/KernelBuffers.h"
#include "lib/Support/Error.h"

#include "dialects/Exec/ExecOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace nncc {
namespace {

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

/// Groups of consecutive loops of `op` that every operand reads or writes
/// as one contiguous run (same iterator type, dims adjacent and in order in
/// every indexing map, or absent from it): `[n, c, h, w] + bias[c, 1, 1]`
/// becomes `[n, c, h*w]`. Empty when nothing collapses.
SmallVector<ReassociationIndices> contiguousLoopGroups(linalg::GenericOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // A diagonal (d0, d1, d1) or a window (d0 + d1) is no plain run of loops.
  if (!llvm::all_of(maps, [](AffineMap map) { return map.isProjectedPermutation(); }))
    return {};
  // Each loop must cover the whole dim it indexes in every operand.
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    ArrayRef<int64_t> shape = cast<MemRefType>(operand.get().getType()).getShape();
    for (auto [i, result] : llvm::enumerate(map.getResults()))
      if (auto dim = dyn_cast<AffineDimExpr>(result); dim && ranges[dim.getPosition()] != shape[i])
        return {};
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<ReassociationIndices> groups{{0}};
  for (int64_t d = 1, e = op.getNumLoops(); d < e; ++d) {
    ReassociationIndices grown = groups.back();
    grown.push_back(d);
    if (iterators[d] == iterators[d - 1] && linalg::areDimSequencesPreserved(maps, {grown}))
      groups.back() = grown;
    else
      groups.push_back({d});
  }
  if (groups.size() == op.getNumLoops())
    return {};
  return groups;
}

/// Collapses the contiguous loops of each linalg.generic over whole
/// (identity-layout) buffers into one loop. A 28x28 plane as two loops of 28
/// leaves LLVM a 28-iteration inner loop, shorter than its vector width
/// times its interleave factor on AVX-512, so it runs scalar; as one loop of
/// 784 it vectorizes (and a GPU thread computes fewer indices). Bodies that
/// read `linalg.index` are left alone: collapsing would delinearize the index
/// with a division per element.
void collapseContiguousLoops(ModuleOp module) {
  SmallVector<linalg::GenericOp> ops;
  module.walk([&](linalg::GenericOp op) {
    bool wholeBuffers = llvm::all_of(op->getOperands(), [](Value v) {
      auto type = dyn_cast<MemRefType>(v.getType());
      return type && type.getLayout().isIdentity() && type.hasStaticShape();
    });
    // Windows (o*s + k) are no plain runs of loops even where dropping a unit
    // dim leaves a bare k: its loop then covers less than the dim it indexes.
    // Broadcasts (c, 0, 0) are.
    bool plainMaps = llvm::all_of(op.getIndexingMapsArray(),
                                  [](AffineMap map) { return map.isProjectedPermutation(/*allowZeroInResults=*/true); });
    if (op.hasPureBufferSemantics() && wholeBuffers && plainMaps && op.getNumLoops() > 1 &&
        op.getBody()->getOps<linalg::IndexOp>().empty())
      ops.push_back(op);
  });
  IRRewriter rewriter(module.getContext());
  linalg::ControlDropUnitDims dropUnitDims;
  for (linalg::GenericOp op : ops) {
    // A broadcast operand such as bias[c, 1, 1] is indexed (c, 0, 0); its unit
    // dims go first, or no loop group would be contiguous in it.
    rewriter.setInsertionPoint(op);
    if (auto dropped = linalg::dropUnitDims(rewriter, op, dropUnitDims); succeeded(dropped)) {
      rewriter.eraseOp(op);
      op = cast<linalg::GenericOp>(dropped->resultOp.getOperation());
    }
    SmallVector<ReassociationIndices> groups = contiguousLoopGroups(op);
    if (groups.empty())
      continue;
    rewriter.setInsertionPoint(op);
    if (succeeded(linalg::collapseOpIterationDims(op, groups, rewriter)))
      rewriter.eraseOp(op);
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

/// `v` without collapse_shape(expand_shape(x)) pairs that give back x's
/// type (row-major reshapes both: the pair is the identity).
Value throughReshapePairs(Value v) {
  while (auto collapse = v.getDefiningOp<memref::CollapseShapeOp>()) {
    auto expand = collapse.getSrc().getDefiningOp<memref::ExpandShapeOp>();
    if (!expand || expand.getSrc().getType() != collapse.getType())
      break;
    v = expand.getSrc();
  }
  return v;
}

/// True when `a` and `b` view the same elements the same way: one value, or
/// static subviews of one buffer with equal offsets, sizes and strides.
bool sameView(Value a, Value b) {
  a = throughReshapePairs(a);
  b = throughReshapePairs(b);
  if (a == b)
    return true;
  auto sa = a.getDefiningOp<memref::SubViewOp>(), sb = b.getDefiningOp<memref::SubViewOp>();
  return sa && sb && sa.getSource() == sb.getSource() && sa.getType() == sb.getType() &&
         sa->getNumOperands() == 1 && sb->getNumOperands() == 1 &&
         sa.getStaticOffsets() == sb.getStaticOffsets() && sa.getStaticSizes() == sb.getStaticSizes() &&
         sa.getStaticStrides() == sb.getStaticStrides();
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
  // A value computed in place through a slice (extract_slice, compute,
  // insert_slice back) leaves a copy of a subview onto an identical subview:
  // dropped, it is no loop nest (GPU launch) of its own.
  result.module->walk([&](memref::CopyOp copy) {
    if (!sameView(copy.getSource(), copy.getTarget())) {
      OpBuilder cb(copy);
      linalg::CopyOp::create(cb, copy.getLoc(), copy.getSource(), copy.getTarget());
    }
    copy.erase();
  });
  result.scratchBytes = hoistScratch(*result.module);
  // An in-place launch passes one buffer as the operand and the result (its
  // init argument, after the operands; in-place kernels have one result).
  execModule.walk([&](exec::LaunchOp launch) {
    auto inplace = launch.getInplaceOperands();
    if (!inplace || inplace->empty())
      return;
    SmallVector<unsigned> &args = result.mayAlias[launch.getKernel()];
    for (int64_t operand : *inplace)
      args.push_back(operand);
    args.push_back(launch.getArgs().size());
    llvm::sort(args);
    args.erase(llvm::unique(args), args.end());
  });
  stackAllocateInLoops(*result.module);
  collapseContiguousLoops(*result.module);
  if (auto err = runPipeline(*result.module, kLoopsPipeline, "kernel loop generation"))
    return std::move(err);
  return result;
}

} // namespace nncc
