/// Step order for memory: the schedule an entry's plan follows.
#include "lib/Target/PlanPasses.h"

#include "lib/Target/MemoryPlanner.h"

#include "dialects/Dist/DistOps.h"
#include "dialects/Exec/ExecUtils.h"

#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <climits>

namespace nncc {
#define GEN_PASS_DEF_SCHEDULEFORMEMORYPASS
#include "lib/Target/PlanPasses.h.inc"
} // namespace nncc

using namespace mlir;

namespace nncc {
namespace {

/// Bytes of the arena values live at the worst step of `order` (no reuse of
/// operands in place), for comparing schedules.
int64_t peakBytes(ArrayRef<Operation *> order, ArrayRef<Value> endReads,
                  const llvm::DenseSet<Value> &arenaValues) {
  llvm::DenseMap<Value, int64_t> lastUse, defined;
  for (auto [step, op] : llvm::enumerate(order)) {
    for (Value operand : op->getOperands())
      lastUse[exec::viewRoot(operand)] = step;
    for (Value r : op->getResults())
      defined[r] = step;
  }
  for (Value v : endReads)
    lastUse[exec::viewRoot(v)] = order.size();
  std::vector<int64_t> delta(order.size() + 2, 0);
  for (auto [v, step] : defined) {
    if (!arenaValues.contains(v))
      continue;
    int64_t end = std::max(step, lastUse.lookup(v));
    delta[step] += alignToArena(exec::bufferBytes(v.getType()));
    delta[end + 1] -= alignToArena(exec::bufferBytes(v.getType()));
  }
  int64_t live = 0, peak = 0;
  for (int64_t d : delta)
    peak = std::max(peak, live += d);
  return peak;
}

/// Reorders the steps of `func` when another topological order has a lower
/// peak of live arena bytes: a list schedule that prefers the ready step
/// freeing the most bytes (ties: program order). Reordering never adds
/// launches; it is kept only when it lowers the peak.
void scheduleForMemory(func::FuncOp func) {
  Block &block = func.getBody().front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  SmallVector<Operation *> steps;
  for (Operation &op : block)
    if (exec::isPlannedStep(&op))
      steps.push_back(&op);
  if (steps.size() < 3)
    return;
  llvm::DenseMap<Operation *, size_t> index;
  for (auto [i, op] : llvm::enumerate(steps))
    index[op] = i;
  llvm::DenseSet<Value> arenaValues;
  for (Operation *op : steps)
    for (Value r : op->getResults())
      arenaValues.insert(r);
  // Dependencies through (views of) results, and readers of each value.
  std::vector<SmallVector<size_t>> users(steps.size());
  std::vector<int> pending(steps.size(), 0);
  llvm::DenseMap<Value, int> readers;
  int64_t lastCollective = -1;
  for (auto [i, op] : llvm::enumerate(steps)) {
    llvm::SmallDenseSet<size_t> producers;
    for (Value operand : op->getOperands()) {
      Value r = exec::viewRoot(operand);
      ++readers[r];
      if (Operation *def = r.getDefiningOp(); def && index.count(def))
        producers.insert(index[def]);
    }
    // Collectives keep their order: ranks pair them up by it.
    if (dist::isCollectiveStep(op)) {
      if (lastCollective >= 0)
        producers.insert(static_cast<size_t>(lastCollective));
      lastCollective = static_cast<int64_t>(i);
    }
    for (size_t p : producers) {
      users[p].push_back(i);
      ++pending[i];
    }
  }
  for (Value v : ret.getOperands())
    ++readers[exec::viewRoot(v)];
  SmallVector<Operation *> order;
  std::vector<bool> done(steps.size(), false);
  llvm::DenseMap<Value, int> remaining = readers;
  for (size_t n = 0; n < steps.size(); ++n) {
    int64_t bestGain = INT64_MIN;
    size_t best = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (done[i] || pending[i] != 0)
        continue;
      int64_t gain = 0;
      llvm::SmallDenseSet<Value> counted;
      for (Value operand : steps[i]->getOperands()) {
        Value r = exec::viewRoot(operand);
        int uses = 0;
        for (Value o : steps[i]->getOperands())
          uses += exec::viewRoot(o) == r;
        if (arenaValues.contains(r) && remaining.lookup(r) == uses && counted.insert(r).second)
          gain += exec::bufferBytes(r.getType());
      }
      for (Value r : steps[i]->getResults())
        gain -= exec::bufferBytes(r.getType());
      if (gain > bestGain) {
        bestGain = gain;
        best = i;
      }
    }
    done[best] = true;
    order.push_back(steps[best]);
    for (Value operand : steps[best]->getOperands())
      --remaining[exec::viewRoot(operand)];
    for (size_t u : users[best])
      --pending[u];
  }
  // The return and the state updates read after every step.
  SmallVector<Value> endReads(ret.getOperands());
  for (auto store : block.getOps<ml_program::GlobalStoreOp>())
    endReads.push_back(store.getValue());
  if (peakBytes(order, endReads, arenaValues) >= peakBytes(steps, endReads, arenaValues))
    return;
  // Move the steps into the new order before the state updates (which the
  // plan runs after every step), then each view right after its source.
  SmallVector<ml_program::GlobalStoreOp> stores(block.getOps<ml_program::GlobalStoreOp>());
  for (ml_program::GlobalStoreOp store : stores)
    store->moveBefore(ret);
  Operation *end = stores.empty() ? ret.getOperation() : stores.front().getOperation();
  for (Operation *op : order)
    op->moveBefore(end);
  SmallVector<exec::ViewOp> views(block.getOps<exec::ViewOp>());
  for (exec::ViewOp view : views)
    if (Operation *def = view.getInput().getDefiningOp())
      view->moveAfter(def);
}

struct ScheduleForMemoryPass : impl::ScheduleForMemoryPassBase<ScheduleForMemoryPass> {
  void runOnOperation() override {
    if (!getOperation().isPrivate())
      scheduleForMemory(getOperation());
  }
};

} // namespace
} // namespace nncc
