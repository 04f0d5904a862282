/// Host kernels take a [begin, end) range of their outer parallel loop.
#include "lib/Target/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace nncc {
#define GEN_PASS_DEF_ADDPARALLELRANGEPASS
#include "lib/Target/Passes.h.inc"
} // namespace nncc

using namespace mlir;

namespace nncc {
namespace {

/// Kernels whose parallel loop runs fewer innermost iterations than this in
/// all run on one thread: splitting them costs more than it saves.
constexpr int64_t kMinParallelWork = 16384;

/// Trip count of a loop with constant bounds (1 when they are not constant).
int64_t tripCount(Value lb, Value ub, Value step) {
  auto l = getConstantIntValue(lb), u = getConstantIntValue(ub), s = getConstantIntValue(step);
  return l && u && s && *s > 0 && *u > *l ? (*u - *l + *s - 1) / *s : 1;
}

/// Iterations of the innermost loops one iteration of `block` runs (the
/// longest nest): a row kernel's per-row work, for the split threshold. A
/// vector operation counts its lanes, so a direct convolution's tile (taps
/// unrolled into vector FMAs) weighs what it computes.
int64_t innerIterations(Block &block) {
  int64_t most = 1, lanes = 0;
  for (Operation &op : block)
    if (auto fma = dyn_cast<vector::FMAOp>(op))
      lanes += fma.getType().getNumElements();
  most = std::max(most, lanes);
  for (Operation &op : block) {
    int64_t trips = 1;
    if (auto loop = dyn_cast<scf::ForOp>(op))
      trips = tripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
    else if (auto loop = dyn_cast<scf::ParallelOp>(op))
      for (auto [lb, ub, step] : llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
        trips *= tripCount(lb, ub, step);
    for (Region &region : op.getRegions())
      for (Block &inner : region)
        most = std::max(most, trips * innerIterations(inner));
  }
  return most;
}

/// The extent of `func`'s loop split into [begin, end), after restricting
/// it; 0 when the body is not one splittable loop.
int64_t splitOuterLoop(func::FuncOp func, Value begin, Value end) {
  Block &body = func.getBody().front();
  SmallVector<scf::ParallelOp> loops;
  for (Operation &op : body) {
    if (auto loop = dyn_cast<scf::ParallelOp>(op))
      loops.push_back(loop);
    else if (!isa<arith::ConstantOp, func::ReturnOp>(op))
      return 0;
  }
  if (loops.size() != 1)
    return 0;
  scf::ParallelOp loop = loops.front();
  auto lb = getConstantIntValue(loop.getLowerBound()[0]);
  auto step = getConstantIntValue(loop.getStep()[0]);
  int64_t work = 1;
  for (Value ub : loop.getUpperBound()) {
    auto c = getConstantIntValue(ub);
    if (!c)
      return 0;
    work *= *c;
  }
  // Row kernels loop over each row's elements inside the parallel loop.
  work *= innerIterations(*loop.getBody());
  auto extent = getConstantIntValue(loop.getUpperBound()[0]);
  if (!lb || *lb != 0 || !step || *step != 1 || !extent || *extent < 2 || work < kMinParallelWork)
    return 0;
  loop.getLowerBoundMutable()[0].assign(begin);
  loop.getUpperBoundMutable()[0].assign(end);
  return *extent;
}

struct AddParallelRangePass : impl::AddParallelRangePassBase<AddParallelRangePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!isKernel(func))
        continue;
      auto indexType = IndexType::get(func.getContext());
      unsigned n = func.getNumArguments();
      (void)func.insertArgument(n, indexType, {}, func.getLoc());
      (void)func.insertArgument(n + 1, indexType, {}, func.getLoc());
      Block &body = func.getBody().front();
      int64_t extent = splitOuterLoop(func, body.getArgument(n), body.getArgument(n + 1));
      func->setAttr(kParallelExtentAttrName, IntegerAttr::get(IntegerType::get(func.getContext(), 64), extent));
    }
  }
};

} // namespace
} // namespace nncc
