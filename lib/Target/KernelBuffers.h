//===- KernelBuffers.h - the kernel module and running its pipelines -*- C++ -*-===//
//
// The kernels of an exec module are lowered apart from it: extractKernels
// copies the functions exec.launch runs into a kernel module, marked
// `nncc.kernel`, which the pipelines of lib/Target/Passes.h take to loops
// over buffers (buildKernelBufferizationPipeline) and then to host or GPU
// code. Both targets start from the bufferized kernels, so a kernel takes the
// same buffer arguments on every target and one plan serves them all.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_LIB_TARGET_KERNELBUFFERS_H
#define NNCC_LIB_TARGET_KERNELBUFFERS_H

#include "lib/Target/Plan.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <string>

namespace nncc {

/// The kernels exec.launch runs in `execModule`, copied in module order
/// into a new module, each marked `nncc.kernel`
/// and, where a launch lets the planner overwrite operands with its result
/// (exec.launch's inplace_operands), with those arguments and the result in
/// `nncc.may_alias`.
mlir::OwningOpRef<mlir::ModuleOp> extractKernels(mlir::ModuleOp execModule);

/// The names of the kernels of a kernel module, in module order.
llvm::SmallVector<std::string> kernelNames(mlir::ModuleOp kernels);

/// Per kernel, the bytes of its scratch buffers (`nncc.scratch_bytes`):
/// temporaries passed as extra trailing buffer arguments that the memory
/// planner places in the arena.
llvm::StringMap<llvm::SmallVector<int64_t>> kernelScratchBytes(mlir::ModuleOp kernels);

/// Records what code generation decided about each kernel on the function
/// of the same name in `execModule`, where the plan pipeline and the plan
/// translation read it: `nncc.scratch_bytes`, the host `nncc.parallel_extent`
/// and the `nncc.gpu_launches` ({name, grid, block} dictionaries).
void recordKernelFacts(mlir::ModuleOp execModule,
                       const llvm::StringMap<llvm::SmallVector<int64_t>> &scratchBytes,
                       const llvm::StringMap<int64_t> &parallelExtents,
                       const llvm::StringMap<llvm::SmallVector<GpuLaunch>> &gpuLaunches);

/// Runs the passes `build` adds on `module` under MLIR's pass-manager
/// command-line options; errors carry the diagnostics.
llvm::Error runPipeline(mlir::ModuleOp module, llvm::function_ref<void(mlir::OpPassManager &)> build,
                        llvm::StringRef what);

/// Collects error diagnostics while alive.
struct DiagnosticCollector {
  explicit DiagnosticCollector(mlir::MLIRContext *ctx);
  std::string text;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace nncc

#endif // NNCC_LIB_TARGET_KERNELBUFFERS_H
