//===- GpuCodegen.h - kernels to PTX (and cubins) for NVIDIA GPUs -*- C++ -*-===//
//
// The thread mapping is nncc-map-kernels-to-gpu (lib/Target/Passes.td); this
// runs the GPU pipeline on a kernel module and collects its launches and
// images for the plan.
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

/// Lowers a copy of bufferized kernels (buildKernelBufferizationPipeline)
/// to PTX for each architecture in `archs` ("sm_80", "sm_90") with
/// buildGpuCodegenPipeline, refuses kernels that call the device heap, and
/// assembles cubins with ptxas when it is found.
llvm::Expected<GpuKernels> lowerKernelsToGpu(mlir::ModuleOp kernels, llvm::ArrayRef<std::string> archs);

/// The ptxas to assemble with: $NNCC_PTXAS, else `ptxas` on PATH, else
/// /usr/local/cuda/bin/ptxas; empty when there is none.
std::string findPtxas();

} // namespace nncc

#endif // NNCC_LIB_TARGET_GPUCODEGEN_H
