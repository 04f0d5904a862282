/* nncc runtime C ABI: load a compiled model.so, open sessions on a device,
 * run entry points.
 *
 * Errors: every call that can fail returns an nncc_status. NNCC_OK is 0; on
 * any other value, nncc_last_error() returns a message saying what failed and
 * why (e.g. "input 'x': expected f32[1,64], got f32[1,32]"). The message is
 * thread-local: it belongs to the calling thread and stays valid until that
 * thread's next call returning an nncc_status, which sets it ("" on success).
 * Calls without a status (queries, release/destroy) never fail: they accept
 * NULL handles and leave the message alone.
 *
 * Thread safety:
 *  - A module is immutable after nncc_module_load and reference counted: any
 *    number of threads and sessions may use it at once.
 *  - A session may be shared by threads: calls of nncc_session_run on one
 *    session are serialized (a call waits until the running one returns, as
 *    they share the session's arena), so they are safe but not concurrent.
 *    Different sessions run concurrently: open N sessions for N concurrent
 *    requests; they share the module's weights.
 *
 * Memory:
 *  - Inputs are caller memory, read in place without a copy; it must stay
 *    valid and unmodified until nncc_session_run returns. On a CUDA session,
 *    a data pointer may also be device memory (a CUdeviceptr cast to void *):
 *    the runtime asks the driver (cuPointerGetAttribute) and uses memory of
 *    the session's GPU in place when it is 256-byte aligned (cuMemAlloc's
 *    alignment); host memory, and other device memory, is copied to and from
 *    the session's staging buffers. Device memory of another GPU is an
 *    error. The same holds for outputs with data != NULL. Each run first
 *    waits (on the device) for the work queued on the caller's stream,
 *    nncc_session_options.cuda_stream: by default the legacy default stream.
 *  - A session allocates its arena (device memory, 64-byte aligned) once, at
 *    creation: one allocation sized for the largest entry point, zeroed.
 *    nncc_session_allocated_bytes reports it. Running allocates nothing,
 *    except the output buffers a caller asks the runtime for (below).
 *  - Outputs: the caller lists every output of the entry by name. An output
 *    with data != NULL is written in place (its dtype and dims must match the
 *    signature, and it may not overlap an input or another output: the
 *    compiled kernels assume separate buffers). An output with data == NULL is allocated by the runtime
 *    (64-byte aligned, not counted by the session): nncc_session_run sets
 *    data, dtype, rank and dims (dims points into the module; valid while the
 *    module lives); the caller owns data and frees it with nncc_buffer_free.
 */
#ifndef NNCC_RUNTIME_H
#define NNCC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "nncc/module_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define NNCC_RUNTIME_API
#else
#define NNCC_RUNTIME_API __attribute__((visibility("default")))
#endif

#define NNCC_RUNTIME_VERSION "0.1.0"

typedef enum nncc_status {
  NNCC_OK = 0,
  NNCC_ERROR_INVALID_ARGUMENT = 1, /* bad argument: NULL handle, bad option, malformed device string */
  NNCC_ERROR_NOT_FOUND = 2,        /* missing file, entry point or symbol */
  NNCC_ERROR_INVALID_MODULE = 3,   /* truncated/corrupt .so, bad magic, checksum, inconsistent plan */
  NNCC_ERROR_ABI_MISMATCH = 4,     /* module built for another NNCC_MODULE_ABI_VERSION */
  NNCC_ERROR_INVALID_INPUT = 5,    /* inputs/outputs do not match the entry's signature */
  NNCC_ERROR_UNAVAILABLE = 6,      /* device or library (CUDA, BLAS) not available here */
  NNCC_ERROR_UNSUPPORTED = 7,      /* plan feature this runtime does not implement */
  NNCC_ERROR_OUT_OF_MEMORY = 8,
  NNCC_ERROR_INTERNAL = 9
} nncc_status;

typedef struct nncc_module_handle nncc_module_handle;
typedef struct nncc_session nncc_session;
/** The ranks a session's collective steps run between (docs/distributed.md). */
typedef struct nncc_communicator nncc_communicator;

/** A tensor passed to nncc_session_run (see "Memory" above). */
typedef struct nncc_tensor {
  const char *name;     /* signature name of the input/output */
  int32_t dtype;        /* nncc_dtype */
  int32_t rank;
  const int64_t *dims;  /* rank entries */
  void *data;           /* caller memory; NULL on an output = allocate it */
} nncc_tensor;

/** Signature and requirements of one entry point. Pointers stay valid while
 *  the module is alive. A module carries one plan per device kind it was
 *  compiled for (the CPU's with direct kernels, a GPU's with cuBLASLt calls);
 *  arena_bytes and num_steps are those of its first plan (the CPU plan when it
 *  has one): nncc_module_step_info takes the kind. A pipeline-parallel module
 *  (P > 1 stages) has one variant of each entry per stage, with the same
 *  signature: the entry functions list each name once (arena_bytes and
 *  num_steps: stage 0's variant), a session runs its own stage's variant
 *  under the same name and index (nncc_session_pipeline_stage), and
 *  nncc_module_stage_step_info shows any stage's steps. */
typedef struct nncc_entry_info {
  const char *name;
  int32_t num_inputs;
  const nncc_tensor_desc *inputs;
  int32_t num_outputs;
  const nncc_tensor_desc *outputs;
  int64_t arena_bytes;
  int32_t num_steps;
} nncc_entry_info;

/** One step of an entry's execution plan (for profiles and tools). Strings
 *  point into the module. */
typedef struct nncc_step_info {
  const char *name;        /* the ONNX node name(s) it computes; "" when not recorded */
  const char *kind;        /* "kernel", "gemm", "copy" or "collective" */
  const char *kernel;      /* kernel name of a "kernel" step, else "" */
  int64_t bytes;           /* sum of the sizes of the buffer regions it reads and writes */
  int64_t parallel_extent; /* kernel steps: the range split over threads (0/1 = not split) */
} nncc_step_info;

/** Session options. Initialize with nncc_session_options_init: struct_size
 *  lets later runtimes append fields without breaking older callers. */
typedef struct nncc_session_options {
  uint32_t struct_size; /* sizeof(nncc_session_options) */
  int32_t threads;      /* CPU threads running kernels (the caller included); 0 = all cores */
  /* Profiling: the Chrome trace-event JSON file to write (one event per
   * executed plan step and per run; docs/runtime.md, "Profiling"). NULL (the
   * default) = the NNCC_PROFILE environment variable decides; "" = off. */
  const char *profile;
  /* CUDA sessions: the CUstream (cast to void *) whose work each run waits
   * for before it reads its inputs (docs/runtime.md, "Device pointers and
   * streams"). The run queues an event on this stream and makes its own
   * stream wait for it, so device inputs written by work queued there are
   * complete, without the host waiting. NULL (the default) = the legacy
   * default stream (CU_STREAM_LEGACY): work on it and on every blocking
   * stream of the context, i.e. what cudaMemcpy and kernels launched
   * without a stream queue. CU_STREAM_PER_THREAD names the calling thread's
   * per-thread default stream. Runs stay synchronous: outputs are complete
   * when nncc_session_run returns, so later work on any stream may read
   * them. Ignored by CPU sessions. */
  void *cuda_stream;
  /* The communicator the session's collective steps (data-parallel
   * gradient all-reduces) run over; the session holds a reference. NULL (the
   * default) = a world of one rank, where a module compiled for more ranks
   * is refused. */
  nncc_communicator *communicator;
} nncc_session_options;

/** Totals a profiling session keeps (nncc_session_profile_stats). */
typedef struct nncc_profile_stats {
  int64_t calls;    /* profiled executions (of the step, or runs of the entry) */
  int64_t total_ns; /* their summed wall-clock time, nanoseconds */
  int64_t min_ns;   /* the fastest and slowest of them (0 without calls) */
  int64_t max_ns;
} nncc_profile_stats;

/* --- errors and versions --- */

/** Message of the calling thread's last failed nncc_* call ("" after a success). */
NNCC_RUNTIME_API const char *nncc_last_error(void);
/** Name of a status code ("NNCC_ERROR_NOT_FOUND"). */
NNCC_RUNTIME_API const char *nncc_status_name(nncc_status status);
NNCC_RUNTIME_API const char *nncc_runtime_version(void);
/** The NNCC_MODULE_ABI_VERSION this runtime loads. */
NNCC_RUNTIME_API uint32_t nncc_runtime_module_abi_version(void);
/** Number of devices of a kind: "cpu" 1, "cuda" what the CUDA driver reports
 *  (0 without a driver or GPU). */
NNCC_RUNTIME_API int32_t nncc_device_count(const char *kind);
/** Name of a dtype ("f32", "i64", "bool"...), or "?" when unknown. */
NNCC_RUNTIME_API const char *nncc_dtype_name(int32_t dtype);
/** Bytes per element of a dtype, or 0 when unknown. */
NNCC_RUNTIME_API size_t nncc_dtype_size(int32_t dtype);

/* --- modules --- */

/** Loads a compiled model.so: dlopen, then checks magic, ABI version, struct
 *  size, the plan's consistency and the weights (embedded, or a side file
 *  next to the .so that is memory-mapped; size and FNV-1a checksum). On
 *  success *out holds one reference. */
NNCC_RUNTIME_API nncc_status nncc_module_load(const char *path, nncc_module_handle **out);
NNCC_RUNTIME_API void nncc_module_retain(nncc_module_handle *module);
/** Drops a reference; the module is unloaded with its last session. NULL is a no-op. */
NNCC_RUNTIME_API void nncc_module_release(nncc_module_handle *module);
/** The producer string the compiler recorded ("nncc 0.1.0"). */
NNCC_RUNTIME_API const char *nncc_module_producer(const nncc_module_handle *module);

/** The CPU the module's host code was compiled for (`nncc --cpu`:
 * "x86-64-v3"...) and the x86 features it needs, comma separated; both ""
 * without host code. A module whose features the machine lacks is refused by
 * nncc_module_load (when it has no GPU code) or by a cpu session. */
NNCC_RUNTIME_API const char *nncc_module_cpu_name(const nncc_module_handle *module);
NNCC_RUNTIME_API const char *nncc_module_cpu_features(const nncc_module_handle *module);
NNCC_RUNTIME_API int32_t nncc_module_num_entries(const nncc_module_handle *module);
NNCC_RUNTIME_API nncc_status nncc_module_entry_info(const nncc_module_handle *module, int32_t index,
                                                    nncc_entry_info *out);
/** Index of the entry point called name (NNCC_ERROR_NOT_FOUND lists the entries). */
NNCC_RUNTIME_API nncc_status nncc_module_find_entry(const nncc_module_handle *module, const char *name,
                                                    int32_t *index);
/** Bytes of the module's weight blob. */
NNCC_RUNTIME_API int64_t nncc_module_weights_bytes(const nncc_module_handle *module);
/** Module state: tensors each session keeps on its device across runs and
 *  entries may update (weights compiled with `nncc --mutable-weights`,
 *  training parameters). Count, and the name, dtype and shape of state
 *  `index` (pointers into the module). A state sharded over the ranks of a
 *  tensor-parallel group is reported, read, written, checkpointed and
 *  exported whole (docs/distributed.md). */
NNCC_RUNTIME_API int32_t nncc_module_num_states(const nncc_module_handle *module);
NNCC_RUNTIME_API nncc_status nncc_module_state_info(const nncc_module_handle *module, int32_t index,
                                                    nncc_tensor_desc *out);
/** The parallel layout the module was compiled for (nncc --parallel):
 *  *data_parallel D, *pipeline_parallel P stages and *tensor_parallel T
 *  ranks (1, 1 and 1 for one rank). A session needs a communicator of D*P*T
 *  ranks; world rank w has data index w / (P*T), pipeline stage (w / T) % P
 *  and tensor index w % T (docs/distributed.md). */
NNCC_RUNTIME_API nncc_status nncc_module_parallel(const nncc_module_handle *module, int32_t *data_parallel,
                                                  int32_t *pipeline_parallel, int32_t *tensor_parallel);
/** 1 when the module has a plan for devices of `kind` ("cpu", "cuda") with
 *  code for each of its kernel steps (host code; GPU launches and a GPU
 *  image), else 0. Says nothing about whether such a device is present
 *  (nncc_device_count). */
NNCC_RUNTIME_API int32_t nncc_module_runs_on(const nncc_module_handle *module, const char *kind);
/** The number of steps of entry `entry` in the plan for devices of `kind`
 *  ("cpu", "cuda"; NULL: the first plan); -1 when the module has no such plan
 *  or entry. */
NNCC_RUNTIME_API int32_t nncc_module_num_steps(const nncc_module_handle *module, const char *kind,
                                               int32_t entry);
/** Step `step` of entry `entry` in the plan for devices of `kind` ("cpu",
 *  "cuda"; NULL: the first plan), 0 <= step < nncc_module_num_steps. Both
 *  describe pipeline stage 0's variant of the entry. */
NNCC_RUNTIME_API nncc_status nncc_module_step_info(const nncc_module_handle *module, const char *kind,
                                                   int32_t entry, int32_t step, nncc_step_info *out);
/** The same for the variant of pipeline stage `stage` (0 <= stage < P):
 *  what a session of that stage runs, and what its profile's step indices
 *  refer to. */
NNCC_RUNTIME_API int32_t nncc_module_stage_num_steps(const nncc_module_handle *module, const char *kind,
                                                     int32_t entry, int32_t stage);
NNCC_RUNTIME_API nncc_status nncc_module_stage_step_info(const nncc_module_handle *module, const char *kind,
                                                         int32_t entry, int32_t stage, int32_t step,
                                                         nncc_step_info *out);

/* --- sessions --- */

NNCC_RUNTIME_API void nncc_session_options_init(nncc_session_options *options);
/* --- communicators (docs/distributed.md) --- */

/** The world of the processes `mpirun` started, over MPI: libnncc_mpi.so
 *  (next to this runtime, or NNCC_MPI_LIBRARY) is loaded now and MPI is
 *  initialized once per process (finalized when the last reference goes).
 *  Collectives run on a communication thread (MPI_THREAD_MULTIPLE, or at
 *  least SERIALIZED from a program that initialized MPI itself), so a
 *  session's all-reduces overlap its kernels; NNCC_SYNC_COLLECTIVES=1 runs
 *  them on the calling thread. UNAVAILABLE when no MPI backend can be loaded. */
NNCC_RUNTIME_API nncc_status nncc_communicator_create_mpi(nncc_communicator **out);
/** A world of one rank (every collective is the identity). */
NNCC_RUNTIME_API nncc_status nncc_communicator_create_self(nncc_communicator **out);
/** One process driving `count` local GPUs over NCCL (ncclCommInitAll;
 *  libnccl.so.2 or NNCC_NCCL_LIBRARY is loaded now): out[i] is rank i of
 *  `count`, whose session must run on cuda:devices[i] (distinct indices).
 *  Run the sessions together, one thread each: every rank's collective
 *  steps meet the others'. Host collectives (all_reduce_f32, broadcast,
 *  barrier) meet in this process, from one thread per rank. Release each.
 *  UNAVAILABLE without NCCL, naming what was tried. */
NNCC_RUNTIME_API nncc_status nncc_communicator_create_nccl_local(const int32_t *devices, int32_t count,
                                                                 nncc_communicator **out);
NNCC_RUNTIME_API void nncc_communicator_retain(nncc_communicator *comm);
/** NULL is a no-op. */
NNCC_RUNTIME_API void nncc_communicator_release(nncc_communicator *comm);
NNCC_RUNTIME_API int32_t nncc_communicator_rank(const nncc_communicator *comm);
NNCC_RUNTIME_API int32_t nncc_communicator_size(const nncc_communicator *comm);
/** "self", "mpi" or "nccl". */
NNCC_RUNTIME_API const char *nncc_communicator_backend(const nncc_communicator *comm);
/** `count` f32 of host memory `data` become their sum over the ranks (their
 *  mean when `mean` is nonzero); every rank must call it. */
NNCC_RUNTIME_API nncc_status nncc_communicator_all_reduce_f32(nncc_communicator *comm, float *data,
                                                              int64_t count, int32_t mean);
/** Times the all-reduce nncc-info --bandwidth reports on GPUs: `warmup`, then
 *  `iters` ncclAllReduce (f32, sum, in place) of `bytes` of device memory on
 *  the GPU of `comm`, a rank of nncc_communicator_create_nccl_local, between
 *  two CUDA events on a stream of its own; *seconds is the time of one. Call
 *  it from one thread per rank, every rank with the same arguments.
 *  INVALID_ARGUMENT for another kind of communicator. */
NNCC_RUNTIME_API nncc_status nncc_communicator_time_all_reduce(nncc_communicator *comm, int64_t bytes,
                                                               int32_t warmup, int32_t iters, double *seconds);
NNCC_RUNTIME_API nncc_status nncc_communicator_broadcast(nncc_communicator *comm, void *data, int64_t bytes,
                                                         int32_t root);
NNCC_RUNTIME_API nncc_status nncc_communicator_barrier(nncc_communicator *comm);
/** Ends every process of the job with exit status `code` (MPI_Abort): what a
 *  rank that fails calls so the others do not wait for it forever. Returns
 *  only for a world of one. */
NNCC_RUNTIME_API void nncc_communicator_abort(nncc_communicator *comm, int32_t code);

/** Opens a session on device "cpu" or "cuda:N". options may be NULL (defaults).
 *  Allocates the arena and starts the thread pool. Holds a module reference. */
NNCC_RUNTIME_API nncc_status nncc_session_create(nncc_module_handle *module, const char *device,
                                                 const nncc_session_options *options, nncc_session **out);
/** NULL is a no-op. */
NNCC_RUNTIME_API void nncc_session_destroy(nncc_session *session);
/** Bytes of device memory the session allocated (its arena and the module
 *  state it holds). Constant over runs. */
NNCC_RUNTIME_API int64_t nncc_session_allocated_bytes(const nncc_session *session);
/** Sets *bytes to the bytes of module state the session holds (within
 *  nncc_session_allocated_bytes): a sharded state's part; with pipeline
 *  parallelism only the states of the session's stage and of every stage
 *  (see nncc_session_read_state). */
NNCC_RUNTIME_API nncc_status nncc_session_state_bytes(const nncc_session *session, int64_t *bytes);
/** Canonical device string of the session ("cpu", "cuda:0"). */
NNCC_RUNTIME_API const char *nncc_session_device(const nncc_session *session);
/** Threads the session runs kernels on. */
NNCC_RUNTIME_API int32_t nncc_session_threads(const nncc_session *session);
/** The pipeline stage of the session's rank ((w / T) % P; 0 without
 *  pipeline parallelism): the variant of each entry its runs execute. */
NNCC_RUNTIME_API int32_t nncc_session_pipeline_stage(const nncc_session *session);
/** Runs an entry point. inputs: every input of the entry once, by name, any
 *  order. outputs: every output once, by name (see "Memory" above). Checks
 *  names, dtypes and shapes before running anything. */
NNCC_RUNTIME_API nncc_status nncc_session_run(nncc_session *session, const char *entry,
                                              const nncc_tensor *inputs, int32_t num_inputs,
                                              nncc_tensor *outputs, int32_t num_outputs);

/** Copies the session's current value of state `name` into host memory
 *  `data`, or sets it from `data`; `bytes` must be the state's size. A new
 *  session starts from the state's initial value (the compiled weight). Not
 *  during a run of the same session (calls take turns). A sharded state
 *  (tensor parallelism) is the whole tensor: reading it gathers the parts
 *  of the session's tensor group, a collective that every rank of the group
 *  must make, in the same order; writing it keeps this rank's part. With
 *  pipeline parallelism a session holds (allocates) only the states of its
 *  own stage and those every stage updates alike (nncc_state.pipeline_stage
 *  -1); a state one stage q updates reads as stage q's value on every rank
 *  (a broadcast over the pipeline group from stage q: collective too; the
 *  ranks of other stages receive it straight into `data`). Writing it sets
 *  stage q's copy; the ranks of other stages accept the value and drop it
 *  (loading a checkpoint alike). Saving a checkpoint and exporting ONNX
 *  read every state, so they are collective too. */
NNCC_RUNTIME_API nncc_status nncc_session_read_state(nncc_session *session, const char *name,
                                                     void *data, int64_t bytes);
NNCC_RUNTIME_API nncc_status nncc_session_write_state(nncc_session *session, const char *name,
                                                      const void *data, int64_t bytes);

/** Writes every module state of the session (weights, optimizer buffers,
 *  the step count) to a checkpoint file (versioned, checksummed; replaced
 *  only when complete), or sets them from one. A checkpoint loads into any
 *  module with the same states by name, dtype and shape, and is refused,
 *  naming the state, by another model's. States the module's layout fixes
 *  (names starting with NNCC_LAYOUT_STATE_PREFIX, module_abi.h) are neither
 *  saved nor expected, so a checkpoint loads at any layout. */
NNCC_RUNTIME_API nncc_status nncc_session_save_checkpoint(nncc_session *session, const char *path);
NNCC_RUNTIME_API nncc_status nncc_session_load_checkpoint(nncc_session *session, const char *path);

/** Writes the ONNX model `original_onnx` (the one the module was compiled
 *  from) to `output_onnx` with the session's module state as its
 *  initializers (the trained weights); every other byte is copied, so
 *  frozen initializers stay bit-identical. */
NNCC_RUNTIME_API nncc_status nncc_session_export_onnx(nncc_session *session, const char *original_onnx,
                                                      const char *output_onnx);

/* --- profiling (options.profile or NNCC_PROFILE) --- */

/** The trace file the session writes ("" when it does not profile). With
 *  several sessions asking for the same path in one process, the n-th after
 *  the first writes "trace.n.json". The file is complete (valid JSON) once
 *  the session is destroyed, or at normal process exit. */
NNCC_RUNTIME_API const char *nncc_session_profile_path(const nncc_session *session);
/** Pauses (enabled = 0) or resumes recording, e.g. around warm-up runs.
 *  NNCC_ERROR_UNAVAILABLE when the session does not profile. */
NNCC_RUNTIME_API nncc_status nncc_session_set_profiling(nncc_session *session, int32_t enabled);
/** Totals of the recorded runs: of step `step` of entry `entry`, or of the
 *  entry's whole (successful) runs with step = -1. NNCC_ERROR_UNAVAILABLE when
 *  the session does not profile. */
NNCC_RUNTIME_API nncc_status nncc_session_profile_stats(const nncc_session *session, int32_t entry,
                                                        int32_t step, nncc_profile_stats *out);

/* --- the machine (nncc-info) ---
 * Each query fails with NNCC_ERROR_UNAVAILABLE and a message saying why
 * ("no CUDA driver (libcuda.so.1) found: ...", "no GPU: ...", "no cuBLASLt
 * found (tried ...)") where the library or device is missing. */

/** One CUDA device as its driver describes it. Set struct_size to
 *  sizeof(nncc_cuda_device_info) before the call. */
typedef struct nncc_cuda_device_info {
  uint32_t struct_size;
  char name[256];          /* "NVIDIA H200" */
  int32_t compute_major;   /* compute capability: 9.0 for sm_90 */
  int32_t compute_minor;
  int32_t multiprocessors; /* SMs */
  int32_t clock_khz;       /* SM clock */
  int32_t memory_clock_khz;
  int32_t memory_bus_bits;
  int32_t l2_bytes;
  int32_t pci_domain;
  int32_t pci_bus;
  int32_t pci_device;
  int64_t memory_total;    /* bytes */
  int64_t memory_free;     /* bytes free now (cuMemGetInfo in the primary context) */
} nncc_cuda_device_info;

/** The link from one CUDA device to another. Set struct_size first. */
typedef struct nncc_cuda_peer_info {
  uint32_t struct_size;
  int32_t can_access;       /* cuDeviceCanAccessPeer */
  int32_t performance_rank; /* CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK (relative; lower is faster, 0 the best) */
  int32_t native_atomics;   /* CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED: 1 when the link has native atomics */
} nncc_cuda_peer_info;

/** CUDA_VERSION of the headers this runtime was built with (13000), 0 when it
 *  was built without CUDA support. */
NNCC_RUNTIME_API int32_t nncc_cuda_build_version(void);
/** The driver's CUDA version (cuDriverGetVersion: 13000 = 13.0) and the
 *  library loaded ("libcuda.so.1"; a string that lives as long as the process). */
NNCC_RUNTIME_API nncc_status nncc_cuda_driver_info(int32_t *version, const char **library);
NNCC_RUNTIME_API nncc_status nncc_cuda_get_device_info(int32_t index, nncc_cuda_device_info *out);
/** Link from device `from` to device `to` (all zero when from == to). */
NNCC_RUNTIME_API nncc_status nncc_cuda_get_peer_info(int32_t from, int32_t to, nncc_cuda_peer_info *out);
/** Writes to `out` the `count` CUDA devices of `devices` in an order whose
 *  consecutive runs of `group_size` (the tensor-parallel groups of ranks
 *  laid out w = d*T + t) have the fastest links among them: the slowest link
 *  of each group (no peer access, else the higher P2P performance rank)
 *  summed over the groups is least. The given order when none is better
 *  (and for more than 16 devices). INVALID_ARGUMENT when `group_size` does
 *  not divide `count`. */
NNCC_RUNTIME_API nncc_status nncc_cuda_group_devices(const int32_t *devices, int32_t count, int32_t group_size,
                                                     int32_t *out);
/** cuBLASLt's version (cublasLtGetVersion: 130000 = 13.0.0) and library. */
NNCC_RUNTIME_API nncc_status nncc_cublaslt_info(int64_t *version, const char **library);
/** The CPU BLAS the runtime loads for GEMM steps ("libopenblas.so.0"). */
NNCC_RUNTIME_API nncc_status nncc_cpu_blas_info(const char **library);
/** OpenBLAS's kernel set ("SkylakeX"), saying so when the runtime named it
 *  because OpenBLAS's own CPU detection chose kernels below the CPU's AVX2 or
 *  AVX-512 (docs/runtime.md, "The CPU BLAS's kernels"); "" for another BLAS. */
NNCC_RUNTIME_API nncc_status nncc_cpu_blas_kernels(const char **kernels);

/* --- buffers --- */

/** Frees an output buffer the runtime allocated. NULL is a no-op. */
NNCC_RUNTIME_API void nncc_buffer_free(void *data);

#ifdef __cplusplus
}
#endif

#endif /* NNCC_RUNTIME_H */
