//===- CudaInfo.h - what the CUDA driver says about the machine -----------===//
//
// Behind the C ABI's nncc_cuda_* queries (nncc-info): versions, devices and
// the links between them.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_CUDA_CUDAINFO_H
#define NNCC_RUNTIME_CUDA_CUDAINFO_H

#include "../Status.h"

namespace nncc::rt {

Status queryCudaDriver(int32_t *version, const char **library);
/// Fills `out` up to out->struct_size bytes.
Status queryCudaDevice(int32_t index, nncc_cuda_device_info *out);
Status queryCudaPeer(int32_t from, int32_t to, nncc_cuda_peer_info *out);
/// `devices` reordered so that each `group_size` consecutive ones have the
/// fastest links between them (LinkGroups.h), into `out`.
Status groupCudaDevices(const int32_t *devices, int32_t count, int32_t groupSize, int32_t *out);
Status queryCublasLt(int64_t *version, const char **library);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CUDA_CUDAINFO_H
