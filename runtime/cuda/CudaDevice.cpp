//===- CudaDevice.cpp - the GPU plan executor -----------------------------===//
#include "CudaDevice.h"

#include "../Profiler.h"
#include "../StepArgs.h"
#include "../dist/PointToPoint.h"
#include "CudaGemm.h"
#include "CudaModule.h"
#if NNCC_RUNTIME_HAVE_NCCL
#include "Nccl.h"
#include "NcclCommunicator.h"
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>

namespace nncc::rt {

namespace {

/// cuMemAlloc's alignment, and the one every region of the arena gets.
constexpr int64_t kAlign = 256;
/// cuBLASLt's recommended workspace on Hopper (and plenty before it).
constexpr int64_t kGemmWorkspaceBytes = 32 << 20;

int64_t alignUp(int64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

/// Largest power of two dividing `offset`, at most kAlign.
int64_t alignmentOf(int64_t offset) {
  int64_t a = offset & -offset;
  return a == 0 || a > kAlign ? kAlign : a;
}

struct StepPlan {
  std::vector<void *> params;  // kernel steps: the step's slots of EntryPlan::args, cuLaunchKernel's params
  std::unique_ptr<CudaGemm> gemm;
};

struct EntryPlan {
  StepArgs<CUdeviceptr> args;
  std::vector<StepPlan> steps;
  std::vector<int64_t> staging; // arena offset of each input's, then output's, staging copy
  int64_t runs = 0;                 // the first runs eagerly; the graph is captured on the second
  bool graphless = false;           // capture failed once: always eager
  CUgraphExec graph = nullptr;
  std::vector<CUdeviceptr> graphIo; // input/output addresses the graph was captured with
  std::vector<CUevent> events;      // profiling: one before each step and one after the last
  bool collective = false;          // has collective steps: NCCL's asynchronous errors are checked
  std::vector<int32_t> p2pRuns;     // per step, pointToPointRuns: send/recv steps issued together
};

class CudaSession final : public DeviceSession {
public:
  CudaSession(const Module &module, const CudaDriver &driver, int index, const SessionConfig &config)
      : module_(module), plan_(*config.plan), driver_(driver), index_(index), where_("cuda:" + std::to_string(index)),
        callerStream_(config.cudaStream ? static_cast<CUstream>(config.cudaStream) : CU_STREAM_LEGACY),
        groups_(config.groups) {}
  ~CudaSession() override;

  Status init();
  int64_t allocatedBytes() const override { return arenaBytes_; }
  int threads() const override { return 1; }
  Status run(int32_t entry, const void *const *inputs, void *const *outputs,
             Profiler *profiler) override;
  Status readState(int32_t i, void *dst) override;
  Status writeState(int32_t i, const void *src) override;

private:
  Status planEntry(int32_t e, int64_t stagingBase);
  /// Where a caller's buffer is for the kernels: its own address when it is
  /// device memory of this GPU (suitably aligned), else 0 (to be staged);
  /// *device says whether it is device memory at all (how to copy it).
  Status directAddress(const void *p, const char *what, const char *name, CUdeviceptr *out,
                       bool *device) const;
  Status enqueueStep(int32_t e, int32_t s);
  /// A collective step on the session's stream: ncclAllReduce of each
  /// buffer of the bucket in one NCCL group (one launch), or the one
  /// ncclAllGather, ncclReduceScatter or ncclBroadcast; in a world of one,
  /// copies.
  Status enqueueCollective(int32_t e, int32_t s, const CUdeviceptr *args);
  /// Send/recv step `s`: when it starts a run of them (pointToPointRuns),
  /// ncclSend/ncclRecv of every buffer of the run in one NCCL group on the
  /// session's stream (dist/PointToPoint.h says why one group); a later
  /// step of a run was issued with its first.
  Status enqueuePointToPoint(int32_t e, int32_t s);
#if NNCC_RUNTIME_HAVE_NCCL
  /// `calls` (which name the NCCL call and step that failed) between
  /// ncclGroupStart and ncclGroupEnd on the session's stream, over `nccl`
  /// unless an earlier error aborted it: what a collective step and a run
  /// of send/recv steps share.
  Status enqueueNcclGroup(const NcclRank &nccl, int32_t e, int32_t s,
                          const std::function<ncclResult_t(const char **call, int32_t *step)> &calls);
#endif
  /// An internal error unless this session holds state `i` (holdsState).
  Status checkHeld(int32_t i) const;
  /// Whether entry `e` is a variant of this session's pipeline stage (every
  /// entry without pipeline parallelism).
  bool runsHere(int32_t e) const {
    return module_.abi().pipeline_parallel <= 1 || plan_.entries[e].pipeline_stage == groups_.p;
  }
  /// Errors NCCL reports after the fact (a peer gone, a network error).
  Status ncclAsyncError(int32_t e) const;
  /// cuStreamSynchronize at the end of a run. With NCCL steps in flight it
  /// polls NCCL's asynchronous error meanwhile: NCCL's kernels wait for a
  /// failed peer forever, so on an error the communicator is aborted (which
  /// ends them) and *ncclError says why.
  CUresult waitForStream(int32_t e, Status *ncclError);
  Status enqueueSteps(int32_t e);
  Status launchGraph(int32_t e);
  Status runProfiled(int32_t e, Profiler *profiler);
  std::string stepWhere(int32_t e, int32_t s) const;

  const Module &module_;
  const nncc_plan &plan_; // the module's CUDA plan
  const CudaDriver &driver_;
  int index_;
  std::string where_;
  const CudaModule *code_ = nullptr;
  const CublasLt *lt_ = nullptr;
  cublasLtHandle_t ltHandle_ = nullptr;
  CUstream stream_ = nullptr;
  /// The caller's stream, and the event each run records on it for stream_
  /// to wait for: the session's stream is non-blocking, so without it a run
  /// would not wait for the caller's writes to its device inputs.
  CUstream callerStream_;
  CUevent callerReady_ = nullptr;
  CUdeviceptr arena_ = 0;
  int64_t arenaBytes_ = 0;
  CUdeviceptr workspace_ = 0;
  CUdeviceptr state_ = 0; // the module state block (stateOffsets), inside arena_
  std::vector<int64_t> stateOffset_;
  bool useGraphs_ = true;
  std::vector<EntryPlan> entryPlans_;
  std::vector<CUdeviceptr> io_; // this run's input then output addresses
  std::vector<char> copyOut_;   // per output of this run: 0 in place, 1 to host, 2 to device
  std::vector<int32_t> flags_;  // the run's check flags, copied back
  ParallelGroups groups_; // the session's parallel groups
  /// Slots of the groups' NCCL communicators: 0 data, 1 tensor, 2 pipeline.
  static constexpr int kGroups = 3;
  static int groupSlot(int64_t group) {
    return group == NNCC_GROUP_TENSOR ? 1 : group == NNCC_GROUP_PIPELINE ? 2 : 0;
  }
#if NNCC_RUNTIME_HAVE_NCCL
  /// Per group slot, what its collective steps run over (null for a group
  /// of one, whose all-reduces copy).
  std::shared_ptr<NcclRank> nccl_[kGroups];
#endif
};

Status CudaSession::checkHeld(int32_t i) const {
  if (stateOffset_[i] >= 0)
    return Status::ok();
  return error(NNCC_ERROR_INTERNAL,
               format("%s: state '%s' is pipeline stage %d's, not allocated by a session of stage %d",
                      where_.c_str(), module_.abi().states[i].name, module_.abi().states[i].pipeline_stage,
                      groups_.p));
}

Status CudaSession::readState(int32_t i, void *dst) {
  NNCC_RETURN_IF_ERROR(checkHeld(i));
  CudaContextGuard ctx;
  NNCC_RETURN_IF_ERROR(driver_.makeCurrent(index_, &ctx));
  NNCC_CU_CALL(driver_, where_, cuMemcpyDtoHAsync, dst, state_ + stateOffset_[i],
               static_cast<size_t>(module_.abi().states[i].bytes), stream_);
  NNCC_CU_CALL(driver_, where_, cuStreamSynchronize, stream_);
  return Status::ok();
}

Status CudaSession::writeState(int32_t i, const void *src) {
  NNCC_RETURN_IF_ERROR(checkHeld(i));
  CudaContextGuard ctx;
  NNCC_RETURN_IF_ERROR(driver_.makeCurrent(index_, &ctx));
  NNCC_CU_CALL(driver_, where_, cuMemcpyHtoDAsync, state_ + stateOffset_[i], src,
               static_cast<size_t>(module_.abi().states[i].bytes), stream_);
  NNCC_CU_CALL(driver_, where_, cuStreamSynchronize, stream_);
  return Status::ok();
}

std::string CudaSession::stepWhere(int32_t e, int32_t s) const {
  const nncc_step &st = plan_.entries[e].steps[s];
  return format("%s: entry '%s' step %d%s%s%s", where_.c_str(), plan_.entries[e].name, s,
                st.name ? " ('" : "", st.name ? st.name : "", st.name ? "')" : "");
}

Status CudaSession::init() {
  CudaContextGuard ctx;
  NNCC_RETURN_IF_ERROR(driver_.makeCurrent(index_, &ctx));
  const nncc_module &m = module_.abi();
  // The groups every stage's entries use (the same on every rank: the
  // communicators are made in the same order everywhere); the GEMMs of this
  // stage's.
  bool hasGemm = false, hasGroup[kGroups] = {false, false, false};
  for (int32_t e = 0; e < plan_.num_entries; ++e)
    for (int32_t s = 0; s < plan_.entries[e].num_steps; ++s) {
      const nncc_step &st = plan_.entries[e].steps[s];
      hasGemm |= st.kind == NNCC_STEP_GEMM && runsHere(e);
      if (st.kind == NNCC_STEP_COLLECTIVE)
        hasGroup[groupSlot(st.iparams[NNCC_COLLECTIVE_GROUP])] = true;
      if (st.kind == NNCC_STEP_KERNEL && m.kernels[st.kernel].num_gpu_launches == 0)
        return error(NNCC_ERROR_UNAVAILABLE,
                     format("kernel '%s' has no GPU code, but the module's CUDA plan calls it "
                            "(device %s)",
                            m.kernels[st.kernel].name, where_.c_str()));
    }
  // The NCCL communicators first (the data group's, the tensor group's,
  // then the pipeline group's): in a many-process world their creation is a
  // collective every rank reaches, before anything of this session can fail
  // on one rank alone. A group of one copies, unless it is NCCL's own.
  const int64_t groupOfSlot[kGroups] = {NNCC_GROUP_DATA, NNCC_GROUP_TENSOR, NNCC_GROUP_PIPELINE};
  for (int g = 0; g < kGroups; ++g) {
    const std::shared_ptr<Communicator> &comm = groups_.shared(groupOfSlot[g]);
    if (!hasGroup[g] || !comm || (comm->size() == 1 && std::strcmp(comm->backend(), "nccl") != 0))
      continue;
#if NNCC_RUNTIME_HAVE_NCCL
    NNCC_RETURN_IF_ERROR(ncclRankFor(comm, index_, &nccl_[g]).prefix(where_ + ": "));
#else
    return error(NNCC_ERROR_UNAVAILABLE,
                 format("the module has collective steps, which need NCCL on a GPU, but this runtime "
                        "was built without nccl.h (device %s)",
                        where_.c_str()));
#endif
  }
  const char *graphs = std::getenv("NNCC_CUDA_GRAPHS");
  useGraphs_ = !(graphs && std::strcmp(graphs, "0") == 0);

  ModuleDeviceState *state = nullptr;
  NNCC_RETURN_IF_ERROR(module_.deviceState(
      where_,
      [&](std::unique_ptr<ModuleDeviceState> *out) {
        return CudaModule::create(module_, driver_, index_, out);
      },
      &state));
  code_ = static_cast<const CudaModule *>(state);
  NNCC_CU_CALL(driver_, where_, cuStreamCreate, &stream_, CU_STREAM_NON_BLOCKING);
  NNCC_CU_CALL(driver_, where_, cuEventCreate, &callerReady_, CU_EVENT_DISABLE_TIMING);

  // One allocation: scratch (the largest arena of this stage's entries),
  // then staging for host inputs and outputs (the largest entry's, each
  // region aligned), then the cuBLASLt workspace, then the state this stage
  // holds.
  int64_t scratch = 0, staging = 0;
  for (int32_t e = 0; e < plan_.num_entries; ++e) {
    if (!runsHere(e))
      continue;
    scratch = std::max(scratch, alignUp(plan_.entries[e].arena_bytes));
    int64_t bytes = 0;
    for (int32_t i = 0; i < plan_.entries[e].num_inputs; ++i)
      bytes += alignUp(module_.inputBytes(e, i));
    for (int32_t o = 0; o < plan_.entries[e].num_outputs; ++o)
      bytes += alignUp(module_.outputBytes(e, o));
    staging = std::max(staging, bytes);
  }
  int64_t workspace = hasGemm ? kGemmWorkspaceBytes : 0, stateBytes = 0;
  stateOffset_ = stateOffsets(m, groups_.p, &stateBytes); // this stage's and every stage's states
  arenaBytes_ = scratch + staging + workspace + stateBytes;
  if (arenaBytes_ > 0) {
    NNCC_CU_CALL(driver_, where_ + format(" (the %lld-byte arena)", (long long)arenaBytes_),
                 cuMemAlloc, &arena_, static_cast<size_t>(arenaBytes_));
    // Zeroed, as on the CPU: runs stay deterministic even if a plan reads
    // scratch before writing it.
    NNCC_CU_CALL(driver_, where_, cuMemsetD8Async, arena_, 0, static_cast<size_t>(arenaBytes_),
                 stream_);
    NNCC_CU_CALL(driver_, where_, cuStreamSynchronize, stream_);
  }
  workspace_ = hasGemm ? arena_ + scratch + staging : 0;
  // The module state starts as its weights (the arena is zero already).
  state_ = arena_ + scratch + staging + workspace;
  for (int32_t i = 0; i < m.num_states; ++i)
    if (stateOffset_[i] >= 0 && m.states[i].init_weight >= 0 &&
        m.states[i].shard_parts <= 1) // a part: the Session writes it
      NNCC_CU_CALL(driver_, where_, cuMemcpyDtoDAsync, state_ + stateOffset_[i],
                   code_->weights() + m.weights[m.states[i].init_weight].offset,
                   static_cast<size_t>(m.states[i].bytes), stream_);
  if (m.num_states > 0)
    NNCC_CU_CALL(driver_, where_, cuStreamSynchronize, stream_);
  if (hasGemm) {
    NNCC_RETURN_IF_ERROR(CublasLt::get(&lt_).prefix(where_ + ": "));
    NNCC_LT_CALL(*lt_, where_, cublasLtCreate, &ltHandle_);
  }

  size_t maxIo = 0;
  entryPlans_.resize(static_cast<size_t>(plan_.num_entries));
  for (int32_t e = 0; e < plan_.num_entries; ++e) {
    if (!runsHere(e))
      continue; // another stage's variant: never run by this session
    NNCC_RETURN_IF_ERROR(planEntry(e, scratch));
    maxIo = std::max(maxIo, entryPlans_[e].staging.size());
  }
  io_.resize(maxIo);
  copyOut_.resize(maxIo);
  return Status::ok();
}

Status CudaSession::planEntry(int32_t e, int64_t stagingBase) {
  const nncc_module &m = module_.abi();
  const nncc_entry &entry = plan_.entries[e];
  EntryPlan &plan = entryPlans_[e];
  plan.p2pRuns = pointToPointRuns(entry);
  int64_t at = stagingBase;
  for (int32_t i = 0; i < entry.num_inputs; ++i) {
    plan.staging.push_back(at);
    at += alignUp(module_.inputBytes(e, i));
  }
  for (int32_t o = 0; o < entry.num_outputs; ++o) {
    plan.staging.push_back(at);
    at += alignUp(module_.outputBytes(e, o));
  }

  // Every arg's address, or a patch for inputs and outputs; the alignment of
  // each is known now (inputs and outputs are used in place only when
  // kAlign-aligned, else staged), which cuBLASLt's algorithm choice needs.
  resolveStepArgs(
      m, groups_.p, entry,
      [&](int32_t kind, int64_t offset) {
        CUdeviceptr base = kind == NNCC_BUFFER_ARENA ? arena_ : kind == NNCC_BUFFER_STATE ? state_ : code_->weights();
        return base + static_cast<CUdeviceptr>(offset);
      },
      &plan.args);
  // The args are complete: the kernel params may point into them now.
  plan.steps.resize(static_cast<size_t>(entry.num_steps));
  for (int32_t s = 0; s < entry.num_steps; ++s) {
    const nncc_step &st = entry.steps[s];
    StepPlan &sp = plan.steps[s];
    size_t first = plan.args.first[s];
    plan.collective |= st.kind == NNCC_STEP_COLLECTIVE;
    if (st.kind == NNCC_STEP_KERNEL) {
      for (int32_t a = 0; a < st.num_args; ++a)
        sp.params.push_back(&plan.args.ptrs[first + a]);
    } else if (st.kind == NNCC_STEP_GEMM) {
      int64_t al[4] = {kAlign, kAlign, kAlign, kAlign};
      for (int32_t a = 0; a < st.num_args && a < 4; ++a)
        al[a] = alignmentOf(plan.args.offsets[first + a]);
      // An input/output bias is patched per run; any kAlign-aligned address
      // with its offset tells cuBLASLt its alignment.
      CUdeviceptr biasHint = 0;
      if (st.num_args > 3)
        biasHint = plan.args.ptrs[first + 3] ? plan.args.ptrs[first + 3]
                                             : arena_ + static_cast<CUdeviceptr>(al[3] % kAlign);
      NNCC_RETURN_IF_ERROR(CudaGemm::create(*lt_, ltHandle_, st, al, biasHint,
                                            static_cast<size_t>(kGemmWorkspaceBytes),
                                            stepWhere(e, s), &sp.gemm));
    }
  }
  return Status::ok();
}

CudaSession::~CudaSession() {
  // Errors are ignored: nothing can be done about them here, and at process
  // exit the driver may already be gone.
  CudaContextGuard ctx;
  if (!driver_.makeCurrent(index_, &ctx).isOk())
    return;
  const CudaSymbols &cu = driver_.sym();
  if (stream_)
    cu.cuStreamSynchronize(stream_);
  for (EntryPlan &plan : entryPlans_) {
    if (plan.graph)
      cu.cuGraphExecDestroy(plan.graph);
    for (CUevent ev : plan.events)
      cu.cuEventDestroy(ev);
    for (StepPlan &sp : plan.steps)
      sp.gemm.reset(); // before the cuBLASLt handle
  }
  if (ltHandle_)
    lt_->sym().cublasLtDestroy(ltHandle_);
  if (arena_)
    cu.cuMemFree(arena_);
  if (callerReady_)
    cu.cuEventDestroy(callerReady_);
  if (stream_)
    cu.cuStreamDestroy(stream_);
}

Status CudaSession::directAddress(const void *p, const char *what, const char *name,
                                  CUdeviceptr *out, bool *device) const {
  *out = 0;
  *device = false;
  auto addr = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
  unsigned int type = 0, managed = 0;
  // Host memory the driver does not know answers CUDA_ERROR_INVALID_VALUE.
  if (!p || driver_.sym().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, addr) !=
                CUDA_SUCCESS)
    return Status::ok();
  // Managed memory (its MEMORY_TYPE says DEVICE or HOST, never UNIFIED) is
  // reachable from any GPU: used as device memory, whatever its ordinal.
  if (driver_.sym().cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, addr) !=
      CUDA_SUCCESS)
    managed = 0;
  if (!managed && type != CU_MEMORYTYPE_DEVICE)
    return Status::ok(); // pinned host memory: copied like any host buffer
  *device = true;
  if (!managed) {
    int ordinal = -1;
    NNCC_CU_CALL(driver_, where_, cuPointerGetAttribute, &ordinal,
                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, addr);
    if (ordinal != index_)
      return error(NNCC_ERROR_INVALID_ARGUMENT,
                   format("%s '%s' is memory of cuda:%d, but the session runs on %s", what, name,
                          ordinal, where_.c_str()));
  }
  // Kernels and cuBLASLt were planned for kAlign-aligned buffers; another
  // alignment is copied into staging (on the device) instead.
  if (addr % kAlign == 0)
    *out = addr;
  return Status::ok();
}

Status CudaSession::enqueueStep(int32_t e, int32_t s) {
  const nncc_module &m = module_.abi();
  const nncc_step &st = plan_.entries[e].steps[s];
  EntryPlan &plan = entryPlans_[e];
  StepPlan &sp = plan.steps[s];
  const CUdeviceptr *args = plan.args.of(s);
  switch (st.kind) {
  case NNCC_STEP_KERNEL: {
    const nncc_kernel &k = m.kernels[st.kernel];
    for (int32_t l = 0; l < k.num_gpu_launches; ++l) {
      const nncc_gpu_launch &g = k.gpu_launches[l];
      CUresult r = driver_.sym().cuLaunchKernel(
          code_->function(st.kernel, l), g.grid[0], g.grid[1], g.grid[2], g.block[0], g.block[1],
          g.block[2], g.shared_bytes, stream_, sp.params.data(), nullptr);
      if (r != CUDA_SUCCESS) // the message is only built on failure: this is the hot path
        return driver_.check(r, "cuLaunchKernel",
                             stepWhere(e, s) + format(" (kernel '%s', '%s')", k.name, g.function));
    }
    return Status::ok();
  }
  case NNCC_STEP_GEMM:
    return sp.gemm->enqueue(args, workspace_, stream_);
  case NNCC_STEP_COPY: {
    if (st.args[1].bytes == 0)
      return Status::ok();
    CUresult r = driver_.sym().cuMemcpyDtoDAsync(args[1], args[0],
                                                 static_cast<size_t>(st.args[1].bytes), stream_);
    return r == CUDA_SUCCESS ? Status::ok()
                             : driver_.check(r, "cuMemcpyDtoDAsync", stepWhere(e, s));
  }
  case NNCC_STEP_COLLECTIVE:
    return plan.p2pRuns[s] >= 0 ? enqueuePointToPoint(e, s) : enqueueCollective(e, s, args);
  default:
    return error(NNCC_ERROR_UNSUPPORTED,
                 stepWhere(e, s) + format(": unknown step kind %d", st.kind));
  }
}

#if NNCC_RUNTIME_HAVE_NCCL
Status CudaSession::enqueueNcclGroup(const NcclRank &nccl, int32_t e, int32_t s,
                                     const std::function<ncclResult_t(const char **, int32_t *)> &calls) {
  if (nccl.aborted())
    return error(NNCC_ERROR_UNAVAILABLE,
                 stepWhere(e, s) + format(": the NCCL communicator of %s was aborted after an earlier "
                                          "error; open new sessions over a new communicator",
                                          nccl.describe().c_str()));
  const NcclSymbols &n = nccl.nccl().sym();
  const char *call = "ncclGroupStart";
  int32_t failed = s;
  ncclResult_t r = n.ncclGroupStart();
  if (r == ncclSuccess) {
    r = calls(&call, &failed);
    // The group is closed whatever failed inside it.
    ncclResult_t ended = n.ncclGroupEnd();
    if (r == ncclSuccess && ended != ncclSuccess) {
      r = ended;
      call = "ncclGroupEnd";
    }
  }
  if (r == ncclSuccess)
    return Status::ok();
  return nccl.nccl().check(r, call, stepWhere(e, failed) + " (" + nccl.describe() + ")");
}
#endif

Status CudaSession::enqueueCollective(int32_t e, int32_t s, const CUdeviceptr *args) {
  const nncc_step &st = plan_.entries[e].steps[s];
  int32_t k = st.num_args / 2;
#if NNCC_RUNTIME_HAVE_NCCL
  if (const std::shared_ptr<NcclRank> &nccl = nccl_[groupSlot(st.iparams[NNCC_COLLECTIVE_GROUP])]) {
    const NcclSymbols &n = nccl->nccl().sym();
    ncclRedOp_t op = st.iparams[NNCC_COLLECTIVE_REDUCTION] == NNCC_REDUCTION_MEAN ? ncclAvg : ncclSum;
    auto stream = reinterpret_cast<cudaStream_t>(stream_);
    void *out = reinterpret_cast<void *>(args[1]);
    const void *in = reinterpret_cast<const void *>(args[0]);
    // The single-buffer collectives move bytes (ncclInt8) or reduce f32; an
    // all-reduce's bucket is one group, which NCCL fuses into one launch,
    // with no staging copy.
    return enqueueNcclGroup(*nccl, e, s, [&](const char **call, int32_t *) {
      switch (st.iparams[NNCC_COLLECTIVE_OP]) {
      case NNCC_COLLECTIVE_ALL_GATHER:
        *call = "ncclAllGather";
        return n.ncclAllGather(in, out, static_cast<size_t>(st.args[0].bytes), ncclInt8, nccl->comm(), stream);
      case NNCC_COLLECTIVE_REDUCE_SCATTER:
        *call = "ncclReduceScatter";
        return n.ncclReduceScatter(in, out, static_cast<size_t>(st.args[1].bytes) / sizeof(float), ncclFloat32, op,
                                   nccl->comm(), stream);
      case NNCC_COLLECTIVE_BROADCAST:
        *call = "ncclBroadcast";
        return n.ncclBroadcast(in, out, static_cast<size_t>(st.args[0].bytes), ncclInt8,
                               static_cast<int>(st.iparams[NNCC_COLLECTIVE_PEER]), nccl->comm(), stream);
      default:
        break;
      }
      *call = "ncclAllReduce";
      ncclResult_t r = ncclSuccess;
      for (int32_t a = 0; a < k && r == ncclSuccess; ++a)
        if (st.args[a].bytes > 0)
          r = n.ncclAllReduce(reinterpret_cast<const void *>(args[a]), reinterpret_cast<void *>(args[k + a]),
                              static_cast<size_t>(st.args[a].bytes) / sizeof(float), ncclFloat32, op,
                              nccl->comm(), stream);
      return r;
    });
  }
#endif
  // A group of one: the mean and the sum of one rank, its gather, its part
  // and its broadcast are its values.
  for (int32_t a = 0; a < k; ++a) {
    if (st.args[a].bytes == 0 || args[a] == args[k + a])
      continue;
    CUresult r = driver_.sym().cuMemcpyDtoDAsync(args[k + a], args[a], static_cast<size_t>(st.args[a].bytes),
                                                 stream_);
    if (r != CUDA_SUCCESS)
      return driver_.check(r, "cuMemcpyDtoDAsync", stepWhere(e, s));
  }
  return Status::ok();
}

Status CudaSession::enqueuePointToPoint(int32_t e, int32_t s) {
  EntryPlan &plan = entryPlans_[e];
  int32_t end = plan.p2pRuns[s];
  if (end == 0)
    return Status::ok(); // issued with the first step of its run
  const nncc_entry &entry = plan_.entries[e];
#if NNCC_RUNTIME_HAVE_NCCL
  if (const std::shared_ptr<NcclRank> &nccl = nccl_[groupSlot(entry.steps[s].iparams[NNCC_COLLECTIVE_GROUP])]) {
    const NcclSymbols &n = nccl->nccl().sym();
    auto stream = reinterpret_cast<cudaStream_t>(stream_);
    // One group for the whole run: a send's kernel waits for its receiver,
    // so a stage's send and its next receive must progress together.
    return enqueueNcclGroup(*nccl, e, s, [&](const char **call, int32_t *failed) {
      ncclResult_t r = ncclSuccess;
      for (int32_t t = s; t < end && r == ncclSuccess; ++t) {
        const nncc_step &st = entry.steps[t];
        const CUdeviceptr *args = plan.args.of(t);
        bool send = st.iparams[NNCC_COLLECTIVE_OP] == NNCC_COLLECTIVE_SEND;
        int peer = static_cast<int>(st.iparams[NNCC_COLLECTIVE_PEER]);
        *call = send ? "ncclSend" : "ncclRecv";
        *failed = t;
        // Bytes: any dtype travels as it is.
        for (int32_t a = 0; a < st.num_args && r == ncclSuccess; ++a)
          if (st.args[a].bytes > 0)
            r = send ? n.ncclSend(reinterpret_cast<const void *>(args[a]), static_cast<size_t>(st.args[a].bytes),
                                  ncclUint8, peer, nccl->comm(), stream)
                     : n.ncclRecv(reinterpret_cast<void *>(args[a]), static_cast<size_t>(st.args[a].bytes),
                                  ncclUint8, peer, nccl->comm(), stream);
      }
      return r;
    });
  }
#endif
  // The verifier gives every send a peer in a group of two or more, whose
  // communicator the session made in init.
  return error(NNCC_ERROR_INTERNAL, stepWhere(e, s) + ": a send/recv step with no NCCL communicator for its group");
}

Status CudaSession::ncclAsyncError(int32_t e) const {
#if NNCC_RUNTIME_HAVE_NCCL
  for (const std::shared_ptr<NcclRank> &nccl : nccl_) {
    if (!nccl || !entryPlans_[e].collective || nccl->aborted())
      continue;
    ncclResult_t async = ncclSuccess;
    const Nccl &n = nccl->nccl();
    std::string where = where_ + format(": entry '%s' (%s)", plan_.entries[e].name, nccl->describe().c_str());
    NNCC_RETURN_IF_ERROR(n.check(n.sym().ncclCommGetAsyncError(nccl->comm(), &async), "ncclCommGetAsyncError", where));
    if (async != ncclInProgress)
      NNCC_RETURN_IF_ERROR(n.check(async, "a collective step", where));
  }
#else
  (void)e;
#endif
  return Status::ok();
}

CUresult CudaSession::waitForStream(int32_t e, Status *ncclError) {
#if NNCC_RUNTIME_HAVE_NCCL
  auto aborted = [&] {
    return std::any_of(std::begin(nccl_), std::end(nccl_), [](const auto &n) { return n && n->aborted(); });
  };
  bool any = std::any_of(std::begin(nccl_), std::end(nccl_), [](const auto &n) { return n != nullptr; });
  if (any && entryPlans_[e].collective) {
    while (!aborted() && driver_.sym().cuStreamQuery(stream_) == CUDA_ERROR_NOT_READY) {
      *ncclError = ncclAsyncError(e);
      if (!ncclError->isOk()) {
        // Every group: a collective of another may wait for the failed one.
        for (const std::shared_ptr<NcclRank> &nccl : nccl_)
          if (nccl)
            nccl->abort();
        *ncclError = error(ncclError->code(), ncclError->message() + "; the NCCL communicator was aborted");
        break;
      }
      std::this_thread::yield();
    }
  }
#else
  (void)e;
  (void)ncclError;
#endif
  return driver_.sym().cuStreamSynchronize(stream_);
}

Status CudaSession::enqueueSteps(int32_t e) {
  for (int32_t s = 0; s < plan_.entries[e].num_steps; ++s)
    NNCC_RETURN_IF_ERROR(enqueueStep(e, s));
  return Status::ok();
}

/// Captures the entry into a graph when it has none or the input/output
/// addresses changed since (device-pointer tensors), then launches it. A
/// changed capture updates the executable graph in place when the driver
/// can (cuGraphExecUpdate), else instantiates it anew.
Status CudaSession::launchGraph(int32_t e) {
  EntryPlan &plan = entryPlans_[e];
  size_t io = plan.staging.size();
  if (!plan.graph || !std::equal(io_.begin(), io_.begin() + io, plan.graphIo.begin())) {
    const CudaSymbols &cu = driver_.sym();
    std::string where = where_ + format(": capturing entry '%s'", plan_.entries[e].name);
    Status began = driver_.check(
        cu.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
        "cuStreamBeginCapture", where);
    Status enqueued = began.isOk() ? enqueueSteps(e) : Status::ok();
    CUgraph graph = nullptr;
    Status ended = began.isOk() ? driver_.check(cu.cuStreamEndCapture(stream_, &graph),
                                                "cuStreamEndCapture", where)
                                : Status::ok();
    if (!began.isOk() || !enqueued.isOk() || !ended.isOk()) {
      if (graph)
        cu.cuGraphDestroy(graph);
      // The stream is out of capture mode again. A plan that cannot be
      // captured still runs: eagerly, from now on (a real error in a step
      // shows up there too, with its own message).
      const Status &why = !began.isOk() ? began : !enqueued.isOk() ? enqueued : ended;
      std::fprintf(stderr,
                   "nncc: warning: %s: cannot capture a CUDA Graph (%s); running it step by "
                   "step\n",
                   where.c_str(), why.message().c_str());
      plan.graphless = true;
      return enqueueSteps(e);
    }
    if (plan.graph) {
      CUgraphExecUpdateResultInfo info{};
      if (cu.cuGraphExecUpdate(plan.graph, graph, &info) != CUDA_SUCCESS) {
        cu.cuGraphExecDestroy(plan.graph);
        plan.graph = nullptr;
      }
    }
    Status made = Status::ok();
    if (!plan.graph)
      made = driver_.check(cu.cuGraphInstantiateWithFlags(&plan.graph, graph, 0),
                           "cuGraphInstantiateWithFlags", where);
    cu.cuGraphDestroy(graph);
    NNCC_RETURN_IF_ERROR(made);
    plan.graphIo.assign(io_.begin(), io_.begin() + io);
  }
  CUresult r = driver_.sym().cuGraphLaunch(plan.graph, stream_);
  return r == CUDA_SUCCESS ? Status::ok()
                           : driver_.check(r, "cuGraphLaunch",
                                           where_ + format(": entry '%s'", plan_.entries[e].name));
}

/// Step by step, an event before each step and after the last: the profiler
/// gets each step's device time, placed on its clock at the run's start.
Status CudaSession::runProfiled(int32_t e, Profiler *profiler) {
  EntryPlan &plan = entryPlans_[e];
  int32_t steps = plan_.entries[e].num_steps;
  while (plan.events.size() < static_cast<size_t>(steps) + 1) {
    CUevent ev = nullptr;
    NNCC_CU_CALL(driver_, where_, cuEventCreate, &ev, CU_EVENT_DEFAULT);
    plan.events.push_back(ev);
  }
  // Input copies finish first, so they do not count as the first step.
  NNCC_CU_CALL(driver_, where_, cuStreamSynchronize, stream_);
  int64_t start = Profiler::now();
  NNCC_CU_CALL(driver_, where_, cuEventRecord, plan.events[0], stream_);
  for (int32_t s = 0; s < steps; ++s) {
    NNCC_RETURN_IF_ERROR(enqueueStep(e, s));
    NNCC_CU_CALL(driver_, where_, cuEventRecord, plan.events[s + 1], stream_);
  }
  NNCC_CU_CALL(driver_, where_ + format(": entry '%s'", plan_.entries[e].name),
               cuStreamSynchronize, stream_);
  float before = 0;
  for (int32_t s = 0; s < steps; ++s) {
    float after = 0;
    NNCC_CU_CALL(driver_, where_, cuEventElapsedTime, &after, plan.events[0], plan.events[s + 1]);
    profiler->recordStep(s, start + static_cast<int64_t>(before * 1e6),
                         start + static_cast<int64_t>(after * 1e6), 1);
    before = after;
  }
  return Status::ok();
}

Status CudaSession::run(int32_t e, const void *const *inputs, void *const *outputs,
                        Profiler *profiler) {
  CudaContextGuard ctx;
  NNCC_RETURN_IF_ERROR(driver_.makeCurrent(index_, &ctx));
  const nncc_entry &entry = plan_.entries[e];
  EntryPlan &plan = entryPlans_[e];
  int32_t nin = entry.num_inputs;
  // Messages are only formatted on failure: a run allocates nothing.
  auto runWhere = [&](const char *what, const char *name) {
    return where_ + format(": entry '%s' (%s '%s')", entry.name, what, name);
  };

  // Nothing of this run starts before the work queued on the caller's
  // stream so far (which may still be writing device inputs).
  const char *call = "cuEventRecord";
  CUresult waited = driver_.sym().cuEventRecord(callerReady_, callerStream_);
  if (waited == CUDA_SUCCESS) {
    call = "cuStreamWaitEvent";
    waited = driver_.sym().cuStreamWaitEvent(stream_, callerReady_, 0);
  }
  if (waited != CUDA_SUCCESS)
    return driver_.check(waited, call,
                         where_ + format(": entry '%s' (waiting for the caller's stream, "
                                         "nncc_session_options.cuda_stream)",
                                         entry.name));

  // Inputs: device memory of this GPU in place, anything else copied in.
  // After the first copy is queued every error still ends at the stream's
  // synchronization below (the first error is returned).
  Status s = Status::ok();
  for (int32_t i = 0; s.isOk() && i < nin; ++i) {
    CUdeviceptr direct = 0;
    bool onDevice = false;
    s = directAddress(inputs[i], "input", entry.inputs[i].name, &direct, &onDevice);
    if (!s.isOk())
      break;
    io_[i] = direct ? direct : arena_ + static_cast<CUdeviceptr>(plan.staging[i]);
    auto bytes = static_cast<size_t>(module_.inputBytes(e, i));
    if (direct || bytes == 0)
      continue;
    auto src = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(inputs[i]));
    CUresult r = onDevice ? driver_.sym().cuMemcpyDtoDAsync(io_[i], src, bytes, stream_)
                          : driver_.sym().cuMemcpyHtoDAsync(io_[i], inputs[i], bytes, stream_);
    if (r != CUDA_SUCCESS)
      s = driver_.check(r, onDevice ? "cuMemcpyDtoDAsync" : "cuMemcpyHtoDAsync",
                        runWhere("input", entry.inputs[i].name));
  }
  for (int32_t o = 0; s.isOk() && o < entry.num_outputs; ++o) {
    CUdeviceptr direct = 0;
    bool onDevice = false;
    s = directAddress(outputs[o], "output", entry.outputs[o].name, &direct, &onDevice);
    if (!s.isOk())
      break;
    io_[nin + o] = direct ? direct : arena_ + static_cast<CUdeviceptr>(plan.staging[nin + o]);
    // 0: in place; 1: copied out to host memory; 2: to (unaligned) device memory.
    copyOut_[o] = direct ? 0 : onDevice ? 2 : 1;
  }
  // Run-time checks: each kernel that checks sets its flag; cleared first,
  // so a failed run does not fail the next.
  for (int32_t c = 0; s.isOk() && c < entry.num_checks; ++c) {
    CUresult r = driver_.sym().cuMemsetD8Async(
        arena_ + static_cast<CUdeviceptr>(entry.checks[c].offset), 0, sizeof(int32_t), stream_);
    if (r != CUDA_SUCCESS)
      s = driver_.check(r, "cuMemsetD8Async", where_ + format(": entry '%s'", entry.name));
  }
  if (s.isOk()) {
    for (const ArgPatch &pt : plan.args.patches)
      plan.args.ptrs[pt.slot] = io_[pt.kind == NNCC_BUFFER_INPUT ? pt.index : nin + pt.index] +
                           static_cast<CUdeviceptr>(pt.offset);
    // The first run is eager: it warms up cuBLASLt and loads kernels lazily,
    // neither of which may happen inside a stream capture.
    bool graph = useGraphs_ && !plan.graphless && entry.num_steps > 0 && plan.runs++ > 0;
    s = profiler ? runProfiled(e, profiler) : graph ? launchGraph(e) : enqueueSteps(e);
  }
  for (int32_t o = 0; s.isOk() && o < entry.num_outputs; ++o) {
    auto bytes = static_cast<size_t>(module_.outputBytes(e, o));
    if (!copyOut_[o] || bytes == 0)
      continue;
    auto dst = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(outputs[o]));
    bool onDevice = copyOut_[o] == 2;
    CUresult r = onDevice
                     ? driver_.sym().cuMemcpyDtoDAsync(dst, io_[nin + o], bytes, stream_)
                     : driver_.sym().cuMemcpyDtoHAsync(outputs[o], io_[nin + o], bytes, stream_);
    if (r != CUDA_SUCCESS)
      s = driver_.check(r, onDevice ? "cuMemcpyDtoDAsync" : "cuMemcpyDtoHAsync",
                        runWhere("output", entry.outputs[o].name));
  }
  flags_.resize(static_cast<size_t>(entry.num_checks));
  for (int32_t c = 0; s.isOk() && c < entry.num_checks; ++c) {
    CUresult r = driver_.sym().cuMemcpyDtoHAsync(
        &flags_[c], arena_ + static_cast<CUdeviceptr>(entry.checks[c].offset), sizeof(int32_t),
        stream_);
    if (r != CUDA_SUCCESS)
      s = driver_.check(r, "cuMemcpyDtoHAsync", where_ + format(": entry '%s'", entry.name));
  }
  // Always synchronized, also after an error: nothing may still be reading
  // the caller's buffers when the run returns. A kernel fault surfaces here.
  Status ncclError = Status::ok();
  CUresult synced = waitForStream(e, &ncclError);
  if (s.isOk())
    s = ncclError;
  if (s.isOk() && synced != CUDA_SUCCESS)
    s = driver_.check(synced, "cuStreamSynchronize",
                      where_ + format(": entry '%s'", entry.name));
  if (s.isOk())
    s = ncclAsyncError(e);
  if (s.isOk())
    s = failedChecks(entry, flags_.data());
  return s;
}

} // namespace

int cudaDeviceCount() {
  const CudaDriver *driver = nullptr;
  return CudaDriver::get(&driver).isOk() ? driver->deviceCount() : 0;
}

Status createCudaSession(const Module &module, int index, const SessionConfig &config,
                         std::unique_ptr<DeviceSession> *out) {
  // A plan whose sends and receives would wait for each other over NCCL
  // is refused alike on every rank (it depends on the module alone), before
  // any GPU work.
  NNCC_RETURN_IF_ERROR(checkPointToPointOrder(module.abi(), *config.plan, "cuda:" + std::to_string(index)));
  const CudaDriver *driver = nullptr;
  NNCC_RETURN_IF_ERROR(
      CudaDriver::get(&driver).prefix("cannot open device cuda:" + std::to_string(index) + ": "));
  auto session = std::make_unique<CudaSession>(module, *driver, index, config);
  NNCC_RETURN_IF_ERROR(session->init());
  *out = std::move(session);
  return Status::ok();
}

} // namespace nncc::rt
