/// nncc-data-parallel: train_step's gradients and loss averaged over the
/// ranks of a data-parallel group, in buckets.
#include "passes/Passes.h"

#include "dialects/Dist/DistOps.h"

#include "mlir/IR/SymbolTable.h"

namespace nncc {
#define GEN_PASS_DEF_DATAPARALLELPASS
#include "passes/Passes.h.inc"
} // namespace nncc

using namespace mlir;
using namespace nncc;

namespace {

/// A value to synchronize and the group-of-one all-reduce that marks it.
struct Synced {
  Value value;
  dist::AllReduceOp marker;
};

/// The values in the order they are computed: arguments and ops at the top
/// of the block first, then by position of their defining op.
void sortByReadiness(SmallVectorImpl<Synced> &values) {
  auto position = [](Value v) -> int64_t {
    Operation *def = v.getDefiningOp();
    if (!def)
      return -1;
    int64_t i = 0;
    for (Operation &op : *def->getBlock()) {
      if (&op == def)
        return i;
      ++i;
    }
    return i;
  };
  llvm::DenseMap<Value, int64_t> order;
  for (const Synced &s : values)
    order[s.value] = position(s.value);
  llvm::stable_sort(values, [&](const Synced &a, const Synced &b) { return order[a.value] < order[b.value]; });
}

struct DataParallelPass : nncc::impl::DataParallelPassBase<DataParallelPass> {
  using DataParallelPassBase::DataParallelPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (worldSize < 1 || bucketBytes < 1) {
      module.emitError("nncc-data-parallel: world-size and bucket-bytes must be positive");
      return signalPassFailure();
    }
    // train_step, or its variant for each pipeline stage (train_step.stage<s>).
    SmallVector<func::FuncOp> steps;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.getName() == "train_step" ||
          (func.getName().starts_with("train_step.stage") && func->hasAttr(dist::kPipelineStageAttrName)))
        steps.push_back(func);
    if (steps.empty()) {
      module.emitError("nncc-data-parallel: the module has no entry 'train_step' (compile with --train)");
      return signalPassFailure();
    }
    for (func::FuncOp step : steps)
      if (failed(synchronize(step)))
        return signalPassFailure();
    if (worldSize > 1)
      dist::setParallelLayout(module, dist::ParallelGroup::Data, worldSize);
  }

  /// Puts `step`'s synchronized values into buckets of all-reduces.
  LogicalResult synchronize(func::FuncOp step) {
    SmallVector<Synced> values;
    step.walk([&](dist::AllReduceOp op) {
      if (op.getGroupSize() != 1 || op.getReduction() != "mean")
        return;
      for (Value v : op.getInputs())
        values.push_back({v, op});
    });
    if (values.empty())
      return step.emitError("nncc-data-parallel: ")
             << step.getName() << " synchronizes no gradient (it was not built by nncc-add-train-step)";
    if (worldSize == 1)
      return success();
    sortByReadiness(values);
    // Greedy buckets in readiness order.
    SmallVector<SmallVector<Synced>> buckets;
    int64_t filled = 0;
    for (const Synced &s : values) {
      auto type = cast<RankedTensorType>(s.value.getType());
      int64_t bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
      if (buckets.empty() || filled + bytes > bucketBytes) {
        buckets.emplace_back();
        filled = 0;
      }
      buckets.back().push_back(s);
      filled += bytes;
    }
    Block &body = step.getBody().front();
    for (auto [index, bucket] : llvm::enumerate(buckets)) {
      // After the last value of the bucket (arguments: at the top).
      OpBuilder b(&getContext());
      Operation *last = nullptr;
      for (const Synced &s : bucket)
        if (Operation *def = s.value.getDefiningOp(); def && (!last || last->isBeforeInBlock(def)))
          last = def;
      if (last)
        b.setInsertionPointAfter(last);
      else
        b.setInsertionPointToStart(&body);
      SmallVector<Value> operands;
      SmallVector<Type> types;
      for (const Synced &s : bucket) {
        operands.push_back(s.value);
        types.push_back(s.value.getType());
      }
      Location loc = NameLoc::get(b.getStringAttr("all-reduce bucket " + std::to_string(index)));
      auto reduce = dist::AllReduceOp::create(b, loc, types, operands, b.getStringAttr("mean"),
                                            b.getI64IntegerAttr(worldSize));
      for (auto [s, result] : llvm::zip(bucket, reduce.getResults()))
        for (auto [in, out] : llvm::zip(s.marker.getInputs(), s.marker.getOutputs()))
          if (in == s.value)
            out.replaceAllUsesWith(result);
    }
    SmallVector<dist::AllReduceOp> markers;
    for (const Synced &s : values)
      if (!llvm::is_contained(markers, s.marker))
        markers.push_back(s.marker);
    for (dist::AllReduceOp m : markers)
      m.erase();
    return success();
  }
};

} // namespace
