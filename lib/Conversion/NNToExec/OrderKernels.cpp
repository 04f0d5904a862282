/// nncc-order-kernels: kernels in schedule order at the module's end.
#include "lib/Conversion/NNToExec/Outline.h"
#include "lib/Conversion/NNToExec/PassDetail.h"

using namespace mlir;

namespace nncc {
#define GEN_PASS_DEF_ORDERKERNELSPASS
#include "lib/Conversion/NNToExec/Passes.h.inc"

namespace {

/// Moves the kernels to the end of the module in the order of their first
/// launch, so kernels read in schedule order whichever fusion built them.
void orderKernelsBySchedule(ModuleOp module) {
  llvm::SmallPtrSet<Operation *, 32> moved;
  for (func::FuncOp entry : entryFunctions(module))
    entry.walk([&](exec::LaunchOp launch) {
      auto kernel = module.lookupSymbol<func::FuncOp>(launch.getKernel());
      if (kernel && moved.insert(kernel).second)
        kernel->moveBefore(module.getBody(), module.getBody()->end());
    });
}

struct OrderKernelsPass : impl::OrderKernelsPassBase<OrderKernelsPass> {
  void runOnOperation() override { orderKernelsBySchedule(getOperation()); }
};

} // namespace
} // namespace nncc
