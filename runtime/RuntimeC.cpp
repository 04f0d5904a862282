//===- RuntimeC.cpp - the C ABI of include/nncc/runtime.h -----------------===//
//
// Thin: converts handles, records the thread-local error message and makes
// sure no C++ exception (std::bad_alloc from a container) crosses the C
// boundary.
//
//===----------------------------------------------------------------------===//
#include "DType.h"
#include "Device.h"
#include "Module.h"
#include "Checkpoint.h"
#include "OnnxExport.h"
#include "Session.h"
#include "cpu/Blas.h"
#if NNCC_RUNTIME_HAVE_CUDA
#include "cuda/CudaInfo.h"
#include <cuda.h>
#endif
#if NNCC_RUNTIME_HAVE_NCCL
#include "cuda/NcclCommunicator.h"
#endif

#include <atomic>
#include <cstdlib>
#include <new>

using nncc::rt::Module;
using nncc::rt::Session;
using nncc::rt::Status;
using nncc::rt::Communicator;
using nncc::rt::SelfCommunicator;
using nncc::rt::createMpiCommunicator;
using nncc::rt::format;


namespace {

thread_local std::string lastError;

// The opaque C handles are never defined: a handle is the C++ object's
// pointer, cast back and forth.
Module *unwrap(nncc_module_handle *m) { return reinterpret_cast<Module *>(m); }
const Module *unwrap(const nncc_module_handle *m) { return reinterpret_cast<const Module *>(m); }
Session *unwrap(nncc_session *s) { return reinterpret_cast<Session *>(s); }
const Session *unwrap(const nncc_session *s) { return reinterpret_cast<const Session *>(s); }

/// The plan for devices of `kind` ("cpu", "cuda"; NULL: the first), or null.
const nncc_plan *planOf(const Module &m, const char *kind) {
  if (!kind)
    return &m.abi().plans[0];
  std::string k = kind;
  return k == "cpu" ? m.plan(NNCC_DEVICE_CPU) : k == "cuda" ? m.plan(NNCC_DEVICE_CUDA) : nullptr;
}

nncc_status report(const Status &s) {
  if (s.isOk())
    lastError.clear();
  else
    lastError = s.message();
  return s.code();
}

/// Runs `fn` (returning a Status), reporting its result and any exception.
template <typename Fn> nncc_status guarded(Fn &&fn) {
  try {
    return report(fn());
  } catch (const std::bad_alloc &) {
    return report(Status(NNCC_ERROR_OUT_OF_MEMORY, "out of memory"));
  } catch (const std::exception &e) {
    return report(Status(NNCC_ERROR_INTERNAL, std::string("internal error: ") + e.what()));
  } catch (...) {
    return report(Status(NNCC_ERROR_INTERNAL, "internal error: unknown exception"));
  }
}

Status nullArgument(const char *fn) {
  return Status(NNCC_ERROR_INVALID_ARGUMENT, std::string(fn) + ": NULL argument");
}

Status notProfiling() {
  return Status(NNCC_ERROR_UNAVAILABLE,
                "this session does not profile (set nncc_session_options.profile or NNCC_PROFILE)");
}

} // namespace

extern "C" {

const char *nncc_last_error(void) { return lastError.c_str(); }

const char *nncc_status_name(nncc_status status) {
  switch (status) {
  case NNCC_OK: return "NNCC_OK";
  case NNCC_ERROR_INVALID_ARGUMENT: return "NNCC_ERROR_INVALID_ARGUMENT";
  case NNCC_ERROR_NOT_FOUND: return "NNCC_ERROR_NOT_FOUND";
  case NNCC_ERROR_INVALID_MODULE: return "NNCC_ERROR_INVALID_MODULE";
  case NNCC_ERROR_ABI_MISMATCH: return "NNCC_ERROR_ABI_MISMATCH";
  case NNCC_ERROR_INVALID_INPUT: return "NNCC_ERROR_INVALID_INPUT";
  case NNCC_ERROR_UNAVAILABLE: return "NNCC_ERROR_UNAVAILABLE";
  case NNCC_ERROR_UNSUPPORTED: return "NNCC_ERROR_UNSUPPORTED";
  case NNCC_ERROR_OUT_OF_MEMORY: return "NNCC_ERROR_OUT_OF_MEMORY";
  case NNCC_ERROR_INTERNAL: return "NNCC_ERROR_INTERNAL";
  }
  return "NNCC_ERROR_UNKNOWN";
}

const char *nncc_runtime_version(void) { return NNCC_RUNTIME_VERSION; }
uint32_t nncc_runtime_module_abi_version(void) { return NNCC_MODULE_ABI_VERSION; }

int32_t nncc_device_count(const char *kind) {
  if (!kind)
    return 0;
  std::string k = kind;
  if (k == "cpu")
    return nncc::rt::deviceCount(nncc::rt::DeviceSpec::Cpu);
  if (k == "cuda")
    return nncc::rt::deviceCount(nncc::rt::DeviceSpec::Cuda);
  return 0;
}

const char *nncc_dtype_name(int32_t dtype) { return nncc::rt::dtypeName(dtype); }
size_t nncc_dtype_size(int32_t dtype) { return nncc::rt::dtypeSize(dtype); }

nncc_status nncc_module_load(const char *path, nncc_module_handle **out) {
  return guarded([&]() -> Status {
    if (!path || !out)
      return Status(NNCC_ERROR_INVALID_ARGUMENT, "nncc_module_load: path and out must not be NULL");
    Module *m = nullptr;
    Status s = Module::load(path, &m);
    if (s.isOk())
      *out = reinterpret_cast<nncc_module_handle *>(m);
    return s;
  });
}

void nncc_module_retain(nncc_module_handle *module) {
  if (module)
    unwrap(module)->retain();
}

void nncc_module_release(nncc_module_handle *module) {
  if (module)
    unwrap(module)->release();
}

const char *nncc_module_producer(const nncc_module_handle *module) {
  return module ? unwrap(module)->producer() : "";
}

const char *nncc_module_cpu_name(const nncc_module_handle *module) {
  return module && unwrap(module)->abi().cpu_name ? unwrap(module)->abi().cpu_name : "";
}

const char *nncc_module_cpu_features(const nncc_module_handle *module) {
  return module && unwrap(module)->abi().cpu_features ? unwrap(module)->abi().cpu_features : "";
}

int32_t nncc_module_num_entries(const nncc_module_handle *module) {
  return module ? unwrap(module)->numEntries() : 0;
}

nncc_status nncc_module_entry_info(const nncc_module_handle *module, int32_t index,
                                   nncc_entry_info *out) {
  return guarded([&]() -> Status {
    if (!module || !out)
      return nullArgument("nncc_module_entry_info");
    const Module &m = *unwrap(module);
    if (index < 0 || index >= m.numEntries())
      return Status(NNCC_ERROR_NOT_FOUND,
                    nncc::rt::format("entry index %d out of range (the module has %d entries)",
                                     index, m.numEntries()));
    const nncc_entry &e = m.entry(index);
    *out = nncc_entry_info{e.name,        e.num_inputs,  e.inputs,   e.num_outputs,
                           e.outputs,     e.arena_bytes, e.num_steps};
    return Status::ok();
  });
}

nncc_status nncc_module_find_entry(const nncc_module_handle *module, const char *name,
                                   int32_t *index) {
  return guarded([&]() -> Status {
    if (!module || !name || !index)
      return nullArgument("nncc_module_find_entry");
    const Module &m = *unwrap(module);
    int32_t i = m.findEntry(name);
    if (i < 0)
      return Status(NNCC_ERROR_NOT_FOUND, "unknown entry '" + std::string(name) +
                                              "' (the module has " + m.entryNames() + ")");
    *index = i;
    return Status::ok();
  });
}

int32_t nncc_module_num_states(const nncc_module_handle *module) {
  return module ? unwrap(module)->abi().num_states : 0;
}

nncc_status nncc_module_state_info(const nncc_module_handle *module, int32_t index,
                                   nncc_tensor_desc *out) {
  return guarded([&]() -> Status {
    if (!module || !out)
      return nullArgument("nncc_module_state_info");
    const nncc_module &m = unwrap(module)->abi();
    if (index < 0 || index >= m.num_states)
      return Status(NNCC_ERROR_INVALID_ARGUMENT,
                    nncc::rt::format("state index %d out of range (the module has %d states)", index,
                           m.num_states));
    *out = unwrap(module)->stateDesc(index); // a sharded state's whole tensor
    return Status::ok();
  });
}

nncc_status nncc_module_parallel(const nncc_module_handle *module, int32_t *data_parallel,
                                 int32_t *pipeline_parallel, int32_t *tensor_parallel) {
  return guarded([&]() -> Status {
    if (!module || !data_parallel || !pipeline_parallel || !tensor_parallel)
      return nullArgument("nncc_module_parallel");
    *data_parallel = unwrap(module)->abi().data_parallel;
    *pipeline_parallel = unwrap(module)->abi().pipeline_parallel;
    *tensor_parallel = unwrap(module)->abi().tensor_parallel;
    return Status::ok();
  });
}

int64_t nncc_module_weights_bytes(const nncc_module_handle *module) {
  return module ? unwrap(module)->weightsBytes() : 0;
}

int32_t nncc_module_runs_on(const nncc_module_handle *module, const char *kind) {
  if (!module || !kind)
    return 0;
  std::string k = kind;
  const nncc_plan *plan = planOf(*unwrap(module), kind);
  if (!plan)
    return 0;
  const nncc_module &m = unwrap(module)->abi();
  if (k == "cuda" && m.num_gpu_images == 0)
    return 0;
  for (int32_t e = 0; e < plan->num_entries; ++e)
    for (int32_t s = 0; s < plan->entries[e].num_steps; ++s) {
      const nncc_step &st = plan->entries[e].steps[s];
      if (st.kind != NNCC_STEP_KERNEL)
        continue;
      const nncc_kernel &kernel = m.kernels[st.kernel];
      if (k == "cpu" ? !kernel.cpu : kernel.num_gpu_launches == 0)
        return 0;
    }
  return 1;
}

int32_t nncc_module_num_steps(const nncc_module_handle *module, const char *kind, int32_t entry) {
  return nncc_module_stage_num_steps(module, kind, entry, 0);
}

int32_t nncc_module_stage_num_steps(const nncc_module_handle *module, const char *kind, int32_t entry,
                                    int32_t stage) {
  if (!module)
    return -1;
  const Module &m = *unwrap(module);
  const nncc_plan *plan = planOf(m, kind);
  if (!plan || entry < 0 || entry >= m.numEntries() || stage < 0 || stage >= m.abi().pipeline_parallel)
    return -1;
  return plan->entries[m.planEntry(entry, stage)].num_steps;
}

nncc_status nncc_module_step_info(const nncc_module_handle *module, const char *kind, int32_t entry,
                                  int32_t step, nncc_step_info *out) {
  return nncc_module_stage_step_info(module, kind, entry, 0, step, out);
}

nncc_status nncc_module_stage_step_info(const nncc_module_handle *module, const char *kind, int32_t entry,
                                        int32_t stage, int32_t step, nncc_step_info *out) {
  return guarded([&]() -> Status {
    if (!module || !out)
      return nullArgument("nncc_module_step_info");
    const Module &m = *unwrap(module);
    const nncc_plan *plan = planOf(m, kind);
    if (!plan)
      return Status(NNCC_ERROR_NOT_FOUND, nncc::rt::format("the module has no plan for '%s' devices (it has "
                                                           "plans for %s)",
                                                           kind, m.planKinds().c_str()));
    if (entry < 0 || entry >= m.numEntries())
      return Status(NNCC_ERROR_NOT_FOUND,
                    nncc::rt::format("entry index %d out of range (the module has %d entries)",
                                     entry, m.numEntries()));
    if (stage < 0 || stage >= m.abi().pipeline_parallel)
      return Status(NNCC_ERROR_NOT_FOUND,
                    nncc::rt::format("pipeline stage %d out of range (the module has %d)", stage,
                                     m.abi().pipeline_parallel));
    const nncc_entry &e = plan->entries[m.planEntry(entry, stage)];
    if (step < 0 || step >= e.num_steps)
      return Status(NNCC_ERROR_NOT_FOUND,
                    nncc::rt::format("step %d out of range (entry '%s' has %d steps)", step,
                                     e.name, e.num_steps));
    const nncc_step &st = e.steps[step];
    int64_t bytes = 0;
    for (int32_t a = 0; a < st.num_args; ++a)
      bytes += st.args[a].bytes;
    const char *kind = st.kind == NNCC_STEP_KERNEL       ? "kernel"
                       : st.kind == NNCC_STEP_GEMM       ? "gemm"
                       : st.kind == NNCC_STEP_COPY       ? "copy"
                       : st.kind == NNCC_STEP_COLLECTIVE ? "collective"
                                                         : "unknown";
    *out = nncc_step_info{st.name ? st.name : "", kind,
                          st.kind == NNCC_STEP_KERNEL ? m.abi().kernels[st.kernel].name : "",
                          bytes, st.parallel_extent};
    return Status::ok();
  });
}

void nncc_session_options_init(nncc_session_options *options) {
  if (!options)
    return;
  options->struct_size = sizeof(nncc_session_options);
  options->threads = 0;
  options->profile = nullptr;
  options->cuda_stream = nullptr;
  options->communicator = nullptr;
}

nncc_status nncc_session_create(nncc_module_handle *module, const char *device,
                                const nncc_session_options *options, nncc_session **out) {
  return guarded([&]() -> Status {
    if (!out)
      return nullArgument("nncc_session_create");
    Session *s = nullptr;
    Status st = Session::create(unwrap(module), device, options, &s);
    if (st.isOk())
      *out = reinterpret_cast<nncc_session *>(s);
    return st;
  });
}

void nncc_session_destroy(nncc_session *session) { delete unwrap(session); }

int64_t nncc_session_allocated_bytes(const nncc_session *session) {
  return session ? unwrap(session)->allocatedBytes() : 0;
}

nncc_status nncc_session_state_bytes(const nncc_session *session, int64_t *bytes) {
  return guarded([&]() -> Status {
    if (!session || !bytes)
      return nullArgument("nncc_session_state_bytes");
    *bytes = unwrap(session)->stateBytes();
    return Status::ok();
  });
}

const char *nncc_session_device(const nncc_session *session) {
  return session ? unwrap(session)->deviceName().c_str() : "";
}

int32_t nncc_session_threads(const nncc_session *session) {
  return session ? unwrap(session)->threads() : 0;
}

int32_t nncc_session_pipeline_stage(const nncc_session *session) {
  return session ? unwrap(session)->stage() : 0;
}

nncc_status nncc_session_run(nncc_session *session, const char *entry, const nncc_tensor *inputs,
                             int32_t num_inputs, nncc_tensor *outputs, int32_t num_outputs) {
  return guarded([&]() -> Status {
    if (!session)
      return nullArgument("nncc_session_run");
    return unwrap(session)->run(entry, inputs, num_inputs, outputs, num_outputs);
  });
}

nncc_status nncc_session_read_state(nncc_session *session, const char *name, void *data,
                                    int64_t bytes) {
  return guarded([&]() -> Status {
    if (!session || !name)
      return nullArgument("nncc_session_read_state");
    return unwrap(session)->readState(name, data, bytes);
  });
}

nncc_status nncc_session_write_state(nncc_session *session, const char *name, const void *data,
                                     int64_t bytes) {
  return guarded([&]() -> Status {
    if (!session || !name)
      return nullArgument("nncc_session_write_state");
    return unwrap(session)->writeState(name, data, bytes);
  });
}

nncc_status nncc_session_save_checkpoint(nncc_session *session, const char *path) {
  return guarded([&]() -> Status {
    if (!session)
      return nullArgument("nncc_session_save_checkpoint");
    return saveCheckpoint(*unwrap(session), path);
  });
}

nncc_status nncc_session_load_checkpoint(nncc_session *session, const char *path) {
  return guarded([&]() -> Status {
    if (!session)
      return nullArgument("nncc_session_load_checkpoint");
    return loadCheckpoint(*unwrap(session), path);
  });
}

nncc_status nncc_session_export_onnx(nncc_session *session, const char *original_onnx,
                                     const char *output_onnx) {
  return guarded([&]() -> Status {
    if (!session)
      return nullArgument("nncc_session_export_onnx");
    return exportOnnx(*unwrap(session), original_onnx, output_onnx);
  });
}

const char *nncc_session_profile_path(const nncc_session *session) {
  if (!session || !unwrap(session)->profiler())
    return "";
  return unwrap(session)->profiler()->path().c_str();
}

nncc_status nncc_session_set_profiling(nncc_session *session, int32_t enabled) {
  return guarded([&]() -> Status {
    if (!session)
      return nullArgument("nncc_session_set_profiling");
    if (!unwrap(session)->profiler())
      return notProfiling();
    unwrap(session)->setProfiling(enabled != 0);
    return Status::ok();
  });
}

nncc_status nncc_session_profile_stats(const nncc_session *session, int32_t entry, int32_t step,
                                       nncc_profile_stats *out) {
  return guarded([&]() -> Status {
    if (!session || !out)
      return nullArgument("nncc_session_profile_stats");
    const Session &s = *unwrap(session);
    if (!s.profiler())
      return notProfiling();
    const Module &m = s.module();
    if (entry < 0 || entry >= m.numEntries())
      return Status(NNCC_ERROR_NOT_FOUND,
                    nncc::rt::format("entry index %d out of range (the module has %d entries)",
                                     entry, m.numEntries()));
    const nncc_entry &planned = s.plan().entries[s.planEntry(entry)];
    if (step < -1 || step >= planned.num_steps)
      return Status(NNCC_ERROR_NOT_FOUND,
                    nncc::rt::format("step %d out of range (entry '%s' has %d steps)", step,
                                     planned.name, planned.num_steps));
    nncc::rt::Profiler::Stat st = s.profileStats(entry, step);
    *out = nncc_profile_stats{st.calls, st.totalNs, st.minNs, st.maxNs};
    return Status::ok();
  });
}

#if NNCC_RUNTIME_HAVE_CUDA
int32_t nncc_cuda_build_version(void) { return CUDA_VERSION; }
#define NNCC_IF_CUDA(expr) expr
#else
int32_t nncc_cuda_build_version(void) { return 0; }
#define NNCC_IF_CUDA(expr)                                                                         \
  Status(NNCC_ERROR_UNAVAILABLE, "this runtime was built without CUDA support")
#endif

nncc_status nncc_cuda_driver_info(int32_t *version, const char **library) {
  return guarded([&]() -> Status {
    if (!version || !library)
      return nullArgument("nncc_cuda_driver_info");
    return NNCC_IF_CUDA(nncc::rt::queryCudaDriver(version, library));
  });
}

nncc_status nncc_cuda_get_device_info(int32_t index, nncc_cuda_device_info *out) {
  return guarded([&]() -> Status {
    if (!out)
      return nullArgument("nncc_cuda_get_device_info");
    return NNCC_IF_CUDA(nncc::rt::queryCudaDevice(index, out));
  });
}

nncc_status nncc_cuda_get_peer_info(int32_t from, int32_t to, nncc_cuda_peer_info *out) {
  return guarded([&]() -> Status {
    if (!out)
      return nullArgument("nncc_cuda_get_peer_info");
    return NNCC_IF_CUDA(nncc::rt::queryCudaPeer(from, to, out));
  });
}

nncc_status nncc_cuda_group_devices(const int32_t *devices, int32_t count, int32_t group_size, int32_t *out) {
  return guarded([&]() -> Status {
    if ((!devices || !out) && count > 0)
      return nullArgument("nncc_cuda_group_devices");
    return NNCC_IF_CUDA(nncc::rt::groupCudaDevices(devices, count, group_size, out));
  });
}

nncc_status nncc_cublaslt_info(int64_t *version, const char **library) {
  return guarded([&]() -> Status {
    if (!version || !library)
      return nullArgument("nncc_cublaslt_info");
    return NNCC_IF_CUDA(nncc::rt::queryCublasLt(version, library));
  });
}

nncc_status nncc_cpu_blas_info(const char **library) {
  return guarded([&]() -> Status {
    if (!library)
      return nullArgument("nncc_cpu_blas_info");
    const nncc::rt::Blas *blas = nullptr;
    NNCC_RETURN_IF_ERROR(nncc::rt::Blas::get(&blas));
    *library = blas->library().c_str();
    return Status::ok();
  });
}

nncc_status nncc_cpu_blas_kernels(const char **kernels) {
  return guarded([&]() -> Status {
    if (!kernels)
      return nullArgument("nncc_cpu_blas_kernels");
    const nncc::rt::Blas *blas = nullptr;
    NNCC_RETURN_IF_ERROR(nncc::rt::Blas::get(&blas));
    *kernels = blas->kernels().c_str();
    return Status::ok();
  });
}

void nncc_buffer_free(void *data) { std::free(data); }

} // extern "C"

// --- communicators ---

namespace {

/// What an nncc_communicator handle points to: a reference count for the C
/// caller and the shared communicator sessions also hold.
struct CommunicatorHandle {
  std::atomic<int> refs{1};
  std::shared_ptr<Communicator> comm;
};

CommunicatorHandle *unwrap(nncc_communicator *c) { return reinterpret_cast<CommunicatorHandle *>(c); }
const CommunicatorHandle *unwrap(const nncc_communicator *c) {
  return reinterpret_cast<const CommunicatorHandle *>(c);
}

nncc_status wrapCommunicator(Status (*create)(std::shared_ptr<Communicator> *), nncc_communicator **out,
                             const char *fn) {
  return guarded([&]() -> Status {
    if (!out)
      return nullArgument(fn);
    auto handle = std::make_unique<CommunicatorHandle>();
    NNCC_RETURN_IF_ERROR(create(&handle->comm));
    *out = reinterpret_cast<nncc_communicator *>(handle.release());
    return Status::ok();
  });
}

Status createSelf(std::shared_ptr<Communicator> *out) {
  *out = std::make_shared<SelfCommunicator>();
  return Status::ok();
}

} // namespace

std::shared_ptr<Communicator> nncc::rt::communicatorOf(nncc_communicator *handle) {
  return handle ? unwrap(handle)->comm : nullptr;
}

nncc_status nncc_communicator_create_mpi(nncc_communicator **out) {
  return wrapCommunicator(createMpiCommunicator, out, "nncc_communicator_create_mpi");
}

nncc_status nncc_communicator_create_self(nncc_communicator **out) {
  return wrapCommunicator(createSelf, out, "nncc_communicator_create_self");
}

nncc_status nncc_communicator_create_nccl_local(const int32_t *devices, int32_t count, nncc_communicator **out) {
  return guarded([&]() -> Status {
    if (!devices || !out || count < 1)
      return nullArgument("nncc_communicator_create_nccl_local");
#if NNCC_RUNTIME_HAVE_NCCL
    std::vector<std::shared_ptr<Communicator>> comms;
    NNCC_RETURN_IF_ERROR(nncc::rt::createNcclLocalCommunicators(std::vector<int>(devices, devices + count), &comms));
    for (int32_t r = 0; r < count; ++r) {
      auto handle = std::make_unique<CommunicatorHandle>();
      handle->comm = comms[r];
      out[r] = reinterpret_cast<nncc_communicator *>(handle.release());
    }
    return Status::ok();
#else
    return Status(NNCC_ERROR_UNAVAILABLE, "this runtime was built without NCCL support (no nccl.h in the CUDA toolkit)");
#endif
  });
}

void nncc_communicator_retain(nncc_communicator *comm) {
  if (comm)
    unwrap(comm)->refs.fetch_add(1);
}

void nncc_communicator_release(nncc_communicator *comm) {
  if (comm && unwrap(comm)->refs.fetch_sub(1) == 1)
    delete unwrap(comm);
}

int32_t nncc_communicator_rank(const nncc_communicator *comm) { return comm ? unwrap(comm)->comm->rank() : 0; }
int32_t nncc_communicator_size(const nncc_communicator *comm) { return comm ? unwrap(comm)->comm->size() : 1; }
const char *nncc_communicator_backend(const nncc_communicator *comm) {
  return comm ? unwrap(comm)->comm->backend() : "self";
}

nncc_status nncc_communicator_all_reduce_f32(nncc_communicator *comm, float *data, int64_t count, int32_t mean) {
  return guarded([&]() -> Status {
    if (!comm || (!data && count > 0) || count < 0)
      return nullArgument("nncc_communicator_all_reduce_f32");
    return unwrap(comm)->comm->allReduceF32(data, count, mean != 0);
  });
}

nncc_status nncc_communicator_time_all_reduce(nncc_communicator *comm, int64_t bytes, int32_t warmup, int32_t iters,
                                              double *seconds) {
  return guarded([&]() -> Status {
    if (!comm || !seconds)
      return nullArgument("nncc_communicator_time_all_reduce");
#if NNCC_RUNTIME_HAVE_NCCL
    return nncc::rt::timeNcclAllReduce(*unwrap(comm)->comm, bytes, warmup, iters, seconds);
#else
    return Status(NNCC_ERROR_UNAVAILABLE, "this runtime was built without NCCL support (no nccl.h in the CUDA toolkit)");
#endif
  });
}

nncc_status nncc_communicator_broadcast(nncc_communicator *comm, void *data, int64_t bytes, int32_t root) {
  return guarded([&]() -> Status {
    if (!comm || (!data && bytes > 0) || bytes < 0)
      return nullArgument("nncc_communicator_broadcast");
    if (root < 0 || root >= unwrap(comm)->comm->size())
      return Status(NNCC_ERROR_INVALID_ARGUMENT, format("broadcast root %d is no rank of a world of %d", root,
                                                         unwrap(comm)->comm->size()));
    return unwrap(comm)->comm->broadcast(data, bytes, root);
  });
}

nncc_status nncc_communicator_barrier(nncc_communicator *comm) {
  return guarded([&]() -> Status {
    if (!comm)
      return nullArgument("nncc_communicator_barrier");
    return unwrap(comm)->comm->barrier();
  });
}

void nncc_communicator_abort(nncc_communicator *comm, int32_t code) {
  if (comm)
    unwrap(comm)->comm->abort(code);
}
