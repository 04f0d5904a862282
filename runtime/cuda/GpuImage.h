//===- GpuImage.h - which of a module's GPU images a device runs ----------===//
//
// A module carries one image per architecture (PTX, plus a cubin when ptxas
// was present). For a device of compute capability X.Y the runtime tries, in
// order: a cubin built for exactly sm_XY, then the PTX of every image not
// newer than the device, newest first (the driver JITs it; an older PTX is
// the fallback when the driver cannot read a newer PTX ISA). Pure logic, no
// driver: unit-tested without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_CUDA_GPUIMAGE_H
#define NNCC_RUNTIME_CUDA_GPUIMAGE_H

#include "../Status.h"
#include "nncc/module_abi.h"

#include <vector>

namespace nncc::rt {

struct GpuCodeChoice {
  const nncc_gpu_image *image;
  bool cubin; // load image->cubin, else image->ptx
};

/// The code to try for a device of compute capability major.minor, best
/// first; an UNAVAILABLE error naming the device's and the module's
/// architectures when nothing fits.
Status chooseGpuCode(const nncc_module &module, int major, int minor,
                     std::vector<GpuCodeChoice> *out);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CUDA_GPUIMAGE_H
