//===- GpuCodegen.h - kernels to PTX (and cubins) for NVIDIA GPUs -*- C++ -*-===//
//
// Each top-level loop nest of a bufferized kernel becomes one GPU function:
// a parallel nest runs one thread per iteration (all parallel dims collapsed
// into one linear index, the innermost dim fastest, so neighbouring threads
// touch neighbouring elements), anything else runs on one thread. Every
// function takes the kernel's buffers as bare device pointers, so the plan's
// step arguments are the same as on the host.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_LIB_TARGET_GPUCODEGEN_H
#define NNCC_LIB_TARGET_GPUCODEGEN_H

#include "lib/Target/KernelBuffers.h"
#include "lib/Target/Plan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nncc {

struct GpuKernels {
  /// Per kernel, its launches in order.
  llvm::StringMap<llvm::SmallVector<GpuLaunch>> launches;
  std::vector<GpuImage> images;
};

/// Lowers bufferized kernels to PTX for each architecture in `archs`
/// ("sm_80", "sm_90"), assembled with ptxas into cubins when it is found.
llvm::Expected<GpuKernels> lowerKernelsToGpu(const BufferizedKernels &kernels,
                                             llvm::ArrayRef<std::string> archs);

/// The same kernels as host functions that run each GPU launch's threads
/// one after another, in thread order: the GPU mapping, testable on a CPU.
llvm::Expected<BufferizedKernels> emulateGpuMapping(const BufferizedKernels &kernels);

/// The ptxas to assemble with: $NNCC_PTXAS, else `ptxas` on PATH, else
/// /usr/local/cuda/bin/ptxas; empty when there is none.
std::string findPtxas();

} // namespace nncc

#endif // NNCC_LIB_TARGET_GPUCODEGEN_H
