//===- Session.h - a module opened on a device ----------------------------===//
//
// The device-independent half of a session: it holds a module reference,
// checks every run's tensors against the entry's signature, allocates the
// outputs a caller asks the runtime for, and hands the run to its
// DeviceSession. Any number of threads may call it: runs (and the profiler
// calls) are serialized by one mutex, since the arena, the per-run scratch and
// the device session hold one run's state.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_SESSION_H
#define NNCC_RUNTIME_SESSION_H

#include "Device.h"
#include "Profiler.h"

#include <mutex>

namespace nncc::rt {

class Session {
public:
  static Status create(Module *module, const char *device, const nncc_session_options *options,
                       Session **out);
  ~Session();

  const std::string &deviceName() const { return deviceName_; }
  int64_t allocatedBytes() const { return device_->allocatedBytes(); }
  int threads() const { return device_->threads(); }

  Status run(const char *entry, const nncc_tensor *inputs, int32_t numInputs,
             nncc_tensor *outputs, int32_t numOutputs);

  /// Copies the session's value of module state `name` to `data` (`bytes`
  /// must be its size), or sets it from `data`; between runs. Both take the
  /// whole tensor (Module::stateDesc): reading a sharded state gathers its
  /// parts over the tensor group, a collective every rank of the group
  /// makes in the same order; writing keeps this rank's part. Reading a
  /// state of one pipeline stage q (nncc_state.pipeline_stage) gives stage
  /// q's value on every rank: a broadcast over the pipeline group from
  /// stage q, again collective; a rank of another stage, which does not
  /// hold the state (holds), receives it straight into `data`. Writing it
  /// sets stage q's copy; other stages accept and drop the value.
  Status readState(const char *name, void *data, int64_t bytes);
  Status writeState(const char *name, const void *data, int64_t bytes);

  /// The session's profiler, or nullptr when it does not profile.
  const Profiler *profiler() const { return profiler_.get(); }
  /// Turns the profiler on or off between runs (it must exist).
  void setProfiling(bool on);
  /// Profiler::stats of entry `entry` (Module::entry: this session's
  /// variant), taken between runs (the profiler must exist).
  Profiler::Stat profileStats(int32_t entry, int32_t step) const;
  const Module &module() const { return *module_; }
  /// The module's plan for this session's device kind.
  const nncc_plan &plan() const { return *plan_; }
  /// The pipeline stage of this session's rank, whose variant of each
  /// entry it runs (0 without pipeline parallelism).
  int32_t stage() const { return groups_.p; }
  /// Whether this session holds (allocated) module state `i`: with pipeline
  /// parallelism, only its own stage's states and those of every stage
  /// (holdsState); every state otherwise.
  bool holds(int32_t i) const;
  /// Bytes of the module states this session holds (nncc_state.bytes: a
  /// sharded state's part), within allocatedBytes().
  int64_t stateBytes() const;
  /// The plan index of this session's variant of entry `e` (Module::entry).
  int32_t planEntry(int32_t e) const { return module_->planEntry(e, groups_.p); }

private:
  Session() = default;
  /// The index of state `name`, checking that `bytes` is its size.
  Status stateIndex(const char *name, int64_t bytes, int32_t *index) const;
  /// Reads state `i` whole: gathers a sharded state's parts.
  Status readWhole(int32_t i, void *data);
  /// Sets sharded state `i` to this rank's part of `whole`.
  Status writePart(int32_t i, const void *whole);
  Status bind(const char *what, const nncc_entry &entry, int32_t count,
              const nncc_tensor_desc *descs, const nncc_tensor *given, int32_t numGiven,
              int32_t *slotOf);

  /// Held for a whole run: one run at a time uses the state below.
  mutable std::mutex mutex_;
  Module *module_ = nullptr;
  const nncc_plan *plan_ = nullptr;
  std::string deviceName_;
  std::unique_ptr<DeviceSession> device_;
  ParallelGroups groups_;
  std::vector<uint8_t> part_; // one part of a sharded state, between the device and a whole tensor
  std::unique_ptr<Profiler> profiler_; // finished before device_ and module_ go
  // Per-run scratch, sized at creation for the largest entry, so a run
  // allocates nothing.
  std::vector<const void *> inputPtrs_;
  std::vector<void *> outputPtrs_;
  std::vector<int32_t> inputSlot_, outputSlot_; // signature index -> given index
};

/// Allocation behind runtime-allocated outputs (64-byte aligned).
void *allocateBuffer(int64_t bytes);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_SESSION_H
