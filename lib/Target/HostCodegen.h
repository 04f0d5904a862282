#ifndef NNCC_LIB_TARGET_HOSTCODEGEN_H
#define NNCC_LIB_TARGET_HOSTCODEGEN_H

#include "lib/Target/CpuTarget.h"
#include "lib/Target/KernelBuffers.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <string>

namespace nncc {

/// The kernels of a module in the LLVM dialect.
struct LoweredKernels {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// Per kernel, the extent of the loop the runtime may split across threads
  /// (0 when the kernel runs whole on one thread).
  llvm::StringMap<int64_t> parallelExtents;
};

/// Lowers bufferized kernels to the LLVM dialect for the host: vectorizable
/// math, the outermost parallel loop split into [begin, end) ranges, plus one
/// packed entry `nncc_<kernel>(void **args, int64_t begin, int64_t end)` per
/// kernel with the runtime's calling convention.
llvm::Expected<LoweredKernels> lowerKernelsToLLVM(BufferizedKernels kernels);

/// Translates an LLVM-dialect module to LLVM IR text (for --emit=llvm).
llvm::Expected<std::string> translateToLLVMIR(mlir::ModuleOp llvmModule);

/// Optimizes and compiles an LLVM-dialect module for `cpu` into an object
/// file at `path`.
llvm::Error emitHostObject(mlir::ModuleOp llvmModule, llvm::StringRef path, const CpuTarget &cpu);

} // namespace nncc

#endif // NNCC_LIB_TARGET_HOSTCODEGEN_H
