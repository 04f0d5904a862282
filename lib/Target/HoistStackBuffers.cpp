/// Stack buffers allocated in kernel loops move to the kernel's entry.
#include "lib/Target/Passes.h"

namespace nncc {
#define GEN_PASS_DEF_HOISTSTACKBUFFERSPASS
#include "lib/Target/Passes.h.inc"
} // namespace nncc

using namespace mlir;

namespace nncc {
namespace {

struct HoistStackBuffersPass : impl::HoistStackBuffersPassBase<HoistStackBuffersPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!isKernel(func))
        continue;
      Block &entry = func.getBody().front();
      SmallVector<memref::AllocaOp> inLoops;
      func.walk([&](memref::AllocaOp alloca) {
        if (alloca->getBlock() != &entry && alloca.getType().hasStaticShape() && alloca->getNumOperands() == 0)
          inLoops.push_back(alloca);
      });
      for (memref::AllocaOp alloca : inLoops)
        alloca->moveBefore(&entry, entry.begin());
    }
  }
};

} // namespace
} // namespace nncc
