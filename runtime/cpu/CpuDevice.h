//===- CpuDevice.h - running a plan on the host ---------------------------===//
#ifndef NNCC_RUNTIME_CPU_CPUDEVICE_H
#define NNCC_RUNTIME_CPU_CPUDEVICE_H

#include "../Device.h"

namespace nncc::rt {

/// A CPU session: one 64-byte aligned arena (the largest entry's
/// arena_bytes), a thread pool of config.threads, and every step's argument
/// pointers resolved once so a run only patches inputs and outputs.
Status createCpuSession(const Module &module, const SessionConfig &config,
                        std::unique_ptr<DeviceSession> *out);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CPU_CPUDEVICE_H
