// nncc runtime C++ API: a header-only layer over the C ABI (nncc/runtime.h)
// that throws nncc::Error instead of returning status codes.
//
//   auto mod = nncc::Module::load("model.so");
//   nncc::Session s(mod, nncc::Device::best(mod), {/*threads=*/4});
//   auto x = nncc::Tensor::wrap(ptr, nncc::DType::f32, {1, 64});   // no copy
//   auto outs = s.run("forward", {{"x", x}});
//   const float *y = outs.at("y").data<float>();
//
// Header-only on purpose: the only binary interface is the C ABI, so the
// runtime library can be rebuilt with another compiler or standard library
// without breaking programs built against this header.
//
// Thread safety as in runtime.h: Module is shared by any number of sessions
// and threads; a Session may be shared by threads, its runs are serialized.
#ifndef NNCC_RUNTIME_HPP
#define NNCC_RUNTIME_HPP

#include "nncc/runtime.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace nncc {

/// Every runtime failure; what() is the runtime's message (it names the
/// file, entry, input or device concerned), status() its code.
class Error : public std::runtime_error {
public:
  Error(nncc_status status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  nncc_status status() const noexcept { return status_; }

private:
  nncc_status status_;
};

namespace detail {
/// Turns a C status into an exception carrying this thread's error message.
inline void check(nncc_status status) {
  if (status != NNCC_OK)
    throw Error(status, nncc_last_error());
}
} // namespace detail

/// Element types; the values are ONNX's TensorProto.DataType (= nncc_dtype).
enum class DType : int32_t {
  f32 = NNCC_DTYPE_F32,
  u8 = NNCC_DTYPE_U8,
  i8 = NNCC_DTYPE_I8,
  u16 = NNCC_DTYPE_U16,
  i16 = NNCC_DTYPE_I16,
  i32 = NNCC_DTYPE_I32,
  i64 = NNCC_DTYPE_I64,
  boolean = NNCC_DTYPE_BOOL,
  f16 = NNCC_DTYPE_F16,
  f64 = NNCC_DTYPE_F64,
  u32 = NNCC_DTYPE_U32,
  u64 = NNCC_DTYPE_U64,
  bf16 = NNCC_DTYPE_BF16,
};

/// "f32", "i64"...
inline const char *dtypeName(DType t) { return nncc_dtype_name(static_cast<int32_t>(t)); }
/// Bytes per element.
inline size_t dtypeSize(DType t) { return nncc_dtype_size(static_cast<int32_t>(t)); }

namespace detail {
/// Whether T is the C++ element type of t (f16/bf16 are accessed as uint16_t bits).
template <typename T> inline bool holds(DType t) {
  switch (t) {
  case DType::f32: return std::is_same<T, float>::value;
  case DType::f64: return std::is_same<T, double>::value;
  case DType::i8: return std::is_same<T, int8_t>::value;
  case DType::i16: return std::is_same<T, int16_t>::value;
  case DType::i32: return std::is_same<T, int32_t>::value;
  case DType::i64: return std::is_same<T, int64_t>::value;
  case DType::u8: return std::is_same<T, uint8_t>::value;
  case DType::u16:
  case DType::f16:
  case DType::bf16: return std::is_same<T, uint16_t>::value;
  case DType::u32: return std::is_same<T, uint32_t>::value;
  case DType::u64: return std::is_same<T, uint64_t>::value;
  case DType::boolean: return std::is_same<T, bool>::value || std::is_same<T, uint8_t>::value;
  }
  return false;
}

inline std::string typeString(DType t, const std::vector<int64_t> &dims) {
  std::string s = dtypeName(t);
  s += '[';
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + ']';
}
} // namespace detail

/// One input or output of an entry point's signature.
struct TensorInfo {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> dims;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : dims)
      n *= d;
    return n;
  }
  /// "f32[1,64]", the form the runtime's messages use.
  std::string typeString() const { return detail::typeString(dtype, dims); }
};

/// An entry point ("forward"): its signature and scratch memory.
struct EntryInfo {
  std::string name;
  std::vector<TensorInfo> inputs, outputs;
  int64_t arenaBytes = 0;
  int32_t numSteps = 0; ///< steps of its execution plan
  int32_t index = 0;    ///< its index in the module
};

/// One step of an entry's execution plan (what a profile reports on).
struct StepInfo {
  std::string name;   ///< ONNX node name(s); "" when not recorded
  std::string kind;   ///< "kernel", "gemm", "copy", "collective"
  std::string kernel; ///< kernel name of a kernel step, else ""
  int64_t bytes = 0;  ///< sum of its buffer regions' sizes
  int64_t parallelExtent = 0;
};

/// A loaded model.so. Copies share one loaded module (reference counted);
/// it stays loaded while a copy or a session uses it.
class Module {
public:
  /// Loads and verifies a compiled module (ABI version, integrity, weights).
  static Module load(const std::string &path) {
    nncc_module_handle *h = nullptr;
    detail::check(nncc_module_load(path.c_str(), &h));
    return Module(h);
  }

  std::vector<EntryInfo> entries() const {
    std::vector<EntryInfo> out;
    for (int32_t i = 0; i < nncc_module_num_entries(handle()); ++i)
      out.push_back(info(i));
    return out;
  }

  /// The entry called `name`; throws Error (listing the entries) when absent.
  EntryInfo entry(const std::string &name) const {
    int32_t index = 0;
    detail::check(nncc_module_find_entry(handle(), name.c_str(), &index));
    return info(index);
  }

  /// The module state: tensors each session keeps across runs and entries
  /// may update (`nncc --mutable-weights`, training parameters). A state
  /// sharded over a tensor-parallel group is listed whole.
  std::vector<TensorInfo> states() const {
    std::vector<TensorInfo> out;
    for (int32_t i = 0; i < nncc_module_num_states(handle()); ++i) {
      nncc_tensor_desc d;
      detail::check(nncc_module_state_info(handle(), i, &d));
      out.push_back(TensorInfo{d.name, static_cast<DType>(d.dtype),
                               std::vector<int64_t>(d.dims, d.dims + d.rank)});
    }
    return out;
  }

  /// The parallel layout the module was compiled for (`--parallel`): its
  /// sessions need a world of `data * pipeline * tensor` ranks; world rank
  /// w = (d * pipeline + p) * tensor + t (docs/distributed.md).
  struct Parallel {
    int32_t data = 1, pipeline = 1, tensor = 1;
    int32_t worldSize() const { return data * pipeline * tensor; }
    /// World rank w's data index d (its data shard) and pipeline stage p.
    int32_t dataIndex(int32_t w) const { return w / (pipeline * tensor); }
    int32_t stage(int32_t w) const { return (w / tensor) % pipeline; }
  };
  Parallel parallel() const {
    Parallel p;
    detail::check(nncc_module_parallel(handle(), &p.data, &p.pipeline, &p.tensor));
    return p;
  }

  /// Whether the module has code for devices of `kind` ("cpu", "cuda").
  bool runsOn(const std::string &kind) const {
    return nncc_module_runs_on(handle(), kind.c_str()) != 0;
  }

  /// The execution plan of an entry for devices of `kind` ("cpu", "cuda";
  /// "" for the module's first plan), step by step: pipeline stage
  /// `stage`'s variant (each stage runs its own; 0 without pipelining).
  std::vector<StepInfo> steps(const std::string &entryName, const std::string &kind = "",
                              int32_t stage = 0) const {
    EntryInfo e = entry(entryName);
    const char *k = kind.empty() ? nullptr : kind.c_str();
    int32_t n = nncc_module_stage_num_steps(handle(), k, e.index, stage);
    if (n < 0)
      throw Error(NNCC_ERROR_NOT_FOUND, "the module has no plan for '" + kind + "' devices or no stage " +
                                            std::to_string(stage));
    std::vector<StepInfo> out;
    for (int32_t i = 0; i < n; ++i) {
      nncc_step_info s;
      detail::check(nncc_module_stage_step_info(handle(), k, e.index, stage, i, &s));
      out.push_back(StepInfo{s.name, s.kind, s.kernel, s.bytes, s.parallel_extent});
    }
    return out;
  }

  std::string producer() const { return nncc_module_producer(handle()); }
  /// The CPU the host code was compiled for and the features it needs.
  std::string cpuName() const { return nncc_module_cpu_name(handle()); }
  std::string cpuFeatures() const { return nncc_module_cpu_features(handle()); }
  nncc_module_handle *handle() const { return handle_.get(); }

private:
  explicit Module(nncc_module_handle *h) : handle_(h, nncc_module_release) {}

  EntryInfo info(int32_t index) const {
    nncc_entry_info e;
    detail::check(nncc_module_entry_info(handle(), index, &e));
    auto convert = [](int32_t n, const nncc_tensor_desc *d) {
      std::vector<TensorInfo> v;
      for (int32_t i = 0; i < n; ++i)
        v.push_back(TensorInfo{d[i].name, static_cast<DType>(d[i].dtype),
                               std::vector<int64_t>(d[i].dims, d[i].dims + d[i].rank)});
      return v;
    };
    return EntryInfo{e.name,        convert(e.num_inputs, e.inputs),
                     convert(e.num_outputs, e.outputs), e.arena_bytes, e.num_steps, index};
  }

  std::shared_ptr<nncc_module_handle> handle_;
};

/// Where a session runs: "cpu" or "cuda:N". Validated when a session opens.
class Device {
public:
  static Device cpu() { return Device("cpu"); }
  static Device cuda(int index = 0) { return Device("cuda:" + std::to_string(index)); }
  /// cuda:0 when the CUDA driver reports a GPU, else cpu.
  static Device best() { return nncc_device_count("cuda") > 0 ? cuda(0) : cpu(); }
  /// The best device `module` runs on here: cuda:0 when there is a GPU and
  /// the module has GPU code, else cpu.
  static Device best(const Module &module) {
    return nncc_module_runs_on(module.handle(), "cuda") && nncc_device_count("cuda") > 0 ? cuda(0)
                                                                                          : cpu();
  }
  /// From a string such as a --device flag ("cpu", "cuda:1").
  static Device parse(const std::string &text) { return Device(text); }
  const std::string &str() const { return name_; }

private:
  explicit Device(std::string name) : name_(std::move(name)) {}
  std::string name_;
};

/// The ranks a session's collective steps run between: the world of the
/// processes `mpirun` started (`Distributed::fromMpi()`), or one process
/// (`Distributed::single()`). Copies share one communicator.
class Distributed {
public:
  /// MPI's world: loads libnncc_mpi.so and initializes MPI (once per
  /// process; finalized when the last Distributed referring to it goes).
  static Distributed fromMpi() {
    nncc_communicator *c = nullptr;
    detail::check(nncc_communicator_create_mpi(&c));
    return Distributed(c);
  }
  /// A world of one rank.
  static Distributed single() {
    nncc_communicator *c = nullptr;
    detail::check(nncc_communicator_create_self(&c));
    return Distributed(c);
  }
  /// One process driving the local GPUs `devices` over NCCL: element i is
  /// rank i, for the session on cuda:devices[i]; run the sessions together,
  /// one thread each.
  static std::vector<Distributed> localGpus(const std::vector<int32_t> &devices) {
    std::vector<nncc_communicator *> c(devices.size(), nullptr);
    detail::check(nncc_communicator_create_nccl_local(devices.data(), static_cast<int32_t>(devices.size()),
                                                      c.data()));
    std::vector<Distributed> out;
    for (nncc_communicator *comm : c)
      out.push_back(Distributed(comm));
    return out;
  }
  /// `devices` in the order to pass to localGpus for a module whose tensor
  /// groups have `tensorParallel` ranks: each group on the GPUs with the
  /// fastest links among them (nncc_cuda_group_devices); `devices` itself
  /// when no order is better.
  static std::vector<int32_t> groupGpusByLinks(const std::vector<int32_t> &devices, int32_t tensorParallel) {
    std::vector<int32_t> out(devices.size());
    detail::check(nncc_cuda_group_devices(devices.data(), static_cast<int32_t>(devices.size()), tensorParallel,
                                          out.data()));
    return out;
  }
  int rank() const { return nncc_communicator_rank(comm_.get()); }
  int size() const { return nncc_communicator_size(comm_.get()); }
  std::string backend() const { return nncc_communicator_backend(comm_.get()); }
  /// `count` floats at `data` become their sum (or mean) over the ranks.
  void allReduce(float *data, int64_t count, bool mean = false) {
    detail::check(nncc_communicator_all_reduce_f32(comm_.get(), data, count, mean ? 1 : 0));
  }
  void broadcast(void *data, int64_t bytes, int root = 0) {
    detail::check(nncc_communicator_broadcast(comm_.get(), data, bytes, root));
  }
  void barrier() { detail::check(nncc_communicator_barrier(comm_.get())); }
  /// Ends the whole job with exit status `code`; returns only in a world of one.
  void abort(int code) { nncc_communicator_abort(comm_.get(), code); }
  nncc_communicator *handle() const { return comm_.get(); }

private:
  explicit Distributed(nncc_communicator *c) : comm_(c, nncc_communicator_release) {}
  std::shared_ptr<nncc_communicator> comm_;
};

struct SessionOptions {
  // A constructor rather than an aggregate, so that `{threads}` stays
  // warning-free (-Wmissing-field-initializers) as fields are added.
  SessionOptions(int threadCount = 0, std::optional<std::string> profilePath = std::nullopt)
      : threads(threadCount), profile(std::move(profilePath)) {}

  /// CPU threads running kernels, the calling thread included; 0 = all cores.
  int threads = 0;
  /// Chrome trace-event file to write (docs/runtime.md, "Profiling"):
  /// nullopt = the NNCC_PROFILE environment variable decides, "" = off.
  std::optional<std::string> profile;
  /// CUDA: the CUstream (cast to void *) each run waits for, on the device,
  /// before reading its inputs; nullptr = the legacy default stream
  /// (nncc_session_options.cuda_stream).
  void *cudaStream = nullptr;
  /// The ranks of a module compiled with `--parallel=dp:N`
  /// (nncc_session_options.communicator); nullopt = one process.
  std::optional<Distributed> distributed;
};

/// Profiling totals (Session::profileStats).
struct ProfileStats {
  int64_t calls = 0;   ///< profiled executions
  int64_t totalNs = 0; ///< their summed wall-clock time
  int64_t minNs = 0;   ///< the fastest of them
  int64_t maxNs = 0;   ///< the slowest of them
};

/// A typed, shaped buffer. Either owning (empty(), or an output the runtime
/// allocated; copies share the buffer, freed with the last copy) or a view of
/// caller memory (wrap() for host memory, device() for GPU memory; no copy,
/// the caller keeps it alive).
class Tensor {
public:
  Tensor() = default;

  /// A new zero-filled, 64-byte aligned tensor. Throws Error
  /// (NNCC_ERROR_INVALID_ARGUMENT) for a negative dim, an unknown dtype or a
  /// size that does not fit in memory (the product overflowing would else
  /// allocate a small buffer that runs then write past).
  static Tensor empty(DType dtype, std::vector<int64_t> dims) {
    Tensor t(nullptr, dtype, std::move(dims));
    size_t bytes = t.checkedBytes();
    size_t rounded = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, rounded);
    if (!p)
      throw std::bad_alloc();
    std::memset(p, 0, rounded);
    t.storage_.reset(p, std::free);
    t.data_ = p;
    return t;
  }

  /// A view of caller memory: runs read (or, for outputs, write) it in place.
  static Tensor wrap(void *data, DType dtype, std::vector<int64_t> dims) {
    return Tensor(data, dtype, std::move(dims));
  }

  /// A view of CUDA device memory (a CUdeviceptr from cuMemAlloc, or a
  /// torch tensor's data_ptr()): a session on that GPU uses it in place,
  /// without a copy (other sessions copy it). The caller keeps it alive. It
  /// is not host memory: data<T>() throws, data() returns the address.
  static Tensor device(uint64_t devicePtr, DType dtype, std::vector<int64_t> dims) {
    Tensor t(reinterpret_cast<void *>(static_cast<uintptr_t>(devicePtr)), dtype, std::move(dims));
    t.onDevice_ = true;
    return t;
  }
  /// Whether this is a view of device memory (Tensor::device).
  bool onDevice() const { return onDevice_; }

  void *data() { return data_; }
  const void *data() const { return data_; }
  /// Typed access; throws Error when T is not this tensor's element type.
  template <typename T> T *data() {
    checkType<T>();
    return static_cast<T *>(data_);
  }
  template <typename T> const T *data() const {
    checkType<T>();
    return static_cast<const T *>(data_);
  }

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &dims() const { return dims_; }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : dims_)
      n *= d;
    return n;
  }
  size_t bytes() const { return static_cast<size_t>(numel()) * dtypeSize(dtype_); }
  /// "f32[1,64]".
  std::string typeString() const { return detail::typeString(dtype_, dims_); }

private:
  friend class Session;
  Tensor(void *data, DType dtype, std::vector<int64_t> dims)
      : data_(data), dtype_(dtype), dims_(std::move(dims)) {}

  /// bytes(), or Error when the shape has no valid size (at most 2^62 bytes:
  /// no machine has more, and rounding it up cannot overflow).
  size_t checkedBytes() const {
    constexpr uint64_t kMaxBytes = uint64_t(1) << 62;
    auto invalid = [&](const char *why) {
      return Error(NNCC_ERROR_INVALID_ARGUMENT,
                   "Tensor::empty(" + typeString() + "): " + why);
    };
    uint64_t bytes = dtypeSize(dtype_);
    if (bytes == 0)
      throw invalid("unknown element type");
    bool none = false;
    for (int64_t d : dims_) {
      if (d < 0)
        throw invalid("negative dimension");
      none |= d == 0;
    }
    if (none)
      return 0;
    for (int64_t d : dims_) {
      if (bytes > kMaxBytes / static_cast<uint64_t>(d))
        throw invalid("more than 2^62 bytes");
      bytes *= static_cast<uint64_t>(d);
    }
    return static_cast<size_t>(bytes);
  }

  template <typename T> void checkType() const {
    if (onDevice_)
      throw Error(NNCC_ERROR_INVALID_ARGUMENT,
                  "tensor of device memory accessed as host memory (copy it to the host first)");
    if (!detail::holds<T>(dtype_))
      throw Error(NNCC_ERROR_INVALID_ARGUMENT,
                  std::string("tensor of type ") + dtypeName(dtype_) +
                      " accessed with another element type");
  }

  nncc_tensor toC(const char *name) const {
    return nncc_tensor{name, static_cast<int32_t>(dtype_), static_cast<int32_t>(dims_.size()),
                       dims_.data(), data_};
  }

  std::shared_ptr<void> storage_; // owning tensors only
  void *data_ = nullptr;
  DType dtype_ = DType::f32;
  std::vector<int64_t> dims_;
  bool onDevice_ = false;
};

/// Tensors by input/output name.
using TensorMap = std::map<std::string, Tensor>;

/// A module opened on a device: owns the arena (allocated here, once) and
/// the CPU thread pool. Threads may share it (their runs take turns); open one
/// session per concurrent caller (they share the module's weights). Move-only.
class Session {
public:
  Session(const Module &module, const Device &device = Device::cpu(),
          const SessionOptions &options = {})
      : module_(module) {
    nncc_session_options o;
    nncc_session_options_init(&o);
    o.threads = options.threads;
    if (options.profile)
      o.profile = options.profile->c_str();
    o.cuda_stream = options.cudaStream;
    if (options.distributed)
      o.communicator = options.distributed->handle();
    nncc_session *s = nullptr;
    detail::check(nncc_session_create(module.handle(), device.str().c_str(), &o, &s));
    session_.reset(s);
    for (const EntryInfo &e : module.entries())
      for (const TensorInfo &t : e.outputs)
        outputNames_[e.name].push_back(t.name);
  }

  /// Runs `entry` on named inputs (each used in place, not copied) and
  /// returns its outputs in new tensors owned by the caller.
  TensorMap run(const std::string &entry, const TensorMap &inputs) {
    TensorMap outputs;
    run(entry, inputs, outputs);
    return outputs;
  }

  /// The session's current value of module state `name`, copied into a new
  /// host tensor.
  Tensor state(const std::string &name) const {
    for (const TensorInfo &info : module_.states())
      if (info.name == name) {
        Tensor t = Tensor::empty(info.dtype, info.dims);
        detail::check(nncc_session_read_state(session_.get(), name.c_str(), t.data(),
                                              static_cast<int64_t>(t.bytes())));
        return t;
      }
    detail::check(nncc_session_read_state(session_.get(), name.c_str(), nullptr, 0)); // names them
    return Tensor();
  }

  /// Sets module state `name` to a host tensor of its type and shape; the
  /// next runs read it.
  void setState(const std::string &name, const Tensor &value) {
    for (const TensorInfo &info : module_.states())
      if (info.name == name && (value.dtype() != info.dtype || value.dims() != info.dims))
        throw Error(NNCC_ERROR_INVALID_ARGUMENT, "state '" + name + "' is " + info.typeString() +
                                                     ", not " + value.typeString());
    detail::check(nncc_session_write_state(session_.get(), name.c_str(), value.data(),
                                           static_cast<int64_t>(value.bytes())));
  }

  /// Writes every module state to a checkpoint file, or sets them from one
  /// (nncc_session_save_checkpoint).
  void saveCheckpoint(const std::string &path) {
    detail::check(nncc_session_save_checkpoint(session_.get(), path.c_str()));
  }
  void loadCheckpoint(const std::string &path) {
    detail::check(nncc_session_load_checkpoint(session_.get(), path.c_str()));
  }

  /// Writes the ONNX model the module was compiled from (`originalOnnx`)
  /// to `outputOnnx` with the session's state (trained weights) as its
  /// initializers (nncc_session_export_onnx).
  void exportOnnx(const std::string &originalOnnx, const std::string &outputOnnx) {
    detail::check(nncc_session_export_onnx(session_.get(), originalOnnx.c_str(), outputOnnx.c_str()));
  }

  /// Runs `entry` writing into the caller's output tensors (no allocation
  /// for those; their types must match the signature). Outputs missing from
  /// `outputs` are allocated and inserted.
  void run(const std::string &entry, const TensorMap &inputs, TensorMap &outputs) {
    std::vector<nncc_tensor> in;
    in.reserve(inputs.size());
    for (const auto &kv : inputs)
      in.push_back(kv.second.toC(kv.first.c_str()));
    // Given tensors first, then the missing ones with data == NULL, which the
    // runtime allocates (a given tensor without data counts as missing).
    std::vector<nncc_tensor> out;
    for (const auto &kv : outputs)
      if (kv.second.data())
        out.push_back(kv.second.toC(kv.first.c_str()));
    size_t given = out.size();
    std::vector<std::string> names; // of the outputs the runtime allocates
    auto sig = outputNames_.find(entry); // unknown entries: the runtime reports them
    if (sig != outputNames_.end())
      for (const std::string &name : sig->second) {
        auto it = outputs.find(name);
        if (it == outputs.end() || !it->second.data())
          names.push_back(name);
      }
    for (const std::string &name : names)
      out.push_back(nncc_tensor{name.c_str(), 0, 0, nullptr, nullptr});
    detail::check(nncc_session_run(session_.get(), entry.c_str(), in.data(),
                                   static_cast<int32_t>(in.size()), out.data(),
                                   static_cast<int32_t>(out.size())));
    for (size_t i = given; i < out.size(); ++i) {
      const nncc_tensor &o = out[i];
      Tensor t(o.data, static_cast<DType>(o.dtype), std::vector<int64_t>(o.dims, o.dims + o.rank));
      t.storage_.reset(o.data, nncc_buffer_free);
      outputs[names[i - given]] = std::move(t);
    }
  }

  /// Device memory this session holds (its arena and module state); constant across runs.
  int64_t allocatedBytes() const { return nncc_session_allocated_bytes(session_.get()); }
  /// Bytes of module state this session holds (nncc_session_state_bytes):
  /// with pipeline parallelism, its own stage's and every stage's only.
  int64_t stateBytes() const {
    int64_t bytes = 0;
    detail::check(nncc_session_state_bytes(session_.get(), &bytes));
    return bytes;
  }
  /// "cpu", "cuda:0".
  std::string device() const { return nncc_session_device(session_.get()); }
  int threads() const { return nncc_session_threads(session_.get()); }
  /// The pipeline stage of this rank: the variant of each entry it runs.
  int32_t pipelineStage() const { return nncc_session_pipeline_stage(session_.get()); }
  const Module &module() const { return module_; }
  nncc_session *handle() const { return session_.get(); }

  /// The trace file this session writes; "" when it does not profile. The
  /// file is complete once the session is destroyed.
  std::string profilePath() const { return nncc_session_profile_path(session_.get()); }
  bool profiling() const { return !profilePath().empty(); }
  /// Pauses or resumes recording (throws when the session does not profile).
  void setProfiling(bool enabled) {
    detail::check(nncc_session_set_profiling(session_.get(), enabled ? 1 : 0));
  }
  /// Totals of step `step` of `entry`, or of its whole runs for step = -1.
  ProfileStats profileStats(const std::string &entry, int32_t step = -1) const {
    int32_t index = 0;
    detail::check(nncc_module_find_entry(module_.handle(), entry.c_str(), &index));
    nncc_profile_stats st;
    detail::check(nncc_session_profile_stats(session_.get(), index, step, &st));
    return ProfileStats{st.calls, st.total_ns, st.min_ns, st.max_ns};
  }

private:
  struct Destroy {
    void operator()(nncc_session *s) const { nncc_session_destroy(s); }
  };
  Module module_;
  std::unique_ptr<nncc_session, Destroy> session_;
  std::map<std::string, std::vector<std::string>> outputNames_; // by entry, signature order
};

} // namespace nncc

#endif // NNCC_RUNTIME_HPP
