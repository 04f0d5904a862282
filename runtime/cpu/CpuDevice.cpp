//===- CpuDevice.cpp - the CPU plan executor ------------------------------===//
#include "CpuDevice.h"

#include "../Profiler.h"
#include "../StepArgs.h"
#include "../dist/Collectives.h"
#include "CpuFeatures.h"
#include "CpuGemm.h"
#include "ThreadPool.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace nncc::rt {

namespace {

constexpr int64_t kAlign = 64;
/// Chunks per thread a parallel kernel is split into: a few, so a thread that
/// is preempted or slower does not stall the step.
constexpr int64_t kChunksPerThread = 4;

struct KernelJob {
  nncc_cpu_kernel_fn fn;
  void **args;
  int64_t extent;
  int64_t chunks;
};

void runKernelChunk(void *context, int64_t chunk) {
  auto *job = static_cast<KernelJob *>(context);
  // Even split of [0, extent) into `chunks` ranges, none empty.
  int64_t begin = job->extent * chunk / job->chunks;
  int64_t end = job->extent * (chunk + 1) / job->chunks;
  job->fn(job->args, begin, end);
}

class CpuSession final : public DeviceSession {
public:
  CpuSession(const Module &module, const nncc_plan &plan, int threads, ParallelGroups groups)
      : module_(module), plan_(plan), pool_(threads), groups_(std::move(groups)) {}
  ~CpuSession() override {
    std::free(arena_);
    std::free(state_);
  }

  Status init();
  int64_t allocatedBytes() const override { return allocated_; }
  int threads() const override { return pool_.threads(); }
  Status run(int32_t entry, const void *const *inputs, void *const *outputs,
             Profiler *profiler) override;
  Status readState(int32_t i, void *dst) override {
    NNCC_RETURN_IF_ERROR(checkHeld(i));
    std::memcpy(dst, static_cast<uint8_t *>(state_) + stateOffset_[i],
                static_cast<size_t>(module_.abi().states[i].bytes));
    return Status::ok();
  }
  Status writeState(int32_t i, const void *src) override {
    NNCC_RETURN_IF_ERROR(checkHeld(i));
    std::memcpy(static_cast<uint8_t *>(state_) + stateOffset_[i], src,
                static_cast<size_t>(module_.abi().states[i].bytes));
    return Status::ok();
  }

private:
  /// An internal error unless this session holds state `i` (holdsState).
  Status checkHeld(int32_t i) const {
    return stateOffset_[i] >= 0
               ? Status::ok()
               : error(NNCC_ERROR_INTERNAL, format("state '%s' is pipeline stage %d's, not allocated by a session of "
                                                   "stage %d",
                                                   module_.abi().states[i].name,
                                                   module_.abi().states[i].pipeline_stage, groups_.p));
  }
  /// Allocates the module state this session's pipeline stage holds
  /// (holdsState) and sets it to its initial values.
  Status initState();
  /// The step loop, compiled twice: kProfile = false has no profiling code
  /// at all, so a session that does not profile pays nothing per step.
  template <bool kProfile> Status runSteps(int32_t entry, Profiler *profiler);
  /// Waits for the collectives entry `e` waits for before step `s` (the
  /// step count: the end of the run) and unpacks their results.
  template <bool kProfile> Status waitCollectives(int32_t e, int32_t s, Profiler *profiler);
  /// After a failed run: waits for the collectives still in flight, which
  /// must not outlive the run (their staging is the session's).
  void drainCollectives();

  const Module &module_;
  const nncc_plan &plan_; // the module's CPU plan
  ThreadPool pool_;
  void *arena_ = nullptr;
  void *state_ = nullptr;               // the module state block (stateOffsets: this stage's states)
  std::vector<int64_t> stateOffset_;
  int64_t allocated_ = 0;
  std::vector<StepArgs<void *>> stepArgs_; // per entry
  CpuGemm gemm_; // packed weights, f32 scratch of the f16/bf16/epilogue GEMMs
  std::vector<int32_t> flags_; // the run's check flags, read back
  ParallelGroups groups_; // collective steps run over their group's communicator
  std::vector<CollectiveSchedule> collectives_; // per entry
  std::vector<float> staging_;         // every bucket of an entry, packed, each in its own region
  std::vector<CollectiveRequest> requests_; // per collective slot of the running entry
  std::vector<Communicator *> inFlight_;    // per slot: the communicator it was started on until waited for
};

Status CpuSession::init() {
  const nncc_module &m = module_.abi();
  NNCC_RETURN_IF_ERROR(checkHostCpu(m).prefix("device cpu: module '" + module_.path() + "': "));
  // A CPU plan calling a kernel without host code is caught here, not mid-run.
  for (int32_t e = 0; e < plan_.num_entries; ++e)
    for (int32_t s = 0; s < plan_.entries[e].num_steps; ++s) {
      const nncc_step &st = plan_.entries[e].steps[s];
      if (st.kind == NNCC_STEP_KERNEL && !m.kernels[st.kernel].cpu)
        return error(NNCC_ERROR_UNAVAILABLE,
                     format("kernel '%s' has no CPU code, but the module's CPU plan calls it "
                            "(device cpu)",
                            m.kernels[st.kernel].name));
    }

  // One arena for all entries: a session runs one entry at a time.
  int64_t bytes = Module::maxArenaBytes(plan_);
  if (bytes > 0) {
    int64_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
    arena_ = std::aligned_alloc(kAlign, static_cast<size_t>(rounded));
    if (!arena_)
      return error(NNCC_ERROR_OUT_OF_MEMORY,
                   format("cannot allocate the %lld-byte arena on cpu", (long long)rounded));
    // Zeroed: touches every page now rather than in the first run, and keeps
    // runs deterministic even if a plan reads scratch before writing it.
    // NNCC_POISON_ARENA=1 fills it with NaNs (all bits set) instead, so that
    // a kernel reading bytes nothing wrote (a padded copy's frame) shows.
    const char *poison = std::getenv("NNCC_POISON_ARENA");
    std::memset(arena_, poison && std::strcmp(poison, "1") == 0 ? 0xff : 0, static_cast<size_t>(rounded));
    allocated_ = rounded;
  }

  NNCC_RETURN_IF_ERROR(initState());
  int64_t stagingBytes = 0;
  size_t slots = 0;
  for (int32_t e = 0; e < plan_.num_entries; ++e) {
    collectives_.push_back(scheduleCollectives(plan_.entries[e]));
    stagingBytes = std::max(stagingBytes, collectives_.back().stagingBytes);
    slots = std::max(slots, static_cast<size_t>(collectives_.back().collectives));
  }
  staging_.resize(static_cast<size_t>(stagingBytes) / sizeof(float));
  requests_.resize(slots);
  inFlight_.assign(slots, nullptr);

  auto *arena = static_cast<uint8_t *>(arena_);
  auto *state = static_cast<uint8_t *>(state_);
  const uint8_t *weights = module_.weights();
  stepArgs_.resize(static_cast<size_t>(plan_.num_entries));
  for (int32_t e = 0; e < plan_.num_entries; ++e)
    resolveStepArgs(
        m, groups_.p, plan_.entries[e],
        [&](int32_t kind, int64_t offset) -> void * {
          // Weights are read-only (the verifier rejects steps writing them).
          uint8_t *base = kind == NNCC_BUFFER_ARENA   ? arena
                          : kind == NNCC_BUFFER_STATE ? state
                                                      : const_cast<uint8_t *>(weights);
          return base ? base + offset : nullptr;
        },
        &stepArgs_[e]);
  // After the weights are resolved: GEMMs on the own kernel pack their B
  // here, once, so that runs do not.
  allocated_ += gemm_.reserve(plan_, stepArgs_, pool_.threads());
  return Status::ok();
}

Status CpuSession::initState() {
  const nncc_module &m = module_.abi();
  int64_t bytes = 0;
  stateOffset_ = stateOffsets(m, groups_.p, &bytes);
  if (bytes == 0)
    return Status::ok();
  state_ = std::aligned_alloc(kAlign, static_cast<size_t>(bytes));
  if (!state_)
    return error(NNCC_ERROR_OUT_OF_MEMORY,
                 format("cannot allocate the %lld bytes of module state on cpu", (long long)bytes));
  std::memset(state_, 0, static_cast<size_t>(bytes));
  allocated_ += bytes;
  for (int32_t i = 0; i < m.num_states; ++i)
    if (stateOffset_[i] >= 0 && m.states[i].init_weight >= 0 &&
        m.states[i].shard_parts <= 1) // a part: the Session writes it
      std::memcpy(static_cast<uint8_t *>(state_) + stateOffset_[i],
                  module_.weights() + m.weights[m.states[i].init_weight].offset,
                  static_cast<size_t>(m.states[i].bytes));
  return Status::ok();
}

Status CpuSession::run(int32_t e, const void *const *inputs, void *const *outputs,
                       Profiler *profiler) {
  StepArgs<void *> &plan = stepArgs_[e];
  for (const ArgPatch &pt : plan.patches) {
    const void *base = pt.kind == NNCC_BUFFER_INPUT ? inputs[pt.index] : outputs[pt.index];
    // Inputs are only read: the verifier rejects steps that write them.
    plan.ptrs[pt.slot] = base ? const_cast<uint8_t *>(static_cast<const uint8_t *>(base) + pt.offset)
                              : nullptr;
  }
  // Run-time checks: each kernel that checks sets its flag; cleared first,
  // so a failed run does not fail the next.
  const nncc_entry &entry = plan_.entries[e];
  auto *arena = static_cast<uint8_t *>(arena_);
  for (int32_t c = 0; c < entry.num_checks; ++c)
    std::memset(arena + entry.checks[c].offset, 0, sizeof(int32_t));
  Status s = profiler ? runSteps<true>(e, profiler) : runSteps<false>(e, nullptr);
  if (!s.isOk())
    drainCollectives();
  if (!s.isOk() || entry.num_checks == 0)
    return s;
  flags_.resize(static_cast<size_t>(entry.num_checks));
  for (int32_t c = 0; c < entry.num_checks; ++c)
    std::memcpy(&flags_[c], arena + entry.checks[c].offset, sizeof(int32_t));
  return failedChecks(entry, flags_.data());
}

template <bool kProfile> Status CpuSession::runSteps(int32_t e, Profiler *profiler) {
  const nncc_module &m = module_.abi();
  const nncc_entry &entry = plan_.entries[e];
  StepArgs<void *> &plan = stepArgs_[e];
  const CollectiveSchedule &collectives = collectives_[e];
  for (int32_t s = 0; s < entry.num_steps; ++s) {
    if (collectives.collectives > 0)
      NNCC_RETURN_IF_ERROR((waitCollectives<kProfile>(e, s, profiler)));
    const nncc_step &st = entry.steps[s];
    void **args = plan.of(s);
    [[maybe_unused]] int64_t start = 0, chunks = 1;
    if constexpr (kProfile)
      start = Profiler::now();
    switch (st.kind) {
    case NNCC_STEP_KERNEL: {
      nncc_cpu_kernel_fn fn = m.kernels[st.kernel].cpu;
      int64_t extent = st.parallel_extent;
      if (extent <= 1) {
        fn(args, 0, 1);
        break;
      }
      int64_t n = std::min<int64_t>(extent, int64_t(pool_.threads()) * kChunksPerThread);
      if (pool_.threads() == 1)
        n = 1;
      KernelJob job{fn, args, extent, n};
      pool_.parallelFor(n, runKernelChunk, &job);
      chunks = n;
      break;
    }
    case NNCC_STEP_GEMM: {
      Status status = gemm_.run(st, args, pool_);
      if (!status.isOk())
        return status.prefix(format("entry '%s' step %d (GEMM%s%s): ", entry.name, s,
                                    st.name ? " " : "", st.name ? st.name : ""));
      break;
    }
    case NNCC_STEP_COPY:
      if (st.args[1].bytes > 0)
        std::memmove(args[1], args[0], static_cast<size_t>(st.args[1].bytes));
      break;
    case NNCC_STEP_COLLECTIVE: {
      // Started here, waited for before the first step that touches its
      // outputs (CollectiveSchedule).
      int32_t slot = collectives.slot[s];
      Communicator &comm = groups_.of(st.iparams[NNCC_COLLECTIVE_GROUP]);
      startHostCollective(st, args, comm, reinterpret_cast<char *>(staging_.data()) + collectives.stagingOffset[s],
                          &requests_[slot]);
      inFlight_[slot] = &comm;
      break;
    }
    default:
      // The verifier admits no other kind; kept so a new kind cannot be
      // silently skipped.
      return error(NNCC_ERROR_UNSUPPORTED,
                   format("entry '%s' step %d: unknown step kind %d", entry.name, s, st.kind));
    }
    if constexpr (kProfile)
      profiler->recordStep(s, start, Profiler::now(), chunks);
  }
  if (collectives.collectives > 0)
    NNCC_RETURN_IF_ERROR((waitCollectives<kProfile>(e, entry.num_steps, profiler)));
  return Status::ok();
}

template <bool kProfile> Status CpuSession::waitCollectives(int32_t e, int32_t s, Profiler *profiler) {
  const nncc_entry &entry = plan_.entries[e];
  const CollectiveSchedule &collectives = collectives_[e];
  for (int32_t i = collectives.waitsBegin[s]; i < collectives.waitsBegin[s + 1]; ++i) {
    int32_t c = collectives.waits[i];
    const nncc_step &st = entry.steps[c];
    int32_t slot = collectives.slot[c];
    CollectiveRequest &r = requests_[slot];
    [[maybe_unused]] int64_t start = 0;
    if constexpr (kProfile)
      start = Profiler::now();
    Communicator &comm = *inFlight_[slot];
    inFlight_[slot] = nullptr;
    Status status = finishHostCollective(st, stepArgs_[e].of(c), comm, &r);
    if (!status.isOk())
      return status.prefix(format("entry '%s' step %d (%s): ", entry.name, c, st.name ? st.name : "collective"));
    if constexpr (kProfile)
      profiler->recordCollective(c, r.startNs, r.doneNs, r.tid, s, start, Profiler::now());
  }
  return Status::ok();
}

void CpuSession::drainCollectives() {
  for (size_t slot = 0; slot < inFlight_.size(); ++slot)
    if (Communicator *comm = inFlight_[slot]) {
      inFlight_[slot] = nullptr;
      (void)comm->wait(&requests_[slot]); // the run's error is already the one to report
    }
}

} // namespace

Status createCpuSession(const Module &module, const SessionConfig &config,
                        std::unique_ptr<DeviceSession> *out) {
  auto session = std::make_unique<CpuSession>(module, *config.plan, config.threads, config.groups);
  NNCC_RETURN_IF_ERROR(session->init());
  *out = std::move(session);
  return Status::ok();
}

} // namespace nncc::rt
