/// Buffer assignment: every value an entry's steps compute gets its bytes.
#include "lib/Target/PlanPasses.h"

#include "lib/Target/MemoryPlanner.h"
#include "lib/Target/Passes.h"

#include "dialects/Exec/ExecUtils.h"
#include "dialects/NN/NNOps.h"

#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "llvm/ADT/DenseMap.h"

namespace nncc {
#define GEN_PASS_DEF_PLANBUFFERSPASS
#include "lib/Target/PlanPasses.h.inc"
} // namespace nncc

using namespace mlir;

namespace nncc {
namespace {

/// Live ranges and packing of one entry's arena values.
class EntryBuffers {
public:
  EntryBuffers(func::FuncOp func, bool reuse) : func_(func), reuse_(reuse) {}

  LogicalResult run();

private:
  /// One arena buffer: the values that live in it (the defining value, then
  /// values computed in place into it) and its live range in steps.
  struct Interval {
    SmallVector<Value, 2> values;
    int64_t bytes, begin, end;
  };
  void assignIntervals(ArrayRef<Operation *> steps, const llvm::DenseMap<Value, int64_t> &lastUse,
                       const llvm::DenseMap<Value, int32_t> &outputOf);
  void writeAttributes(ArrayRef<Operation *> steps, const llvm::DenseMap<Value, int32_t> &outputOf);

  func::FuncOp func_;
  bool reuse_;
  std::vector<Interval> intervals_;
  llvm::DenseMap<Value, size_t> intervalOf_;
  /// Per step, the intervals of its kernel's scratch buffers.
  llvm::DenseMap<Operation *, SmallVector<size_t>> scratchOf_;
};

/// The scratch bytes of the kernel `launch` runs (nncc-hoist-scratch).
ArrayRef<int64_t> scratchBytes(exec::LaunchOp launch) {
  auto kernel = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(launch, launch.getKernelAttr());
  if (!kernel)
    return {};
  if (auto bytes = kernel->getAttrOfType<DenseI64ArrayAttr>(kScratchBytesAttrName))
    return bytes.asArrayRef();
  return {};
}

LogicalResult EntryBuffers::run() {
  auto ret = cast<func::ReturnOp>(func_.getBody().front().getTerminator());
  // Results marked nncc.check (nncc-insert-index-checks) are run-time check
  // flags: arena values live to the end of the run, not outputs.
  auto isCheck = [&](unsigned i) { return func_.getResultAttr(i, "nncc.check") != nullptr; };
  // Outputs computed by a step are written straight into the caller's buffer.
  llvm::DenseMap<Value, int32_t> outputOf;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Value r = exec::viewRoot(v);
    Operation *def = r.getDefiningOp();
    if (!isCheck(i) && def && exec::isPlannedStep(def) && !outputOf.count(r) &&
        exec::bufferBytes(r.getType()) == exec::bufferBytes(v.getType()))
      outputOf[r] = i;
  }
  // Steps, and the last step reading each value (the return reads after all).
  SmallVector<Operation *> steps;
  for (Operation &op : func_.getBody().front()) {
    if (exec::isPlannedStep(&op))
      steps.push_back(&op);
    else if (!isa<nn::ConstantOp, exec::ViewOp, ml_program::GlobalLoadOp, ml_program::GlobalStoreOp,
                   func::ReturnOp>(op))
      return op.emitOpError("has no plan step");
  }
  llvm::DenseMap<Value, int64_t> lastUse;
  for (auto [step, op] : llvm::enumerate(steps))
    for (Value operand : op->getOperands())
      lastUse[exec::viewRoot(operand)] = step;
  // The return, and the state updates copied after every step, read last.
  for (Value v : ret.getOperands())
    lastUse[exec::viewRoot(v)] = steps.size();
  for (auto store : func_.getBody().front().getOps<ml_program::GlobalStoreOp>())
    lastUse[exec::viewRoot(store.getValue())] = steps.size();
  assignIntervals(steps, lastUse, outputOf);
  writeAttributes(steps, outputOf);
  return success();
}

/// Live ranges of the arena values. An elementwise kernel may write its
/// result over an operand of the same size that dies at that step, also
/// when it reads the operand through a view (a reshape keeps the element
/// order: the conv epilogue after a GEMM). A GEMM accumulates into the
/// buffer of its C operand when C dies there (a residual added by the
/// GEMM), unless it also reads that buffer as A, B or bias: the copy of C
/// into the output then disappears.
void EntryBuffers::assignIntervals(ArrayRef<Operation *> steps,
                                   const llvm::DenseMap<Value, int64_t> &lastUse,
                                   const llvm::DenseMap<Value, int32_t> &outputOf) {
  for (auto [step, op] : llvm::enumerate(steps)) {
    SmallVector<Value> reusable;
    auto offer = [&](Value operand) {
      if (intervalOf_.count(operand) && lastUse.lookup(operand) == (int64_t)step &&
          !llvm::is_contained(reusable, operand))
        reusable.push_back(operand);
    };
    if (auto launch = dyn_cast<exec::LaunchOp>(op); launch && reuse_)
      if (auto inplace = launch.getInplaceOperands())
        for (int64_t i : *inplace)
          offer(exec::viewRoot(launch.getArgs()[i]));
    if (auto gemm = dyn_cast<exec::GemmOp>(op); gemm && gemm.getC() && reuse_) {
      Value c = exec::viewRoot(gemm.getC());
      if (c != exec::viewRoot(gemm.getA()) && c != exec::viewRoot(gemm.getB()) &&
          (!gemm.getBias() || c != exec::viewRoot(gemm.getBias())))
        offer(c);
    }
    for (Value r : op->getResults()) {
      if (outputOf.count(r))
        continue;
      int64_t end = std::max<int64_t>(step, lastUse.lookup(r));
      auto donor = llvm::find_if(
          reusable, [&](Value v) { return exec::bufferBytes(v.getType()) == exec::bufferBytes(r.getType()); });
      if (donor != reusable.end()) {
        size_t index = intervalOf_[*donor];
        intervals_[index].values.push_back(r);
        intervals_[index].end = end;
        intervalOf_[r] = index;
        reusable.erase(donor);
        continue;
      }
      intervalOf_[r] = intervals_.size();
      intervals_.push_back({{r}, exec::bufferBytes(r.getType()), (int64_t)step, end});
    }
    if (auto launch = dyn_cast<exec::LaunchOp>(op))
      for (int64_t bytes : scratchBytes(launch)) {
        scratchOf_[op].push_back(intervals_.size());
        intervals_.push_back({{}, bytes, (int64_t)step, (int64_t)step});
      }
  }
}

void EntryBuffers::writeAttributes(ArrayRef<Operation *> steps,
                                   const llvm::DenseMap<Value, int32_t> &outputOf) {
  std::vector<LiveBuffer> buffers;
  for (const Interval &iv : intervals_)
    buffers.push_back({iv.bytes, iv.begin, iv.end});
  ArenaLayout layout = packBuffers(buffers);
  if (!reuse_) { // Every buffer its own bytes (for comparisons).
    int64_t offset = 0;
    for (LiveBuffer &b : buffers) {
      b.offset = offset;
      offset += alignToArena(b.bytes);
    }
    layout.arenaBytes = offset;
  }
  // Without reuse every value, also those computed in place, has its own buffer.
  int64_t noReuseBytes = 0;
  for (const Interval &iv : intervals_)
    noReuseBytes += iv.values.size() * alignToArena(iv.bytes);

  MLIRContext *ctx = func_.getContext();
  Builder b(ctx);
  for (Operation *op : steps) {
    SmallVector<Attribute> results;
    for (Value r : op->getResults()) {
      if (auto it = outputOf.find(r); it != outputOf.end())
        results.push_back(exec::OutputBufferAttr::get(ctx, it->second));
      else
        results.push_back(exec::ArenaBufferAttr::get(ctx, buffers[intervalOf_.lookup(r)].offset));
    }
    op->setAttr(kBuffersAttrName, b.getArrayAttr(results));
    if (auto scratch = scratchOf_.find(op); scratch != scratchOf_.end()) {
      SmallVector<int64_t> offsets;
      for (size_t index : scratch->second)
        offsets.push_back(buffers[index].offset);
      op->setAttr(kScratchOffsetsAttrName, b.getDenseI64ArrayAttr(offsets));
    }
  }
  func_->setAttr(kArenaBytesAttrName, b.getI64IntegerAttr(layout.arenaBytes));
  func_->setAttr(kNoReuseBytesAttrName, b.getI64IntegerAttr(noReuseBytes));
  func_->setAttr(kLiveLowerBoundAttrName, b.getI64IntegerAttr(layout.liveLowerBound));
}

struct PlanBuffersPass : impl::PlanBuffersPassBase<PlanBuffersPass> {
  using PlanBuffersPassBase::PlanBuffersPassBase;
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isPrivate() && failed(EntryBuffers(func, reuse).run()))
        return signalPassFailure();
  }
};

} // namespace

void buildPlanPipeline(OpPassManager &pm, bool reuse) {
  if (reuse)
    pm.addNestedPass<func::FuncOp>(createScheduleForMemoryPass());
  pm.addPass(createPlanBuffersPass(PlanBuffersPassOptions{reuse}));
}

namespace {
struct PlanPipelineOptions : PassPipelineOptions<PlanPipelineOptions> {
  Option<bool> reuse{*this, "reuse", llvm::cl::desc("reorder steps and share arena bytes"),
                     llvm::cl::init(true)};
};
} // namespace

void registerPlanPasses() {
  registerNNCCPlanPasses();
  PassPipelineRegistration<PlanPipelineOptions>(
      "nncc-plan", "Step order and buffers of every entry (nncc-schedule-for-memory, nncc-plan-buffers)",
      [](OpPassManager &pm, const PlanPipelineOptions &options) { buildPlanPipeline(pm, options.reuse); });
}

} // namespace nncc
