//===- Passes.h - kernel bufferization and code generation passes -*- C++ -*-===//
//
// The steps from exec-level kernels (linalg on tensors) to host and GPU code,
// each a pass on a kernel module (lib/Target/Passes.td), and the pipelines
// that run them in order.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_LIB_TARGET_PASSES_H
#define NNCC_LIB_TARGET_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace nncc {

/// Unit attribute marking a function of a kernel module as a kernel (on
/// func.func, and on the llvm.func it lowers to).
constexpr llvm::StringLiteral kKernelAttrName = "nncc.kernel";
/// i64 array on a kernel: the arguments that may share a buffer with another
/// one (an in-place launch's operands and result); every other argument is a
/// buffer of its own.
constexpr llvm::StringLiteral kMayAliasAttrName = "nncc.may_alias";
/// i64 array on a kernel: the bytes of each trailing scratch argument.
constexpr llvm::StringLiteral kScratchBytesAttrName = "nncc.scratch_bytes";
/// i64 on a host kernel: the extent of the loop the runtime may split across
/// threads (0 when the kernel runs whole on one thread).
constexpr llvm::StringLiteral kParallelExtentAttrName = "nncc.parallel_extent";
/// Array of dictionaries {name, grid, block} on a kernel declaration: its GPU
/// launches in order.
constexpr llvm::StringLiteral kGpuLaunchesAttrName = "nncc.gpu_launches";

/// Whether `op` is a kernel (a function marked `nncc.kernel` with a body).
bool isKernel(mlir::Operation *op);

#define GEN_PASS_DECL
#include "lib/Target/Passes.h.inc"

/// Tensors to loops over static, identity-layout buffers: one-shot
/// bufferization of the kernels, copies as loops, temporaries as scratch
/// arguments, linalg as scf loops (scf.parallel for parallel dims). Both
/// targets start from its result, so a kernel takes the same buffer
/// arguments on every target and one plan serves them all.
void buildKernelBufferizationPipeline(mlir::OpPassManager &pm);

/// Bufferized kernels to the LLVM dialect for the host: bf16 emulated in
/// f32, vectorizable math, the outer parallel loop split into [begin, end)
/// ranges, the upstream LLVM lowering with bare-pointer arguments, and a
/// packed entry per kernel.
void buildHostCodegenPipeline(mlir::OpPassManager &pm);

struct GpuCodegenOptions {
  /// The architectures to compile for ("sm_80", "sm_90"): one PTX object each.
  std::vector<std::string> archs;
  /// The CUDA toolkit whose libdevice (the GPU math library: expf, erff...)
  /// is linked; empty: MLIR's default ($CUDA_ROOT, $CUDA_HOME, $CUDA_PATH).
  std::string toolkit;
};

/// Bufferized kernels to GPU code: the thread mapping, then MLIR's NVVM
/// lowering, one NVVM target per architecture, and the gpu.module serialized
/// to PTX (a `gpu.binary` with one object per architecture).
void buildGpuCodegenPipeline(mlir::OpPassManager &pm, const GpuCodegenOptions &options);

/// Registers the passes above and the pipelines `nncc-bufferize-kernels`,
/// `nncc-host-codegen` and `nncc-gpu-codegen` (for nncc-opt).
void registerTargetPasses();

#define GEN_PASS_REGISTRATION
#include "lib/Target/Passes.h.inc"

} // namespace nncc

#endif // NNCC_LIB_TARGET_PASSES_H
