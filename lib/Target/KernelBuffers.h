//===- KernelBuffers.h - kernels as loops over static buffers ---*- C++ -*-===//
//
// The target-independent half of kernel code generation: the exec module's
// kernel functions (linalg on tensors) bufferized, their temporaries turned
// into arena scratch arguments, their linalg ops turned into scf loops. Both
// the host (HostCodegen) and the GPU (GpuCodegen) lowering start from this,
// so a kernel takes the same buffer arguments on every target and one plan
// serves them all.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_LIB_TARGET_KERNELBUFFERS_H
#define NNCC_LIB_TARGET_KERNELBUFFERS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <string>

namespace nncc {

struct BufferizedKernels {
  /// One func.func per kernel on static, identity-layout memrefs, bodies in
  /// scf loops (scf.parallel for parallel dims).
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// Kernel names in the order of the exec module.
  llvm::SmallVector<std::string> names;
  /// Per kernel, the sizes of its scratch buffers: temporaries the kernel
  /// would otherwise allocate on every run, passed as extra trailing buffer
  /// arguments that the memory planner places in the arena.
  llvm::StringMap<llvm::SmallVector<int64_t>> scratchBytes;
  /// Per kernel, the arguments that may share a buffer with another one:
  /// the operands a launch lets the planner overwrite with its result
  /// (exec.launch's inplace_operands), and that result. Every other argument
  /// is a buffer of its own.
  llvm::StringMap<llvm::SmallVector<unsigned>> mayAlias;
};

/// Bufferizes the kernel functions of an exec-level module (every private
/// `func.func`) and lowers them to loops.
llvm::Expected<BufferizedKernels> bufferizeKernels(mlir::ModuleOp execModule);

/// Runs a textual pass pipeline on `module`; errors carry the diagnostics.
llvm::Error runPipeline(mlir::ModuleOp module, llvm::StringRef pipeline, llvm::StringRef what);

/// Collects error diagnostics while alive.
struct DiagnosticCollector {
  explicit DiagnosticCollector(mlir::MLIRContext *ctx);
  std::string text;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace nncc

#endif // NNCC_LIB_TARGET_KERNELBUFFERS_H
