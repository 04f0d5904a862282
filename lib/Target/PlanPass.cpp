/// The memory plan made visible in IR, for lit tests of the planner.
#include "lib/Target/PlanPass.h"

#include "lib/Target/Plan.h"

#include "dialects/Exec/ExecOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

#include "nncc/module_abi.h"

using namespace mlir;

namespace nncc {
namespace {

std::string describe(const BufferRef &ref) {
  switch (ref.kind) {
  case NNCC_BUFFER_ARENA:
    return "arena+" + std::to_string(ref.offset);
  case NNCC_BUFFER_INPUT:
    return "input" + std::to_string(ref.index);
  case NNCC_BUFFER_OUTPUT:
    return "output" + std::to_string(ref.index);
  case NNCC_BUFFER_WEIGHT:
    return "weight" + std::to_string(ref.index);
  }
  return "state" + std::to_string(ref.index);
}

struct AnnotateBuffersPass : PassWrapper<AnnotateBuffersPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AnnotateBuffersPass)
  StringRef getArgument() const override { return "nncc-annotate-buffers"; }
  StringRef getDescription() const override {
    return "Annotate exec ops with the arena offsets the memory planner assigns";
  }
  void runOnOperation() override {
    if (failed(annotateBufferPlan(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult annotateBufferPlan(ModuleOp module) {
  auto plan = buildPlan(module);
  if (!plan)
    return module.emitError(llvm::toString(plan.takeError()));
  size_t entryIndex = 0;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate())
      continue;
    const EntryPlan &entry = plan->entries[entryIndex++];
    OpBuilder b(func.getContext());
    func->setAttr("arena_bytes", b.getI64IntegerAttr(entry.arenaBytes));
    size_t step = 0;
    for (Operation &op : func.getBody().front()) {
      if (!isa<exec::LaunchOp, exec::GemmOp>(op))
        continue;
      // Copies the plan inserts before a GEMM with an accumulator come first.
      while (step < entry.steps.size() && entry.steps[step].kind == NNCC_STEP_COPY)
        ++step;
      SmallVector<Attribute> names;
      for (const auto &ref : entry.steps[step].args)
        names.push_back(b.getStringAttr(describe(ref)));
      op.setAttr("buffers", b.getArrayAttr(names));
      ++step;
    }
  }
  return success();
}

void registerPlanPasses() { PassRegistration<AnnotateBuffersPass>(); }

} // namespace nncc
