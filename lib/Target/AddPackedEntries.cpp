/// noalias kernel pointers and one packed-argument entry per kernel.
#include "lib/Target/Passes.h"

namespace nncc {
#define GEN_PASS_DEF_ADDPACKEDENTRIESPASS
#include "lib/Target/Passes.h.inc"
} // namespace nncc

using namespace mlir;

namespace nncc {
namespace {

/// Adds `nncc_<name>(ptr args, i64 begin, i64 end)` calling `kernel` with the
/// pointers args[0..n) and the range.
void addPackedEntry(OpBuilder &b, LLVM::LLVMFuncOp kernel) {
  MLIRContext *ctx = b.getContext();
  Location loc = kernel.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr, i64, i64});
  auto entry = LLVM::LLVMFuncOp::create(b, loc, ("nncc_" + kernel.getName()).str(), type);
  Block *body = entry.addEntryBlock(b);
  OpBuilder eb = OpBuilder::atBlockBegin(body);
  SmallVector<Value> args;
  unsigned numBuffers = kernel.getNumArguments() - 2;
  for (unsigned i = 0; i < numBuffers; ++i) {
    Value slot = LLVM::GEPOp::create(eb, loc, ptr, ptr, body->getArgument(0),
                                     ArrayRef<LLVM::GEPArg>{(int32_t)i});
    args.push_back(LLVM::LoadOp::create(eb, loc, ptr, slot));
  }
  args.push_back(body->getArgument(1));
  args.push_back(body->getArgument(2));
  LLVM::CallOp::create(eb, loc, kernel, args);
  LLVM::ReturnOp::create(eb, loc, ValueRange{});
}

struct AddPackedEntriesPass : impl::AddPackedEntriesPassBase<AddPackedEntriesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> kernels;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (isKernel(func))
        kernels.push_back(func);
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    for (LLVM::LLVMFuncOp kernel : kernels) {
      if (kernel.getFunctionType().getReturnType() != LLVM::LLVMVoidType::get(&getContext())) {
        kernel.emitError("kernel '") << kernel.getName() << "' still returns a value after bufferization";
        return signalPassFailure();
      }
      // The trailing (begin, end) range of nncc-add-parallel-range.
      unsigned n = kernel.getNumArguments();
      if (n < 2 || !kernel.getArgument(n - 1).getType().isInteger(64) ||
          !kernel.getArgument(n - 2).getType().isInteger(64)) {
        kernel.emitError("kernel '") << kernel.getName() << "' has no trailing (begin, end) range";
        return signalPassFailure();
      }
      for (unsigned i = 0; i < n; ++i)
        if (isa<LLVM::LLVMPointerType>(kernel.getArgument(i).getType()))
          kernel.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(), b.getUnitAttr());
      addPackedEntry(b, kernel);
    }
  }
};

} // namespace
} // namespace nncc
