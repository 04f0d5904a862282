/// Small static allocations inside kernel loops on the stack.
#include "lib/Target/Passes.h"

#include "dialects/Exec/ExecUtils.h"

namespace nncc {
#define GEN_PASS_DEF_STACKALLOCATEINLOOPSPASS
#include "lib/Target/Passes.h.inc"
} // namespace nncc

using namespace mlir;

namespace nncc {
namespace {

/// Larger buffers would risk the stack (a GPU thread's especially).
constexpr int64_t kMaxStackBytes = 16384;

struct StackAllocateInLoopsPass : impl::StackAllocateInLoopsPassBase<StackAllocateInLoopsPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!isKernel(func))
        continue;
      func.walk([&](memref::AllocOp alloc) {
        MemRefType type = alloc.getType();
        if (isa<func::FuncOp>(alloc->getParentOp()) || !type.hasStaticShape() ||
            exec::bufferBytes(type) > kMaxStackBytes)
          return;
        allocs.push_back(alloc);
      });
    }
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
};

} // namespace
} // namespace nncc
