//===- Device.h - the device layer behind a session -----------------------===//
//
// A session checks the caller's tensors against the signature (the same on
// every device) and hands the run to a DeviceSession, which owns the device
// memory and executes the plan. cpu/ implements it now; cuda/ slots in behind
// the same interface (createDeviceSession dispatches on the device kind).
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_DEVICE_H
#define NNCC_RUNTIME_DEVICE_H

#include "Module.h"
#include "Status.h"
#include "dist/Communicator.h"
#include "dist/Groups.h"

#include <memory>
#include <string>

namespace nncc::rt {

class Profiler;

struct DeviceSpec {
  enum Kind { Cpu, Cuda } kind = Cpu;
  int index = 0;
  /// Canonical form: "cpu", "cuda:0".
  std::string str() const { return kind == Cpu ? "cpu" : "cuda:" + std::to_string(index); }
};

/// Parses "cpu" or "cuda:N" ("cuda" means cuda:0).
Status parseDevice(const char *text, DeviceSpec *out);

struct SessionConfig {
  int threads = 1; // resolved: >= 1
  /// CUDA: the caller's CUstream each run waits for (nncc_session_options.cuda_stream).
  void *cudaStream = nullptr;
  /// The session's world (never null: a SelfCommunicator for a world of
  /// one) and its parallel groups, which collective steps run over
  /// (NNCC_COLLECTIVE_GROUP).
  std::shared_ptr<Communicator> communicator;
  ParallelGroups groups;
  /// The module's plan for the device's kind (never null).
  const nncc_plan *plan = nullptr;
};

/// One session's state on one device.
class DeviceSession {
public:
  virtual ~DeviceSession() = default;
  /// Bytes of device memory held (the arena and the module state it holds);
  /// constant after creation.
  virtual int64_t allocatedBytes() const = 0;
  virtual int threads() const = 0;
  /// Runs entry `entry`. inputs[i]/outputs[i] point to the i-th input/output
  /// of the entry, already checked against its signature. With a profiler,
  /// every executed step is timed and recorded (Profiler::recordStep); without
  /// one the step loop must not pay for profiling.
  virtual Status run(int32_t entry, const void *const *inputs, void *const *outputs,
                     Profiler *profiler) = 0;
  /// Copies module state `i` (nncc_state.bytes: one part of a sharded
  /// state) to `dst` / from `src`, host memory, between runs. A device
  /// session starts a sharded state zero-filled; the Session writes its part.
  /// With pipeline parallelism a device session allocates only the states
  /// of its stage and of every stage (holdsState, StepArgs.h); `i` must be
  /// one of them (the Session asks for no other).
  virtual Status readState(int32_t i, void *dst) = 0;
  virtual Status writeState(int32_t i, const void *src) = 0;
};

/// The error of a run after which check flags are set (flags[c] is the int32
/// of entry.checks[c], read back after the run), naming each failed check;
/// ok when none is.
Status failedChecks(const nncc_entry &entry, const int32_t *flags);

/// Creates the device half of a session, or says why the device cannot run
/// this module (unavailable device, kernels without code for it...).
Status createDeviceSession(const Module &module, const DeviceSpec &device,
                           const SessionConfig &config, std::unique_ptr<DeviceSession> *out);

/// Devices of a kind this build and machine offer.
int deviceCount(DeviceSpec::Kind kind);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_DEVICE_H
