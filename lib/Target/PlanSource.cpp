/// The plan as C source: the nncc_module tables of include/nncc/module_abi.h,
/// and the checksums the runtime verifies.
#include "lib/Target/Plan.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include "nncc/module_abi.h"
#include "nncc/plan_hash.h"

#include <cmath>
#include <iterator>

namespace nncc {
namespace {

/// nncc_module.producer of every module.
constexpr const char *kProducer = "nncc 0.1";

std::string cString(llvm::StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else if (c >= 32 && c < 127)
      out += c;
    else
      out += llvm::formatv("\\{0:o3}", (unsigned)(unsigned char)c).str();
  }
  return out + "\"";
}

template <typename T>
std::string cArray(const std::vector<T> &values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + llvm::formatv("{0}", values[i]).str();
  return out;
}

/// The C name of an ABI enum value in the emitted source, so plan.c reads
/// like the header; a number the header does not name stays a number.
std::string stepKindName(int32_t kind) {
  switch (kind) {
  case NNCC_STEP_KERNEL: return "NNCC_STEP_KERNEL";
  case NNCC_STEP_GEMM: return "NNCC_STEP_GEMM";
  case NNCC_STEP_COPY: return "NNCC_STEP_COPY";
  case NNCC_STEP_COLLECTIVE: return "NNCC_STEP_COLLECTIVE";
  }
  return std::to_string(kind);
}

std::string bufferKindName(int32_t kind) {
  switch (kind) {
  case NNCC_BUFFER_ARENA: return "NNCC_BUFFER_ARENA";
  case NNCC_BUFFER_INPUT: return "NNCC_BUFFER_INPUT";
  case NNCC_BUFFER_OUTPUT: return "NNCC_BUFFER_OUTPUT";
  case NNCC_BUFFER_WEIGHT: return "NNCC_BUFFER_WEIGHT";
  case NNCC_BUFFER_STATE: return "NNCC_BUFFER_STATE";
  }
  return std::to_string(kind);
}

std::string dtypeName(int32_t dtype) {
  switch (dtype) {
  case NNCC_DTYPE_F32: return "NNCC_DTYPE_F32";
  case NNCC_DTYPE_U8: return "NNCC_DTYPE_U8";
  case NNCC_DTYPE_I8: return "NNCC_DTYPE_I8";
  case NNCC_DTYPE_U16: return "NNCC_DTYPE_U16";
  case NNCC_DTYPE_I16: return "NNCC_DTYPE_I16";
  case NNCC_DTYPE_I32: return "NNCC_DTYPE_I32";
  case NNCC_DTYPE_I64: return "NNCC_DTYPE_I64";
  case NNCC_DTYPE_BOOL: return "NNCC_DTYPE_BOOL";
  case NNCC_DTYPE_F16: return "NNCC_DTYPE_F16";
  case NNCC_DTYPE_F64: return "NNCC_DTYPE_F64";
  case NNCC_DTYPE_U32: return "NNCC_DTYPE_U32";
  case NNCC_DTYPE_U64: return "NNCC_DTYPE_U64";
  case NNCC_DTYPE_BF16: return "NNCC_DTYPE_BF16";
  }
  return std::to_string(dtype);
}

std::string activationName(int64_t activation) {
  switch (activation) {
  case NNCC_ACTIVATION_NONE: return "NNCC_ACTIVATION_NONE";
  case NNCC_ACTIVATION_RELU: return "NNCC_ACTIVATION_RELU";
  case NNCC_ACTIVATION_GELU: return "NNCC_ACTIVATION_GELU";
  case NNCC_ACTIVATION_CLIP: return "NNCC_ACTIVATION_CLIP";
  }
  return std::to_string(activation);
}

/// The index names of a GEMM step's iparams (nncc_gemm_iparam), in order.
constexpr const char *kGemmIparamNames[] = {
    "NNCC_GEMM_BATCH",    "NNCC_GEMM_M",        "NNCC_GEMM_N",          "NNCC_GEMM_K",
    "NNCC_GEMM_TRANS_A",  "NNCC_GEMM_TRANS_B",  "NNCC_GEMM_LDA",        "NNCC_GEMM_LDB",
    "NNCC_GEMM_LDC",      "NNCC_GEMM_STRIDE_A", "NNCC_GEMM_STRIDE_B",   "NNCC_GEMM_STRIDE_C",
    "NNCC_GEMM_DTYPE_A",  "NNCC_GEMM_DTYPE_B",  "NNCC_GEMM_DTYPE_C",    "NNCC_GEMM_ALLOW_TF32",
    "NNCC_GEMM_ACTIVATION", "NNCC_GEMM_BIAS_PER_ROW"};
static_assert(std::size(kGemmIparamNames) == NNCC_GEMM_MAX_IPARAMS);
constexpr const char *kGemmFparamNames[] = {"NNCC_GEMM_ALPHA", "NNCC_GEMM_BETA", "NNCC_GEMM_CLIP_MIN",
                                            "NNCC_GEMM_CLIP_MAX"};
static_assert(std::size(kGemmFparamNames) == NNCC_GEMM_NUM_CLIP_FPARAMS);

/// The index names of a collective step's iparams (nncc_collective_iparam).
constexpr const char *kCollectiveIparamNames[] = {"NNCC_COLLECTIVE_OP", "NNCC_COLLECTIVE_REDUCTION",
                                                  "NNCC_COLLECTIVE_DTYPE", "NNCC_COLLECTIVE_GROUP_SIZE",
                                                  "NNCC_COLLECTIVE_GROUP", "NNCC_COLLECTIVE_PEER"};
static_assert(std::size(kCollectiveIparamNames) == NNCC_COLLECTIVE_NUM_IPARAMS);

/// nncc_collective_op's names, from NNCC_COLLECTIVE_ALL_REDUCE (1) on.
constexpr const char *kCollectiveOpNames[] = {"NNCC_COLLECTIVE_ALL_REDUCE",     "NNCC_COLLECTIVE_SEND",
                                              "NNCC_COLLECTIVE_RECV",           "NNCC_COLLECTIVE_ALL_GATHER",
                                              "NNCC_COLLECTIVE_REDUCE_SCATTER", "NNCC_COLLECTIVE_BROADCAST"};
static_assert(std::size(kCollectiveOpNames) == NNCC_COLLECTIVE_BROADCAST);

std::string collectiveIparam(size_t i, int64_t v) {
  std::string value = std::to_string(v);
  if (i == NNCC_COLLECTIVE_OP && v >= NNCC_COLLECTIVE_ALL_REDUCE && v <= NNCC_COLLECTIVE_BROADCAST)
    value = kCollectiveOpNames[v - 1];
  else if (i == NNCC_COLLECTIVE_REDUCTION && (v == NNCC_REDUCTION_SUM || v == NNCC_REDUCTION_MEAN))
    value = v == NNCC_REDUCTION_SUM ? "NNCC_REDUCTION_SUM" : "NNCC_REDUCTION_MEAN";
  else if (i == NNCC_COLLECTIVE_DTYPE && v != 0)
    value = dtypeName(v);
  else if (i == NNCC_COLLECTIVE_GROUP && v >= NNCC_GROUP_DATA && v <= NNCC_GROUP_PIPELINE)
    value = v == NNCC_GROUP_DATA ? "NNCC_GROUP_DATA" : v == NNCC_GROUP_TENSOR ? "NNCC_GROUP_TENSOR" : "NNCC_GROUP_PIPELINE";
  return "[" + std::string(kCollectiveIparamNames[i]) + "] = " + value;
}

} // namespace

uint64_t weightsChecksum(const std::string &data) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t planChecksum(const ModulePlan &plan, const std::string &weightsFile) {
  // The order and encoding of runtime/PlanChecksum.cpp's walk of the emitted
  // nncc_module, value for value.
  PlanHash h;
  // Strings are emitted as C literals, which end at a NUL a name may hold.
  auto str = [&](llvm::StringRef s) {
    s = s.take_until([](char c) { return c == '\0'; });
    h.string(s.data(), s.size());
  };
  auto descs = [&](const std::vector<TensorDesc> &ds) {
    h.integer(ds.size());
    for (const TensorDesc &d : ds) {
      str(d.name);
      h.integer(d.dtype);
      h.integer(d.dims.size());
      for (int64_t dim : d.dims)
        h.integer(dim);
    }
  };
  str(kProducer);
  h.integer(plan.plans.size());
  for (const DevicePlan &schedule : plan.plans) {
    h.integer(schedule.deviceKind);
    h.integer(schedule.entries.size());
    for (const EntryPlan &entry : schedule.entries) {
      str(entry.name);
      descs(entry.inputs);
      descs(entry.outputs);
      h.integer(entry.arenaBytes);
      h.integer(entry.steps.size());
      for (const PlanStep &step : entry.steps) {
        h.integer(step.kind);
        h.integer(step.kernel);
        h.integer(step.args.size());
        for (const BufferRef &a : step.args) {
          h.integer(a.kind);
          h.integer(a.index);
          h.integer(a.offset);
          h.integer(a.bytes);
        }
        h.integer(step.iparams.size());
        for (int64_t v : step.iparams)
          h.integer(v);
        h.integer(step.fparams.size());
        for (double v : step.fparams)
          h.real(v);
        h.integer(step.parallelExtent);
        str(step.name);
      }
      h.integer(entry.checks.size());
      for (const PlanCheck &c : entry.checks) {
        str(c.message);
        h.integer(c.offset);
      }
      h.integer(entry.pipelineStage);
    }
  }
  h.integer(plan.kernels.size());
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    str(plan.kernels[k]);
    h.integer(plan.hostCode[k] != 0);
    const std::vector<GpuLaunch> none;
    const std::vector<GpuLaunch> &launches =
        k < plan.gpuLaunches.size() ? plan.gpuLaunches[k] : none;
    h.integer(launches.size());
    for (const GpuLaunch &l : launches) {
      str(l.function);
      for (uint32_t v : l.grid)
        h.integer(v);
      for (uint32_t v : l.block)
        h.integer(v);
      h.integer(0); // shared_bytes
    }
  }
  const WeightBlob &w = plan.weights;
  h.integer(w.names.size());
  for (size_t i = 0; i < w.names.size(); ++i) {
    str(w.names[i]);
    h.integer(w.offsets[i]);
    h.integer(w.sizes[i]);
  }
  h.integer(weightsFile.empty()); // the blob is embedded
  if (weightsFile.empty())
    h.absent();
  else
    str(weightsFile);
  h.integer(w.data.size());
  h.integer(static_cast<int64_t>(weightsChecksum(w.data)));
  h.integer(plan.gpuImages.size());
  for (const GpuImage &image : plan.gpuImages) {
    str(image.arch);
    str(image.ptx);
    h.integer(image.cubin.size());
    h.integer(!image.cubin.empty());
    h.bytes(image.cubin.data(), image.cubin.size());
  }
  str(plan.cpuName);
  str(llvm::join(plan.cpuFeatures, ","));
  h.integer(plan.states.size());
  for (const StateDesc &state : plan.states) {
    str(state.desc.name);
    h.integer(state.desc.dtype);
    h.integer(state.desc.dims.size());
    for (int64_t dim : state.desc.dims)
      h.integer(dim);
    h.integer(state.bytes);
    h.integer(state.initWeight);
    h.integer(state.shardParts);
    h.integer(state.shardAxis);
    h.integer(state.shardBlocks);
    h.integer(state.pipelineStage);
  }
  h.integer(plan.dataParallel);
  h.integer(plan.tensorParallel);
  h.integer(plan.pipelineParallel);
  return h.value();
}

std::string emitPlanSource(const ModulePlan &plan, const std::string &weightsFile) {
  // Every struct is written with designated initializers (and GEMM
  // parameters with their index names), so a field that module_abi.h renames
  // or removes breaks the module's build instead of misplacing data.
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "/* Generated by nncc: the plan of a compiled module. */\n"
     << "#include \"module_abi.h\"\n#include <stddef.h>\n\n";
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    if (plan.hostCode[k])
      os << "extern void nncc_" << plan.kernels[k] << "(void **, int64_t, int64_t);\n";
  for (size_t i = 0; i < plan.gpuImages.size(); ++i) {
    os << "extern const char nncc_gpu_ptx_" << i << "[];\n";
    if (!plan.gpuImages[i].cubin.empty())
      os << "extern const uint8_t nncc_gpu_cubin_" << i << "[];\n";
  }
  if (weightsFile.empty())
    os << "extern const uint8_t nncc_weights_blob[];\n";
  os << "\n";
  auto orNull = [](bool present, const std::string &name) { return present ? name : "NULL"; };
  auto tensors = [&](const std::string &prefix, const std::vector<TensorDesc> &descs) {
    for (size_t i = 0; i < descs.size(); ++i)
      os << "static const int64_t " << prefix << i << "_dims[] = {" << cArray(descs[i].dims)
         << (descs[i].dims.empty() ? "0" : "") << "};\n";
    if (descs.empty())
      return;
    os << "static const nncc_tensor_desc " << prefix << "[] = {\n";
    for (size_t i = 0; i < descs.size(); ++i)
      os << "  {.name = " << cString(descs[i].name) << ", .dtype = " << dtypeName(descs[i].dtype)
         << ", .rank = " << descs[i].dims.size() << ", .dims = " << prefix << i << "_dims},\n";
    os << "};\n";
  };
  // A GEMM's and a collective's parameters by index name (dtypes and enums
  // by name); other steps' (none today) in order.
  auto iparam = [](const PlanStep &step, size_t i) {
    int64_t v = step.iparams[i];
    if (step.kind == NNCC_STEP_COLLECTIVE && i < NNCC_COLLECTIVE_NUM_IPARAMS)
      return collectiveIparam(i, v);
    if (step.kind != NNCC_STEP_GEMM || i >= NNCC_GEMM_MAX_IPARAMS)
      return std::to_string(v);
    std::string value = i >= NNCC_GEMM_DTYPE_A && i <= NNCC_GEMM_DTYPE_C ? dtypeName(v)
                        : i == NNCC_GEMM_ACTIVATION                      ? activationName(v)
                                                                         : std::to_string(v);
    return "[" + std::string(kGemmIparamNames[i]) + "] = " + value;
  };
  auto fparam = [](const PlanStep &step, size_t i) {
    // C has no literal for an infinity or a NaN (a Clip's open bound).
    double x = step.fparams[i];
    std::string v = std::isnan(x)   ? std::string("__builtin_nan(\"\")")
                    : std::isinf(x) ? std::string(x < 0 ? "-__builtin_inf()" : "__builtin_inf()")
                                    : llvm::formatv("{0:e17}", x).str();
    if (step.kind != NNCC_STEP_GEMM || i >= NNCC_GEMM_NUM_CLIP_FPARAMS)
      return v;
    return "[" + std::string(kGemmFparamNames[i]) + "] = " + v;
  };
  // Plan 0's tables are e<entry>_..., plan k's p<k>e<entry>_...
  auto prefix = [](size_t k) { return k == 0 ? std::string() : "p" + std::to_string(k); };
  for (size_t k = 0; k < plan.plans.size(); ++k) {
    for (size_t e = 0; e < plan.plans[k].entries.size(); ++e) {
      const EntryPlan &entry = plan.plans[k].entries[e];
      std::string p = prefix(k) + "e" + std::to_string(e);
      tensors(p + "_in", entry.inputs);
      tensors(p + "_out", entry.outputs);
      for (size_t i = 0; i < entry.steps.size(); ++i) {
        const PlanStep &step = entry.steps[i];
        os << "static const nncc_buffer_ref " << p << "_s" << i << "_args[] = {";
        for (const auto &a : step.args)
          os << "{.kind = " << bufferKindName(a.kind) << ", .index = " << a.index
             << ", .offset = " << a.offset << ", .bytes = " << a.bytes << "}, ";
        os << "};\n";
        if (!step.iparams.empty()) {
          os << "static const int64_t " << p << "_s" << i << "_i[] = {";
          for (size_t j = 0; j < step.iparams.size(); ++j)
            os << (j ? ", " : "") << iparam(step, j);
          os << "};\n";
        }
        if (!step.fparams.empty()) {
          os << "static const double " << p << "_s" << i << "_f[] = {";
          for (size_t j = 0; j < step.fparams.size(); ++j)
            os << (j ? ", " : "") << fparam(step, j);
          os << "};\n";
        }
      }
      os << "static const nncc_step " << p << "_steps[] = {\n";
      for (size_t i = 0; i < entry.steps.size(); ++i) {
        const PlanStep &step = entry.steps[i];
        std::string sp = p + "_s" + std::to_string(i);
        os << "  {.kind = " << stepKindName(step.kind) << ", .kernel = " << step.kernel
           << ", .num_args = " << step.args.size() << ", .args = " << sp << "_args"
           << ", .num_iparams = " << step.iparams.size()
           << ", .iparams = " << orNull(!step.iparams.empty(), sp + "_i")
           << ", .num_fparams = " << step.fparams.size()
           << ", .fparams = " << orNull(!step.fparams.empty(), sp + "_f")
           << ", .parallel_extent = " << step.parallelExtent << ", .name = " << cString(step.name)
           << "},\n";
      }
      os << "};\n";
      if (!entry.checks.empty()) {
        os << "static const nncc_check " << p << "_checks[] = {\n";
        for (const PlanCheck &c : entry.checks)
          os << "  {.message = " << cString(c.message) << ", .offset = " << c.offset << "},\n";
        os << "};\n";
      }
    }
  }
  for (size_t k = 0; k < plan.plans.size(); ++k) {
    os << "static const nncc_entry " << prefix(k) << "entries[] = {\n";
    for (size_t e = 0; e < plan.plans[k].entries.size(); ++e) {
      const EntryPlan &entry = plan.plans[k].entries[e];
      std::string p = prefix(k) + "e" + std::to_string(e);
      os << "  {.name = " << cString(entry.name) << ",\n"
         << "   .num_inputs = " << entry.inputs.size()
         << ", .inputs = " << orNull(!entry.inputs.empty(), p + "_in")
         << ", .num_outputs = " << entry.outputs.size()
         << ", .outputs = " << orNull(!entry.outputs.empty(), p + "_out") << ",\n"
         << "   .arena_bytes = " << entry.arenaBytes << ", .num_steps = " << entry.steps.size()
         << ", .steps = " << orNull(!entry.steps.empty(), p + "_steps")
         << ", .num_checks = " << entry.checks.size()
         << ", .checks = " << orNull(!entry.checks.empty(), p + "_checks")
         << ", .pipeline_stage = " << entry.pipelineStage << "},\n";
    }
    os << "};\n";
  }
  os << "static const nncc_plan plans[] = {\n";
  for (size_t k = 0; k < plan.plans.size(); ++k)
    os << "  {.device_kind = " << (plan.plans[k].deviceKind == NNCC_DEVICE_CUDA ? "NNCC_DEVICE_CUDA" : "NNCC_DEVICE_CPU")
       << ", .num_entries = " << plan.plans[k].entries.size() << ", .entries = " << prefix(k) << "entries},\n";
  os << "};\n";
  for (size_t k = 0; k < plan.gpuLaunches.size(); ++k) {
    if (plan.gpuLaunches[k].empty())
      continue;
    os << "static const nncc_gpu_launch k" << k << "_launches[] = {\n";
    for (const GpuLaunch &l : plan.gpuLaunches[k])
      os << "  {.function = " << cString(l.function) << ", .grid = {" << l.grid[0] << ", "
         << l.grid[1] << ", " << l.grid[2] << "}, .block = {" << l.block[0] << ", " << l.block[1]
         << ", " << l.block[2] << "}, .shared_bytes = 0},\n";
    os << "};\n";
  }
  if (!plan.kernels.empty()) {
    os << "static const nncc_kernel kernels[] = {\n";
    for (size_t k = 0; k < plan.kernels.size(); ++k) {
      size_t launches = k < plan.gpuLaunches.size() ? plan.gpuLaunches[k].size() : 0;
      os << "  {.name = " << cString(plan.kernels[k])
         << ", .cpu = " << orNull(plan.hostCode[k], "nncc_" + plan.kernels[k])
         << ", .num_gpu_launches = " << launches
         << ", .gpu_launches = " << orNull(launches, "k" + std::to_string(k) + "_launches")
         << "},\n";
    }
    os << "};\n";
  }
  if (!plan.gpuImages.empty()) {
    os << "static const nncc_gpu_image gpu_images[] = {\n";
    for (size_t i = 0; i < plan.gpuImages.size(); ++i) {
      const GpuImage &image = plan.gpuImages[i];
      os << "  {.arch = " << cString(image.arch) << ", .ptx = nncc_gpu_ptx_" << i
         << ", .cubin = " << orNull(!image.cubin.empty(), "nncc_gpu_cubin_" + std::to_string(i))
         << ", .cubin_bytes = " << image.cubin.size() << "},\n";
    }
    os << "};\n";
  }
  const WeightBlob &w = plan.weights;
  if (!w.names.empty()) {
    os << "static const nncc_weight weights[] = {\n";
    for (size_t i = 0; i < w.names.size(); ++i)
      os << "  {.name = " << cString(w.names[i]) << ", .offset = " << w.offsets[i]
         << ", .bytes = " << w.sizes[i] << "},\n";
    os << "};\n";
  }
  if (!plan.states.empty()) {
    for (size_t i = 0; i < plan.states.size(); ++i)
      os << "static const int64_t state" << i << "_dims[] = {" << cArray(plan.states[i].desc.dims)
         << (plan.states[i].desc.dims.empty() ? "0" : "") << "};\n";
    os << "static const nncc_state states[] = {\n";
    for (size_t i = 0; i < plan.states.size(); ++i) {
      const StateDesc &st = plan.states[i];
      os << "  {.name = " << cString(st.desc.name) << ", .dtype = " << dtypeName(st.desc.dtype)
         << ", .rank = " << st.desc.dims.size() << ", .dims = state" << i << "_dims, .bytes = " << st.bytes
         << ", .init_weight = " << st.initWeight << ", .shard_parts = " << st.shardParts
         << ", .shard_axis = " << st.shardAxis << ", .shard_blocks = " << st.shardBlocks
         << ", .pipeline_stage = " << st.pipelineStage << "},\n";
    }
    os << "};\n";
  }
  os << "static const nncc_module module = {\n"
     << "  .magic = NNCC_MODULE_MAGIC,\n"
     << "  .abi_version = NNCC_MODULE_ABI_VERSION,\n"
     << "  .struct_size = sizeof(nncc_module),\n"
     << "  .producer = " << cString(kProducer) << ",\n"
     << "  .num_plans = " << plan.plans.size() << ",\n"
     << "  .plans = plans,\n"
     << "  .num_kernels = " << plan.kernels.size() << ",\n"
     << "  .kernels = " << orNull(!plan.kernels.empty(), "kernels") << ",\n"
     << "  .num_weights = " << w.names.size() << ",\n"
     << "  .weights = " << orNull(!w.names.empty(), "weights") << ",\n"
     << "  .weights_data = " << orNull(weightsFile.empty(), "nncc_weights_blob") << ",\n"
     << "  .weights_file = " << (weightsFile.empty() ? "NULL" : cString(weightsFile)) << ",\n"
     << "  .weights_bytes = " << w.data.size() << ",\n"
     << "  .weights_checksum = " << weightsChecksum(w.data) << "ull,\n"
     << "  .num_gpu_images = " << plan.gpuImages.size() << ",\n"
     << "  .gpu_images = " << orNull(!plan.gpuImages.empty(), "gpu_images") << ",\n"
     << "  .cpu_name = " << cString(plan.cpuName) << ",\n"
     << "  .cpu_features = " << cString(llvm::join(plan.cpuFeatures, ",")) << ",\n"
     << "  .plan_checksum = " << planChecksum(plan, weightsFile) << "ull,\n"
     << "  .num_states = " << plan.states.size() << ",\n"
     << "  .states = " << orNull(!plan.states.empty(), "states") << ",\n"
     << "  .data_parallel = " << plan.dataParallel << ",\n"
     << "  .tensor_parallel = " << plan.tensorParallel << ",\n"
     << "  .pipeline_parallel = " << plan.pipelineParallel << ",\n};\n\n"
     << "__attribute__((visibility(\"default\"))) const nncc_module *nncc_module_get(void) {\n"
     << "  return &module;\n}\n";
  return s;
}

} // namespace nncc

