//===- Session.cpp --------------------------------------------------------===//
#include "Session.h"

#include "DType.h"
#include "StepArgs.h"
#include "cpu/ThreadPool.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nncc::rt {

namespace {

constexpr int32_t kMaxThreads = 4096;

std::string nameList(int32_t n, const nncc_tensor_desc *descs) {
  std::string s;
  for (int32_t i = 0; i < n; ++i)
    s += std::string(i ? ", '" : "'") + descs[i].name + "'";
  return s.empty() ? "none" : s;
}

bool sameShape(const nncc_tensor_desc &d, const nncc_tensor &t) {
  if (d.dtype != t.dtype || d.rank != t.rank)
    return false;
  for (int32_t i = 0; i < d.rank; ++i)
    if (d.dims[i] != t.dims[i])
      return false;
  return true;
}

/// Where part t of a sharded state lies in its whole tensor: `outer` runs
/// of `run` bytes, part t's at t*run within each `parts`*run stretch (with
/// blocks, each block of the axis is such a stretch).
struct ShardLayout {
  int64_t outer = 1, run = 0, parts = 1;
  /// Copies part `t` from `whole` to `part`, or back with `toWhole`.
  void copy(uint8_t *whole, uint8_t *part, int64_t t, bool toWhole) const {
    for (int64_t o = 0; o < outer; ++o) {
      uint8_t *w = whole + (o * parts + t) * run, *p = part + o * run;
      std::memcpy(toWhole ? w : p, toWhole ? p : w, static_cast<size_t>(run));
    }
  }
};

ShardLayout shardLayout(const nncc_state &st) {
  ShardLayout l;
  l.parts = st.shard_parts;
  l.run = nncc_dtype_bytes(st.dtype);
  for (int32_t k = 0; k < st.rank; ++k)
    (k < st.shard_axis ? l.outer : l.run) *= st.dims[k];
  if (st.shard_blocks > 1) {
    l.outer *= st.shard_blocks;
    l.run /= st.shard_blocks;
  }
  return l;
}

} // namespace

void *allocateBuffer(int64_t bytes) {
  int64_t rounded = std::max<int64_t>(64, (bytes + 63) / 64 * 64);
  return std::aligned_alloc(64, static_cast<size_t>(rounded));
}

Session::~Session() {
  profiler_.reset(); // writes the trace; it reads the module
  device_.reset();   // before the module it executes
  if (module_)
    module_->release();
}

Status Session::create(Module *module, const char *device, const nncc_session_options *options,
                       Session **out) {
  if (!module || !out)
    return error(NNCC_ERROR_INVALID_ARGUMENT, "nncc_session_create: module and out must not be NULL");
  *out = nullptr;
  DeviceSpec spec;
  NNCC_RETURN_IF_ERROR(parseDevice(device, &spec));

  SessionConfig config;
  int32_t threads = 0;
  // profile: NULL = NNCC_PROFILE decides, "" = off, else the trace path.
  const char *profile = nullptr;
  if (options) {
    if (options->struct_size < offsetof(nncc_session_options, threads) + sizeof(int32_t))
      return error(NNCC_ERROR_INVALID_ARGUMENT,
                   "nncc_session_options.struct_size is too small (initialize the options with "
                   "nncc_session_options_init)");
    threads = options->threads;
    // Callers built before the field existed pass a smaller struct_size.
    if (options->struct_size >= offsetof(nncc_session_options, profile) + sizeof(const char *))
      profile = options->profile;
    if (options->struct_size >= offsetof(nncc_session_options, cuda_stream) + sizeof(void *))
      config.cudaStream = options->cuda_stream;
    if (options->struct_size >= offsetof(nncc_session_options, communicator) + sizeof(void *) &&
        options->communicator)
      config.communicator = communicatorOf(options->communicator);
  }
  if (!config.communicator)
    config.communicator = std::make_shared<SelfCommunicator>();
  NNCC_RETURN_IF_ERROR(module->planFor(spec.kind == DeviceSpec::Cuda ? NNCC_DEVICE_CUDA : NNCC_DEVICE_CPU,
                                       &config.plan));
  NNCC_RETURN_IF_ERROR(makeParallelGroups(*module, *config.plan, config.communicator, &config.groups));
  bool profileFromEnv = !profile;
  if (profileFromEnv)
    profile = std::getenv("NNCC_PROFILE");
  if (threads < 0 || threads > kMaxThreads)
    return error(NNCC_ERROR_INVALID_ARGUMENT,
                 format("threads must be between 0 (all cores) and %d, got %d", kMaxThreads,
                        threads));
  config.threads = threads == 0 ? availableCores() : threads;

  std::unique_ptr<Session> s(new Session());
  module->retain();
  s->module_ = module;
  s->deviceName_ = spec.str();
  s->plan_ = config.plan;
  s->groups_ = config.groups;
  NNCC_RETURN_IF_ERROR(createDeviceSession(*module, spec, config, &s->device_));
  // A sharded state starts as this rank's part of its whole initial value
  // (one this stage holds: the device session allocated no other).
  const nncc_module &m = module->abi();
  for (int32_t i = 0; i < m.num_states; ++i)
    if (s->holds(i) && m.states[i].shard_parts > 1 && m.states[i].init_weight >= 0)
      NNCC_RETURN_IF_ERROR(s->writePart(i, module->weights() + m.weights[m.states[i].init_weight].offset));
  if (profile && *profile) {
    Status ps = Profiler::create(*module, *config.plan, profile, s->deviceName_, s->device_->threads(),
                                 &s->profiler_);
    // An explicit request fails the session; the environment variable must
    // not break a program that never asked for a profile: it warns instead.
    if (!ps.isOk() && !profileFromEnv)
      return ps;
    if (!ps.isOk())
      std::fprintf(stderr, "nncc: warning: NNCC_PROFILE: %s; this session is not profiled\n",
                   ps.message().c_str());
  }

  size_t maxIn = 0, maxOut = 0;
  for (int32_t e = 0; e < module->numEntries(); ++e) {
    maxIn = std::max(maxIn, static_cast<size_t>(module->entry(e).num_inputs));
    maxOut = std::max(maxOut, static_cast<size_t>(module->entry(e).num_outputs));
  }
  s->inputPtrs_.resize(maxIn);
  s->inputSlot_.resize(maxIn);
  s->outputPtrs_.resize(maxOut);
  s->outputSlot_.resize(maxOut);
  *out = s.release();
  return Status::ok();
}

/// Matches the caller's tensors to the signature by name: slotOf[i] is the
/// given index of signature tensor i. Every mismatch names the tensor and the
/// expected and given types.
Status Session::bind(const char *what, const nncc_entry &entry, int32_t count,
                     const nncc_tensor_desc *descs, const nncc_tensor *given, int32_t numGiven,
                     int32_t *slotOf) {
  if (numGiven < 0 || (numGiven > 0 && !given))
    return error(NNCC_ERROR_INVALID_ARGUMENT, format("invalid %s array", what));
  std::fill(slotOf, slotOf + count, -1);
  for (int32_t g = 0; g < numGiven; ++g) {
    const nncc_tensor &t = given[g];
    if (!t.name)
      return error(NNCC_ERROR_INVALID_INPUT, format("%s #%d has no name", what, g));
    int32_t i = 0;
    while (i < count && std::strcmp(descs[i].name, t.name) != 0)
      ++i;
    if (i == count)
      return error(NNCC_ERROR_INVALID_INPUT,
                   format("unexpected %s '%s': entry '%s' has %ss %s", what, t.name, entry.name,
                          what, nameList(count, descs).c_str()));
    if (slotOf[i] >= 0)
      return error(NNCC_ERROR_INVALID_INPUT, format("%s '%s' is given twice", what, t.name));
    slotOf[i] = g;
    // An output with data == NULL asks the runtime to allocate it: its type
    // fields are outputs, not checked.
    if (!t.data && std::strcmp(what, "output") == 0)
      continue;
    const nncc_tensor_desc &d = descs[i];
    bool shapeOk = t.rank >= 0 && t.rank <= 64 && (t.rank == 0 || t.dims);
    if (!shapeOk)
      return error(NNCC_ERROR_INVALID_INPUT,
                   format("%s '%s': expected %s, got rank %d%s", what, t.name,
                          typeString(d.dtype, d.rank, d.dims).c_str(), t.rank,
                          t.rank > 0 && !t.dims ? " with NULL dims" : ""));
    if (!sameShape(d, t))
      return error(NNCC_ERROR_INVALID_INPUT,
                   format("%s '%s': expected %s, got %s", what, t.name,
                          typeString(d.dtype, d.rank, d.dims).c_str(),
                          typeString(t.dtype, t.rank, t.dims).c_str()));
  }
  for (int32_t i = 0; i < count; ++i)
    if (slotOf[i] < 0)
      return error(NNCC_ERROR_INVALID_INPUT,
                   format("missing %s '%s' (expected %s)%s", what, descs[i].name,
                          typeString(descs[i].dtype, descs[i].rank, descs[i].dims).c_str(),
                          std::strcmp(what, "output") == 0
                              ? ": pass a buffer, or data = NULL to have the runtime allocate it"
                              : ""));
  return Status::ok();
}

Status Session::stateIndex(const char *name, int64_t bytes, int32_t *index) const {
  int32_t i = module_->findState(name);
  if (i < 0)
    return error(NNCC_ERROR_NOT_FOUND, format("unknown state '%s' (the module has %s)",
                                              name ? name : "(null)", module_->stateNames().c_str()));
  const nncc_tensor_desc &st = module_->stateDesc(i);
  if (bytes != module_->stateBytes(i))
    return error(NNCC_ERROR_INVALID_ARGUMENT,
                 format("state '%s' is %s (%lld bytes), not %lld bytes", name,
                        typeString(st.dtype, st.rank, st.dims).c_str(), (long long)module_->stateBytes(i),
                        (long long)bytes));
  *index = i;
  return Status::ok();
}

Status Session::readState(const char *name, void *data, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  int32_t i = 0;
  NNCC_RETURN_IF_ERROR(stateIndex(name, bytes, &i));
  if (!data && bytes > 0)
    return error(NNCC_ERROR_INVALID_ARGUMENT, format("state '%s': data is NULL", name));
  const nncc_state &st = module_->abi().states[i];
  // A state of another stage q is not held here: this rank only receives
  // stage q's value, straight into `data` (its tensor group, all of stage
  // p too, skips the gather alike).
  if (holds(i))
    NNCC_RETURN_IF_ERROR(readWhole(i, data).prefix(format("state '%s': ", name)));
  if (module_->abi().pipeline_parallel > 1 && st.pipeline_stage >= 0)
    NNCC_RETURN_IF_ERROR(groups_.pipeline->broadcast(data, bytes, st.pipeline_stage)
                             .prefix(format("state '%s': taking pipeline stage %d's value: ", name, st.pipeline_stage)));
  return Status::ok();
}

Status Session::readWhole(int32_t i, void *data) {
  const nncc_state &st = module_->abi().states[i];
  if (st.shard_parts <= 1)
    return device_->readState(i, data);
  // Every rank of the tensor group broadcasts its part in turn: exact bits
  // of any dtype, the bytes of an all-gather.
  part_.resize(static_cast<size_t>(st.bytes));
  ShardLayout shard = shardLayout(st);
  for (int32_t r = 0; r < st.shard_parts; ++r) {
    if (r == groups_.t)
      NNCC_RETURN_IF_ERROR(device_->readState(i, part_.data()));
    NNCC_RETURN_IF_ERROR(groups_.tensor->broadcast(part_.data(), st.bytes, r)
                             .prefix(format("gathering its %d parts: ", st.shard_parts)));
    shard.copy(static_cast<uint8_t *>(data), part_.data(), r, /*toWhole=*/true);
  }
  return Status::ok();
}

Status Session::writePart(int32_t i, const void *whole) {
  const nncc_state &st = module_->abi().states[i];
  part_.resize(static_cast<size_t>(st.bytes));
  shardLayout(st).copy(const_cast<uint8_t *>(static_cast<const uint8_t *>(whole)), part_.data(), groups_.t,
                       /*toWhole=*/false);
  return device_->writeState(i, part_.data()).prefix(format("state '%s': ", st.name));
}

Status Session::writeState(const char *name, const void *data, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  int32_t i = 0;
  NNCC_RETURN_IF_ERROR(stateIndex(name, bytes, &i));
  if (!data && bytes > 0)
    return error(NNCC_ERROR_INVALID_ARGUMENT, format("state '%s': data is NULL", name));
  if (!holds(i))
    return Status::ok(); // another stage's: its owner keeps its own copy
  if (module_->abi().states[i].shard_parts > 1)
    return writePart(i, data);
  return device_->writeState(i, data).prefix(format("state '%s': ", name));
}

bool Session::holds(int32_t i) const { return holdsState(module_->abi(), i, groups_.p); }

int64_t Session::stateBytes() const {
  int64_t bytes = 0;
  for (int32_t i = 0; i < module_->abi().num_states; ++i)
    if (holds(i))
      bytes += module_->abi().states[i].bytes;
  return bytes;
}

void Session::setProfiling(bool on) {
  std::lock_guard<std::mutex> lock(mutex_);
  profiler_->setEnabled(on);
}

Profiler::Stat Session::profileStats(int32_t entry, int32_t step) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return profiler_->stats(planEntry(entry), step);
}

Status Session::run(const char *entryName, const nncc_tensor *inputs, int32_t numInputs,
                    nncc_tensor *outputs, int32_t numOutputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!entryName)
    return error(NNCC_ERROR_INVALID_ARGUMENT, "entry name must not be NULL");
  int32_t e = module_->findEntry(entryName);
  if (e < 0)
    return error(NNCC_ERROR_NOT_FOUND, format("unknown entry '%s' (the module has %s)", entryName,
                                              module_->entryNames().c_str()));
  // The signature is every stage's; the steps are this rank's stage's.
  const nncc_entry &entry = module_->entry(e);
  e = planEntry(e);
  NNCC_RETURN_IF_ERROR(bind("input", entry, entry.num_inputs, entry.inputs, inputs, numInputs,
                            inputSlot_.data()));
  NNCC_RETURN_IF_ERROR(bind("output", entry, entry.num_outputs, entry.outputs, outputs,
                            numOutputs, outputSlot_.data()));
  for (int32_t i = 0; i < entry.num_inputs; ++i) {
    const nncc_tensor &t = inputs[inputSlot_[i]];
    if (!t.data && module_->inputBytes(e, i) > 0)
      return error(NNCC_ERROR_INVALID_INPUT, format("input '%s': data is NULL", t.name));
    inputPtrs_[i] = t.data;
  }

  // Kernels assume their buffers are apart (the compiled code is built that
  // way), so caller-provided outputs may not overlap an input or each other.
  auto overlap = [](const void *a, int64_t an, const void *b, int64_t bn) {
    auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
    return an > 0 && bn > 0 && pa < pb + bn && pb < pa + an;
  };
  for (int32_t i = 0; i < entry.num_outputs; ++i) {
    const nncc_tensor &o = outputs[outputSlot_[i]];
    if (!o.data)
      continue;
    int64_t bytes = module_->outputBytes(e, i);
    for (int32_t j = 0; j < entry.num_inputs; ++j)
      if (overlap(o.data, bytes, inputPtrs_[j], module_->inputBytes(e, j)))
        return error(NNCC_ERROR_INVALID_ARGUMENT,
                     format("output '%s' overlaps input '%s': outputs need their own memory",
                            o.name, inputs[inputSlot_[j]].name));
    for (int32_t j = 0; j < i; ++j) {
      const nncc_tensor &p = outputs[outputSlot_[j]];
      if (p.data && overlap(o.data, bytes, p.data, module_->outputBytes(e, j)))
        return error(NNCC_ERROR_INVALID_ARGUMENT,
                     format("outputs '%s' and '%s' overlap", p.name, o.name));
    }
  }

  // Allocate the outputs the caller asked for only once everything checked
  // out; on failure they are freed and the caller's array is left untouched.
  Status s;
  for (int32_t i = 0; i < entry.num_outputs; ++i) {
    const nncc_tensor &t = outputs[outputSlot_[i]];
    outputPtrs_[i] = t.data;
    if (t.data || !s.isOk())
      continue;
    outputPtrs_[i] = allocateBuffer(module_->outputBytes(e, i));
    if (!outputPtrs_[i])
      s = error(NNCC_ERROR_OUT_OF_MEMORY,
                format("cannot allocate output '%s' (%lld bytes)", t.name,
                       static_cast<long long>(module_->outputBytes(e, i))));
  }
  if (s.isOk()) {
    if (profiler_ && profiler_->enabled()) {
      profiler_->beginRun(e);
      s = device_->run(e, inputPtrs_.data(), outputPtrs_.data(), profiler_.get());
      profiler_->endRun(s.isOk());
    } else {
      s = device_->run(e, inputPtrs_.data(), outputPtrs_.data(), nullptr);
    }
  }

  for (int32_t i = 0; i < entry.num_outputs; ++i) {
    nncc_tensor &t = outputs[outputSlot_[i]];
    if (t.data)
      continue;
    if (!s.isOk()) {
      std::free(outputPtrs_[i]);
      continue;
    }
    t.data = outputPtrs_[i];
    t.dtype = entry.outputs[i].dtype;
    t.rank = entry.outputs[i].rank;
    t.dims = entry.outputs[i].dims;
  }
  return s;
}

} // namespace nncc::rt
