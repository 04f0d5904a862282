//===- CudaDevice.h - running a plan on an NVIDIA GPU ---------------------===//
#ifndef NNCC_RUNTIME_CUDA_CUDADEVICE_H
#define NNCC_RUNTIME_CUDA_CUDADEVICE_H

#include "../Device.h"

namespace nncc::rt {

/// A session on cuda:index: one cuMemAlloc arena (scratch, staging for host
/// inputs and outputs, the cuBLASLt workspace), a stream, the module's code
/// and weights shared per device, and each entry captured into a CUDA Graph
/// on its second run (the first is eager) and replayed after. Errors name the
/// device, the call and the step.
/// Each run first waits on the device for the work queued on
/// config.cudaStream (the legacy default stream when null). Collective steps
/// run over NCCL on the session's stream, with the NCCL communicator of
/// config.communicator's rank on this GPU (NcclCommunicator.h).
Status createCudaSession(const Module &module, int index, const SessionConfig &config,
                         std::unique_ptr<DeviceSession> *out);

/// Devices the CUDA driver reports; 0 without a driver or GPU.
int cudaDeviceCount();

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CUDA_CUDADEVICE_H
