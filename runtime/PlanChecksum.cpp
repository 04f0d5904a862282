//===- PlanChecksum.cpp - bounds-checked walk of a module's tables --------===//
//
// The canonical order (lib/Target/Plan.cpp's planChecksum hashes the same
// values in the same order; PlanHash fixes their encoding):
//   producer; plans: count, then per plan its device_kind and entries:
//   count, then per entry its name, inputs and outputs
//   (count; per tensor name, dtype, rank, dims), arena_bytes, steps (count;
//   per step kind, kernel, args (count; kind, index, offset, bytes),
//   iparams, fparams, parallel_extent, name), checks (count; message,
//   offset) and pipeline_stage; kernels (count; name, whether it has CPU code, GPU launches:
//   count; function, grid, block, shared_bytes); weights (count; name,
//   offset, bytes); whether the blob is embedded, weights_file,
//   weights_bytes, weights_checksum; GPU images (count; arch, ptx,
//   cubin_bytes, whether it has a cubin, the cubin's bytes); cpu_name,
//   cpu_features; states (count; per state name, dtype, rank, dims, bytes,
//   init_weight, shard_parts, shard_axis, shard_blocks, pipeline_stage);
//   data_parallel, tensor_parallel, pipeline_parallel.
//
//===----------------------------------------------------------------------===//
#include "PlanChecksum.h"

#include "nncc/plan_hash.h"

#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <string>

namespace nncc::rt {

namespace {

Status invalid(const std::string &msg) {
  return error(NNCC_ERROR_INVALID_MODULE, "corrupt module: " + msg);
}

/// Walks tables, hashing as it goes. Names of tables are built only on
/// failure (`name` is a callable returning std::string).
class Walker {
public:
  explicit Walker(const ModuleMemory &memory)
      // Tables and strings the compiler emits do not overlap (beyond a few
      // merged strings), so a legitimate walk reads about the module's size;
      // the budget stops a corrupt one that points many counts at one big
      // table from running for hours.
      : memory_(memory), budget_(4 * memory.totalBytes() + (uint64_t(1) << 20)) {}

  template <typename T, typename Name> Status table(const T *p, int64_t count, Name name) {
    if (count < 0)
      return invalid(name() + format(" has a negative count %lld", (long long)count));
    if (count == 0)
      return Status::ok();
    if (static_cast<uint64_t>(count) > UINT64_MAX / sizeof(T))
      return invalid(name() + format(" has an impossible count %lld", (long long)count));
    uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
    if (reinterpret_cast<uintptr_t>(p) % alignof(T) != 0 || !memory_.contains(p, bytes))
      return invalid(name() + format(" (%lld entries at %p) lies outside the module",
                                     (long long)count, static_cast<const void *>(p)));
    return spend(bytes, name);
  }

  /// A string field, NULL allowed (hashed as absent).
  template <typename Name> Status string(const char *s, Name name) {
    if (!s) {
      hash.absent();
      return Status::ok();
    }
    int64_t n = memory_.stringLength(s);
    if (n < 0)
      return invalid(name() + format(" (at %p) is not a string inside the module",
                                     static_cast<const void *>(s)));
    NNCC_RETURN_IF_ERROR(spend(static_cast<uint64_t>(n) + 1, name));
    hash.string(s, static_cast<size_t>(n));
    return Status::ok();
  }

  /// Bytes the runtime reads later (the embedded weights): checked, not hashed.
  template <typename Name> Status blob(const void *p, int64_t bytes, Name name) {
    if (bytes < 0 || !memory_.contains(p, static_cast<uint64_t>(bytes)))
      return invalid(name() + format(" (%lld bytes at %p) lies outside the module",
                                     (long long)bytes, p));
    return Status::ok();
  }

  template <typename Name> Status code(const void *fn, Name name) {
    if (!memory_.executable(fn))
      return invalid(name() + format(" (at %p) is not code of the module", fn));
    return Status::ok();
  }

  PlanHash hash;

private:
  template <typename Name> Status spend(uint64_t bytes, Name name) {
    if (bytes > budget_)
      return invalid("its tables overlap far beyond its size (at " + name() + ")");
    budget_ -= bytes;
    return Status::ok();
  }

  const ModuleMemory &memory_;
  uint64_t budget_;
};

Status walkDescs(Walker &w, const nncc_tensor_desc *descs, int32_t n, const std::string &where) {
  w.hash.integer(n);
  NNCC_RETURN_IF_ERROR(w.table(descs, n, [&] { return where; }));
  for (int32_t i = 0; i < n; ++i) {
    const nncc_tensor_desc &d = descs[i];
    auto name = [&] { return where + "[" + std::to_string(i) + "]"; };
    NNCC_RETURN_IF_ERROR(w.string(d.name, [&] { return name() + ".name"; }));
    w.hash.integer(d.dtype);
    w.hash.integer(d.rank);
    NNCC_RETURN_IF_ERROR(w.table(d.dims, d.rank, [&] { return name() + ".dims"; }));
    for (int32_t k = 0; k < d.rank; ++k)
      w.hash.integer(d.dims[k]);
  }
  return Status::ok();
}

Status walkSteps(Walker &w, const nncc_entry &entry, const std::string &where) {
  w.hash.integer(entry.num_steps);
  NNCC_RETURN_IF_ERROR(w.table(entry.steps, entry.num_steps, [&] { return where + ".steps"; }));
  for (int32_t s = 0; s < entry.num_steps; ++s) {
    const nncc_step &st = entry.steps[s];
    auto name = [&](const char *field) {
      return where + ".steps[" + std::to_string(s) + "]." + field;
    };
    w.hash.integer(st.kind);
    w.hash.integer(st.kernel);
    w.hash.integer(st.num_args);
    NNCC_RETURN_IF_ERROR(w.table(st.args, st.num_args, [&] { return name("args"); }));
    for (int32_t a = 0; a < st.num_args; ++a) {
      w.hash.integer(st.args[a].kind);
      w.hash.integer(st.args[a].index);
      w.hash.integer(st.args[a].offset);
      w.hash.integer(st.args[a].bytes);
    }
    w.hash.integer(st.num_iparams);
    NNCC_RETURN_IF_ERROR(w.table(st.iparams, st.num_iparams, [&] { return name("iparams"); }));
    for (int32_t i = 0; i < st.num_iparams; ++i)
      w.hash.integer(st.iparams[i]);
    w.hash.integer(st.num_fparams);
    NNCC_RETURN_IF_ERROR(w.table(st.fparams, st.num_fparams, [&] { return name("fparams"); }));
    for (int32_t i = 0; i < st.num_fparams; ++i)
      w.hash.real(st.fparams[i]);
    w.hash.integer(st.parallel_extent);
    NNCC_RETURN_IF_ERROR(w.string(st.name, [&] { return name("name"); }));
  }
  return Status::ok();
}

Status walkEntries(Walker &w, const nncc_plan &plan, const std::string &planName) {
  w.hash.integer(plan.num_entries);
  NNCC_RETURN_IF_ERROR(w.table(plan.entries, plan.num_entries, [&] { return planName + ".entries"; }));
  for (int32_t e = 0; e < plan.num_entries; ++e) {
    const nncc_entry &entry = plan.entries[e];
    std::string where = planName + ".entries[" + std::to_string(e) + "]";
    NNCC_RETURN_IF_ERROR(w.string(entry.name, [&] { return where + ".name"; }));
    NNCC_RETURN_IF_ERROR(walkDescs(w, entry.inputs, entry.num_inputs, where + ".inputs"));
    NNCC_RETURN_IF_ERROR(walkDescs(w, entry.outputs, entry.num_outputs, where + ".outputs"));
    w.hash.integer(entry.arena_bytes);
    NNCC_RETURN_IF_ERROR(walkSteps(w, entry, where));
    w.hash.integer(entry.num_checks);
    NNCC_RETURN_IF_ERROR(
        w.table(entry.checks, entry.num_checks, [&] { return where + ".checks"; }));
    for (int32_t c = 0; c < entry.num_checks; ++c) {
      NNCC_RETURN_IF_ERROR(w.string(entry.checks[c].message, [&] {
        return where + ".checks[" + std::to_string(c) + "].message";
      }));
      w.hash.integer(entry.checks[c].offset);
    }
    w.hash.integer(entry.pipeline_stage);
  }
  return Status::ok();
}

Status walkPlans(Walker &w, const nncc_module &m) {
  w.hash.integer(m.num_plans);
  NNCC_RETURN_IF_ERROR(w.table(m.plans, m.num_plans, [] { return std::string("plans"); }));
  for (int32_t p = 0; p < m.num_plans; ++p) {
    w.hash.integer(m.plans[p].device_kind);
    NNCC_RETURN_IF_ERROR(walkEntries(w, m.plans[p], "plans[" + std::to_string(p) + "]"));
  }
  return Status::ok();
}

Status walkKernels(Walker &w, const nncc_module &m) {
  w.hash.integer(m.num_kernels);
  NNCC_RETURN_IF_ERROR(w.table(m.kernels, m.num_kernels, [] { return std::string("kernels"); }));
  for (int32_t k = 0; k < m.num_kernels; ++k) {
    const nncc_kernel &kernel = m.kernels[k];
    auto name = [&](const char *field) {
      return "kernels[" + std::to_string(k) + "]." + field;
    };
    NNCC_RETURN_IF_ERROR(w.string(kernel.name, [&] { return name("name"); }));
    w.hash.integer(kernel.cpu != nullptr);
    if (kernel.cpu)
      NNCC_RETURN_IF_ERROR(
          w.code(reinterpret_cast<const void *>(kernel.cpu), [&] { return name("cpu"); }));
    w.hash.integer(kernel.num_gpu_launches);
    NNCC_RETURN_IF_ERROR(w.table(kernel.gpu_launches, kernel.num_gpu_launches,
                                 [&] { return name("gpu_launches"); }));
    for (int32_t l = 0; l < kernel.num_gpu_launches; ++l) {
      const nncc_gpu_launch &g = kernel.gpu_launches[l];
      NNCC_RETURN_IF_ERROR(w.string(g.function, [&] {
        return name("gpu_launches") + "[" + std::to_string(l) + "].function";
      }));
      for (int i = 0; i < 3; ++i)
        w.hash.integer(g.grid[i]);
      for (int i = 0; i < 3; ++i)
        w.hash.integer(g.block[i]);
      w.hash.integer(g.shared_bytes);
    }
  }
  return Status::ok();
}

Status walkWeights(Walker &w, const nncc_module &m) {
  w.hash.integer(m.num_weights);
  NNCC_RETURN_IF_ERROR(w.table(m.weights, m.num_weights, [] { return std::string("weights"); }));
  for (int32_t i = 0; i < m.num_weights; ++i) {
    NNCC_RETURN_IF_ERROR(w.string(m.weights[i].name, [&] {
      return "weights[" + std::to_string(i) + "].name";
    }));
    w.hash.integer(m.weights[i].offset);
    w.hash.integer(m.weights[i].bytes);
  }
  w.hash.integer(m.weights_data != nullptr);
  NNCC_RETURN_IF_ERROR(w.string(m.weights_file, [] { return std::string("weights_file"); }));
  w.hash.integer(m.weights_bytes);
  w.hash.integer(static_cast<int64_t>(m.weights_checksum));
  if (m.weights_data)
    NNCC_RETURN_IF_ERROR(w.blob(m.weights_data, m.weights_bytes,
                                [] { return std::string("the embedded weight blob"); }));
  return Status::ok();
}

Status walkGpuImages(Walker &w, const nncc_module &m) {
  w.hash.integer(m.num_gpu_images);
  NNCC_RETURN_IF_ERROR(
      w.table(m.gpu_images, m.num_gpu_images, [] { return std::string("gpu_images"); }));
  for (int32_t i = 0; i < m.num_gpu_images; ++i) {
    const nncc_gpu_image &img = m.gpu_images[i];
    auto name = [&](const char *field) {
      return "gpu_images[" + std::to_string(i) + "]." + field;
    };
    NNCC_RETURN_IF_ERROR(w.string(img.arch, [&] { return name("arch"); }));
    NNCC_RETURN_IF_ERROR(w.string(img.ptx, [&] { return name("ptx"); }));
    w.hash.integer(img.cubin_bytes);
    w.hash.integer(img.cubin != nullptr);
    if (img.cubin) {
      NNCC_RETURN_IF_ERROR(w.table(img.cubin, img.cubin_bytes, [&] { return name("cubin"); }));
      w.hash.bytes(img.cubin, static_cast<size_t>(img.cubin_bytes));
    }
  }
  return Status::ok();
}

Status walkStates(Walker &w, const nncc_module &m) {
  w.hash.integer(m.num_states);
  NNCC_RETURN_IF_ERROR(w.table(m.states, m.num_states, [] { return std::string("states"); }));
  for (int32_t i = 0; i < m.num_states; ++i) {
    const nncc_state &st = m.states[i];
    auto name = [&](const char *field) { return "states[" + std::to_string(i) + "]." + field; };
    NNCC_RETURN_IF_ERROR(w.string(st.name, [&] { return name("name"); }));
    w.hash.integer(st.dtype);
    w.hash.integer(st.rank);
    NNCC_RETURN_IF_ERROR(w.table(st.dims, st.rank, [&] { return name("dims"); }));
    for (int32_t k = 0; k < st.rank; ++k)
      w.hash.integer(st.dims[k]);
    w.hash.integer(st.bytes);
    w.hash.integer(st.init_weight);
    w.hash.integer(st.shard_parts);
    w.hash.integer(st.shard_axis);
    w.hash.integer(st.shard_blocks);
    w.hash.integer(st.pipeline_stage);
  }
  w.hash.integer(m.data_parallel);
  w.hash.integer(m.tensor_parallel);
  w.hash.integer(m.pipeline_parallel);
  return Status::ok();
}

/// What dl_iterate_phdr looks for: the object at `base` named `name`, or the
/// one with a segment containing `address`.
struct Search {
  uintptr_t base = 0;
  const char *name = nullptr;
  uintptr_t address = 0;
  ModuleMemory *out = nullptr;
  bool found = false;
};

int collectSegments(dl_phdr_info *info, size_t, void *data) {
  auto *s = static_cast<Search *>(data);
  bool match;
  if (s->name) {
    match = info->dlpi_addr == s->base && info->dlpi_name &&
            std::strcmp(info->dlpi_name, s->name) == 0;
  } else {
    match = false;
    for (int i = 0; i < info->dlpi_phnum && !match; ++i) {
      const ElfW(Phdr) &p = info->dlpi_phdr[i];
      uintptr_t begin = info->dlpi_addr + p.p_vaddr;
      match = p.p_type == PT_LOAD && s->address >= begin && s->address - begin < p.p_memsz;
    }
  }
  if (!match)
    return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &p = info->dlpi_phdr[i];
    if (p.p_type == PT_LOAD && (p.p_flags & PF_R))
      s->out->add(reinterpret_cast<const void *>(info->dlpi_addr + p.p_vaddr), p.p_memsz,
                  (p.p_flags & PF_X) != 0);
  }
  s->found = true;
  return 1;
}

} // namespace

Status ModuleMemory::ofLibrary(void *handle, ModuleMemory *out) {
  link_map *map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map)
    return error(NNCC_ERROR_INVALID_MODULE, "cannot find the loaded library's segments");
  Search s;
  s.base = map->l_addr;
  s.name = map->l_name;
  s.out = out;
  dl_iterate_phdr(collectSegments, &s);
  if (!s.found)
    return error(NNCC_ERROR_INVALID_MODULE, "cannot find the loaded library's segments");
  return Status::ok();
}

Status ModuleMemory::ofObjectContaining(const void *address, ModuleMemory *out) {
  Search s;
  s.address = reinterpret_cast<uintptr_t>(address);
  s.out = out;
  dl_iterate_phdr(collectSegments, &s);
  if (!s.found)
    return error(NNCC_ERROR_INVALID_MODULE, "no loaded object contains the address");
  return Status::ok();
}

void ModuleMemory::add(const void *begin, size_t bytes, bool executable) {
  auto b = reinterpret_cast<uintptr_t>(begin);
  if (bytes > 0 && b + bytes > b)
    ranges_.push_back(Range{b, b + bytes, executable});
}

const ModuleMemory::Range *ModuleMemory::find(uintptr_t p) const {
  for (const Range &r : ranges_)
    if (p >= r.begin && p < r.end)
      return &r;
  return nullptr;
}

bool ModuleMemory::contains(const void *p, uint64_t bytes) const {
  const Range *r = find(reinterpret_cast<uintptr_t>(p));
  return r && bytes <= r->end - reinterpret_cast<uintptr_t>(p);
}

bool ModuleMemory::executable(const void *p) const {
  const Range *r = find(reinterpret_cast<uintptr_t>(p));
  return r && r->executable;
}

int64_t ModuleMemory::stringLength(const char *s) const {
  const Range *r = find(reinterpret_cast<uintptr_t>(s));
  if (!r)
    return -1;
  const void *nul = std::memchr(s, 0, r->end - reinterpret_cast<uintptr_t>(s));
  return nul ? static_cast<const char *>(nul) - s : -1;
}

uint64_t ModuleMemory::totalBytes() const {
  uint64_t n = 0;
  for (const Range &r : ranges_)
    n += r.end - r.begin;
  return n;
}

Status planChecksum(const nncc_module &m, const ModuleMemory &memory, uint64_t *out) {
  if (!memory.contains(&m, sizeof(m)))
    return invalid("its nncc_module struct lies outside the module");
  Walker w(memory);
  NNCC_RETURN_IF_ERROR(w.string(m.producer, [] { return std::string("producer"); }));
  NNCC_RETURN_IF_ERROR(walkPlans(w, m));
  NNCC_RETURN_IF_ERROR(walkKernels(w, m));
  NNCC_RETURN_IF_ERROR(walkWeights(w, m));
  NNCC_RETURN_IF_ERROR(walkGpuImages(w, m));
  NNCC_RETURN_IF_ERROR(w.string(m.cpu_name, [] { return std::string("cpu_name"); }));
  NNCC_RETURN_IF_ERROR(w.string(m.cpu_features, [] { return std::string("cpu_features"); }));
  NNCC_RETURN_IF_ERROR(walkStates(w, m));
  *out = w.hash.value();
  return Status::ok();
}

} // namespace nncc::rt
