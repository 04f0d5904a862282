#ifndef NNCC_LIB_TARGET_HOSTCODEGEN_H
#define NNCC_LIB_TARGET_HOSTCODEGEN_H

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
  /// Per kernel, the sizes of its scratch buffers: temporaries the kernel
  /// would otherwise allocate on every run, passed as extra trailing buffer
  /// arguments that the memory planner places in the arena.
  llvm::StringMap<llvm::SmallVector<int64_t>> scratchBytes;
};

/// Lowers the kernel functions of an exec-level module (every private
/// `func.func`) to the LLVM dialect: bufferization, parallel loops, LLVM,
/// plus one packed entry `nncc_<kernel>(void **args, int64_t begin, int64_t
/// end)` per kernel with the runtime's calling convention.
llvm::Expected<LoweredKernels> lowerKernelsToLLVM(mlir::ModuleOp execModule);

/// Translates an LLVM-dialect module to LLVM IR text (for --emit=llvm).
llvm::Expected<std::string> translateToLLVMIR(mlir::ModuleOp llvmModule);

/// Optimizes and compiles an LLVM-dialect module for the host CPU into an
/// object file at `path`.
llvm::Error emitHostObject(mlir::ModuleOp llvmModule, llvm::StringRef path);

} // namespace nncc

#endif // NNCC_LIB_TARGET_HOSTCODEGEN_H
