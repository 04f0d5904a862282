/// Host kernels in the LLVM dialect (buildHostCodegenPipeline) to LLVM IR
/// and, with LLVM -O3 for the host CPU, object code.
#include "lib/Target/HostCodegen.h"
#include "lib/Support/Error.h"
#include "lib/Target/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;

namespace nncc {

llvm::StringMap<int64_t> parallelExtents(ModuleOp llvmModule) {
  llvm::StringMap<int64_t> extents;
  for (auto func : llvmModule.getOps<LLVM::LLVMFuncOp>())
    if (auto extent = func->getAttrOfType<IntegerAttr>(kParallelExtentAttrName))
      extents[func.getName()] = extent.getInt();
  return extents;
}

llvm::Expected<std::string> translateToLLVMIR(ModuleOp llvmModule) {
  registerBuiltinDialectTranslation(*llvmModule.getContext());
  registerLLVMDialectTranslation(*llvmModule.getContext());
  llvm::LLVMContext llvmContext;
  auto llvmIR = translateModuleToLLVMIR(llvmModule, llvmContext);
  if (!llvmIR)
    return fail("translation to LLVM IR failed");
  std::string text;
  llvm::raw_string_ostream os(text);
  llvmIR->print(os, nullptr);
  return text;
}

llvm::Error emitHostObject(ModuleOp llvmModule, llvm::StringRef path, const CpuTarget &cpu) {
  registerBuiltinDialectTranslation(*llvmModule.getContext());
  registerLLVMDialectTranslation(*llvmModule.getContext());
  llvm::LLVMContext llvmContext;
  auto llvmIR = translateModuleToLLVMIR(llvmModule, llvmContext);
  if (!llvmIR)
    return fail("translation to LLVM IR failed");

  auto created = createHostTargetMachine(cpu);
  if (!created)
    return created.takeError();
  std::unique_ptr<llvm::TargetMachine> machine = std::move(*created);
  llvmIR->setDataLayout(machine->createDataLayout());
  llvmIR->setTargetTriple(machine->getTargetTriple());

  auto optimize = makeOptimizingTransformer(3, 0, machine.get());
  if (auto err = optimize(llvmIR.get()))
    return err;

  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail("cannot write '" + path + "': " + ec.message());
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, out, nullptr, llvm::CodeGenFileType::ObjectFile))
    return fail("the host target cannot emit object files");
  codegen.run(*llvmIR);
  return llvm::Error::success();
}

} // namespace nncc
