/// Kernel temporaries become trailing scratch arguments.
#include "lib/Target/Passes.h"

#include "dialects/Exec/ExecUtils.h"

namespace nncc {
#define GEN_PASS_DEF_HOISTSCRATCHPASS
#include "lib/Target/Passes.h.inc"
} // namespace nncc

using namespace mlir;

namespace nncc {
namespace {

/// Turns each statically shaped allocation at the top of `func` into a new
/// trailing argument and records the bytes of each.
void hoistScratch(func::FuncOp func) {
  SmallVector<int64_t> sizes;
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
    sizes.push_back(exec::bufferBytes(type));
  }
  if (!sizes.empty())
    func->setAttr(kScratchBytesAttrName, DenseI64ArrayAttr::get(func.getContext(), sizes));
}

struct HoistScratchPass : impl::HoistScratchPassBase<HoistScratchPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (isKernel(func))
        hoistScratch(func);
  }
};

} // namespace
} // namespace nncc
