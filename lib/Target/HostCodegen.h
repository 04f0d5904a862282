#ifndef NNCC_LIB_TARGET_HOSTCODEGEN_H
#define NNCC_LIB_TARGET_HOSTCODEGEN_H

#include "lib/Target/CpuTarget.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <string>

namespace nncc {

/// Per kernel of a module lowered by buildHostCodegenPipeline, the extent
/// of the loop the runtime may split across threads (0 when the kernel runs
/// whole on one thread).
llvm::StringMap<int64_t> parallelExtents(mlir::ModuleOp llvmModule);

/// Translates an LLVM-dialect module to LLVM IR text (for --emit=llvm).
llvm::Expected<std::string> translateToLLVMIR(mlir::ModuleOp llvmModule);

/// Optimizes and compiles an LLVM-dialect module for `cpu` into an object
/// file at `path`.
llvm::Error emitHostObject(mlir::ModuleOp llvmModule, llvm::StringRef path, const CpuTarget &cpu);

} // namespace nncc

#endif // NNCC_LIB_TARGET_HOSTCODEGEN_H
