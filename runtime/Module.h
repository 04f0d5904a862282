//===- Module.h - a loaded model.so ---------------------------------------===//
//
// A Module owns the dlopen handle of a compiled model.so, the verified view of
// its nncc_module struct and its weight blob (embedded, or a memory-mapped
// side file). It is immutable after load and reference counted, so any number
// of sessions and threads share it; the last release unloads it.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_MODULE_H
#define NNCC_RUNTIME_MODULE_H

#include "ModuleVerifier.h"
#include "PlanChecksum.h"
#include "Status.h"
#include "nncc/module_abi.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace nncc::rt {

/// What a device layer keeps per (module, device) for as long as the module
/// lives, shared by every session on that device: weights uploaded once,
/// loaded GPU code.
class ModuleDeviceState {
public:
  virtual ~ModuleDeviceState() = default;
};

class Module {
public:
  /// Loads and verifies `path`; on success *out holds one reference.
  static Status load(const char *path, Module **out);

  void retain() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release();

  const nncc_module &abi() const { return *abi_; }
  const std::string &path() const { return path_; }
  const char *producer() const { return abi_->producer ? abi_->producer : ""; }

  /// The entry points (names and signatures, the same in every plan; the
  /// verifier checks it): the first plan's, each name once. A pipeline-
  /// parallel module (P > 1 stages) lists every entry once per stage in its
  /// plans; entry i here is its stage-0 variant, and planEntry gives the
  /// plan index of a stage's variant (the same in every plan).
  int32_t numEntries() const { return static_cast<int32_t>(stageEntries_.size()); }
  const nncc_entry &entry(int32_t i) const { return abi_->plans[0].entries[planEntry(i, 0)]; }
  int32_t planEntry(int32_t i, int32_t stage) const { return stageEntries_[i][stage]; }
  /// The plan for devices of `deviceKind` (nncc_device_kind), or nullptr.
  const nncc_plan *plan(int32_t deviceKind) const;
  /// plan(), or UNAVAILABLE naming the kinds the module has plans for.
  Status planFor(int32_t deviceKind, const nncc_plan **out) const;
  /// "cpu, cuda": the device kinds the module has plans for.
  std::string planKinds() const;
  /// Index of the entry called `name`, or -1.
  int32_t findEntry(const char *name) const;
  /// Index of the module state called `name`, or -1.
  int32_t findState(const char *name) const;
  /// "'a', 'b'" (or "none"), for messages.
  std::string stateNames() const;
  /// State `i` as a whole tensor: a sharded state's dims with the split one
  /// times its parts (nncc_state has one part's). What state info,
  /// Session::readState/writeState, checkpoints and ONNX export see.
  const nncc_tensor_desc &stateDesc(int32_t i) const { return stateDescs_[i]; }
  int64_t stateBytes(int32_t i) const { return stateBytes_[i]; }
  /// "'forward', 'train_step'" for error messages.
  std::string entryNames() const;
  /// Largest arena_bytes over the entries of `plan` (a session's one arena).
  static int64_t maxArenaBytes(const nncc_plan &plan);

  /// Byte sizes of an entry's inputs/outputs (checked against overflow at
  /// load), by plan index.
  int64_t inputBytes(int32_t e, int32_t i) const { return plan_.io[e].inputs[i]; }
  int64_t outputBytes(int32_t e, int32_t i) const { return plan_.io[e].outputs[i]; }

  /// Start of the weight blob (nullptr when the module has no weights).
  const uint8_t *weights() const { return weights_; }
  int64_t weightsBytes() const { return abi_->weights_bytes; }

  using DeviceStateFactory = std::function<Status(std::unique_ptr<ModuleDeviceState> *)>;
  /// The state kept under `device` ("cuda:0"), made by `create` on the first
  /// request (serialized; a failure is returned, not kept, so a later
  /// session may try again). Destroyed with the module, before it unloads.
  Status deviceState(const std::string &device, const DeviceStateFactory &create,
                     ModuleDeviceState **out) const;

private:
  Module() = default;
  ~Module();
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  Status loadWeights();
  /// Checks the struct, the tables' bounds (in `memory`, the module's
  /// segments) and checksum, then verifyPlan.
  Status verify(const ModuleMemory &memory);

  std::atomic<int> refs_{1};
  std::string path_;
  void *dl_ = nullptr;
  const nncc_module *abi_ = nullptr;
  const uint8_t *weights_ = nullptr;
  void *map_ = nullptr; // mmapped weights file
  size_t mapBytes_ = 0;
  VerifiedPlan plan_;
  std::vector<std::vector<int32_t>> stageEntries_; // [entry][stage] -> plan index
  std::vector<std::vector<int64_t>> stateDims_; // whole dims, per state
  std::vector<nncc_tensor_desc> stateDescs_;    // pointing into stateDims_
  std::vector<int64_t> stateBytes_;
  mutable std::mutex deviceStateMutex_;
  mutable std::map<std::string, std::unique_ptr<ModuleDeviceState>> deviceStates_;
};

/// Checks that `path` is a complete ELF shared object for this host (headers
/// and segments inside the file): dlopen maps a truncated file without
/// complaint and faults later.
Status checkElfFile(const std::string &path);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_MODULE_H
