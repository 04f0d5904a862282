/// nncc-form-elementwise-groups: chains and DAGs of elementwise and
/// broadcasting ops of one result shape as single kernels.
#include "lib/Conversion/NNToExec/KernelBuilders.h"
#include "lib/Conversion/NNToExec/LinalgUtils.h"
#include "lib/Conversion/NNToExec/Outline.h"
#include "lib/Conversion/NNToExec/PassDetail.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace nncc {
#define GEN_PASS_DEF_FORMELEMENTWISEGROUPSPASS
#include "lib/Conversion/NNToExec/Passes.h.inc"

namespace {

/// True when `x` can join `group` (ops in block order): every value the
/// group and `x` define that an op outside them reads is read after `x`,
/// where the fused kernel will run.
bool canJoin(ArrayRef<Operation *> group, Operation *x) {
  auto inGroup = [&](Operation *op) { return op == x || llvm::is_contained(group, op); };
  for (Operation *op : llvm::concat<Operation *const>(group, ArrayRef<Operation *>(x)))
    for (Value v : op->getResults())
      for (Operation *user : v.getUsers())
        if (!inGroup(user) && user->getBlock() == x->getBlock() && !x->isBeforeInBlock(user))
          return false;
  return true;
}

/// Outlines a group of fusible elementwise ops of one shape into one kernel:
/// a single linalg.generic reading the group's outside operands through
/// broadcast maps and writing every value used outside the group.
LogicalResult outlineGroup(ArrayRef<Operation *> group, SymbolTable &symbols) {
  llvm::SmallPtrSet<Operation *, 8> members(group.begin(), group.end());
  SmallVector<Value> inputs, outputs;
  for (Operation *op : group)
    for (Value operand : op->getOperands())
      if ((!operand.getDefiningOp() || !members.count(operand.getDefiningOp())) &&
          !llvm::is_contained(inputs, operand))
        inputs.push_back(operand);
  for (Operation *op : group)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *u) { return !members.count(u); }))
        outputs.push_back(r);
  SmallVector<Type> outputTypes;
  SmallVector<Location> locs;
  for (Value v : outputs)
    outputTypes.push_back(v.getType());
  for (Operation *op : group)
    locs.push_back(op->getLoc());
  Operation *last = group.back();
  auto shape = cast<RankedTensorType>(last->getResult(0).getType()).getShape();
  // The launch carries every fused node's name.
  Location fusedLoc = FusedLoc::get(last->getContext(), locs);
  last->setLoc(fusedLoc);
  std::string suffix = "fused_" + group.front()->getName().stripDialect().str() + "_" +
                       std::to_string(group.size());
  auto launch = outlineKernel(
      last, symbols, suffix, inputs, outputTypes,
      [&](OpBuilder &kb, ValueRange args, ValueRange inits) -> FailureOr<SmallVector<Value>> {
        MLIRContext *ctx = kb.getContext();
        SmallVector<AffineMap> maps;
        for (Value a : args)
          maps.push_back(broadcastMap(ctx, cast<RankedTensorType>(a.getType()).getShape(), shape));
        for (size_t i = 0; i < inits.size(); ++i)
          maps.push_back(kb.getMultiDimIdentityMap(shape.size()));
        SmallVector<utils::IteratorType> it(shape.size(), utils::IteratorType::parallel);
        bool ok = true;
        auto results = generic(kb, fusedLoc, args, inits, maps, it,
                               [&](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
                                 IRMapping scalars;
                                 for (auto [v, scalar] : llvm::zip(inputs, s.take_front(inputs.size())))
                                   scalars.map(v, scalar);
                                 for (Operation *op : group) {
                                   SmallVector<Value> operands;
                                   for (Value o : op->getOperands())
                                     operands.push_back(scalars.lookup(o));
                                   auto v = buildElementwiseScalar(nb, op->getLoc(), op, operands);
                                   if (failed(v)) {
                                     ok = false;
                                     v = operands.front();
                                   }
                                   scalars.map(op->getResult(0), *v);
                                 }
                                 SmallVector<Value> yielded;
                                 for (Value out : outputs)
                                   yielded.push_back(scalars.lookup(out));
                                 return yielded;
                               });
        if (!ok)
          return failure();
        return results;
      });
  if (failed(launch))
    return failure();
  for (auto [out, result] : llvm::zip(outputs, launch->getResults()))
    out.replaceUsesWithIf(result, [&](OpOperand &use) { return !members.count(use.getOwner()); });
  for (Operation *op : llvm::reverse(group))
    op->erase();
  return success();
}

/// Fuses chains and DAGs of elementwise and broadcasting ops of one result
/// shape into single kernels (each intermediate stays in registers).
LogicalResult formElementwiseGroups(func::FuncOp func, SymbolTable &symbols) {
  llvm::DenseMap<Operation *, size_t> groupOf;
  std::vector<SmallVector<Operation *>> groups;
  for (Operation &opRef : func.getBody().front()) {
    Operation *op = &opRef;
    if (!isFusibleElementwise(op) || !hasStaticShapes(op) ||
        cast<RankedTensorType>(op->getResult(0).getType()).getNumElements() == 0)
      continue;
    auto shape = cast<RankedTensorType>(op->getResult(0).getType()).getShape();
    std::optional<size_t> chosen;
    const char *whyNot = nullptr;
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || !groupOf.count(def))
        continue;
      size_t g = groupOf[def];
      auto groupShape = cast<RankedTensorType>(groups[g].front()->getResult(0).getType()).getShape();
      if (groupShape != shape) {
        whyNot = "its producer's group has another result shape";
      } else if (!canJoin(groups[g], op)) {
        whyNot = "an op outside the group reads the group's values before it";
      } else {
        chosen = g;
        break;
      }
    }
    if (whyNot && !chosen)
      remark::missed(op->getLoc(), fusionRemark("elementwise-group", func)) << remark::reason("{0}", whyNot);
    if (!chosen) {
      chosen = groups.size();
      groups.emplace_back();
    }
    groups[*chosen].push_back(op);
    groupOf[op] = *chosen;
  }
  for (auto &group : groups) {
    if (group.size() < 2)
      continue;
    remark::passed(group.back()->getLoc(), fusionRemark("elementwise-group", func))
        << remark::reason("{0} ops in one kernel", group.size());
    if (failed(outlineGroup(group, symbols)))
      return failure();
  }
  return success();
}

struct FormElementwiseGroupsPass : impl::FormElementwiseGroupsPassBase<FormElementwiseGroupsPass> {
  void runOnOperation() override {
    SymbolTable symbols(getOperation());
    for (func::FuncOp func : entryFunctions(getOperation()))
      if (failed(formElementwiseGroups(func, symbols)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace nncc
