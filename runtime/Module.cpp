//===- Module.cpp - loading a model.so ------------------------------------===//
#include "Module.h"

#include "DType.h"
#include "PlanChecksum.h"
#include "cpu/CpuFeatures.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <memory>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nncc::rt {

namespace {

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

} // namespace

Module::~Module() {
  deviceStates_.clear(); // device copies of the weights and code, while the module is mapped
  if (map_)
    munmap(map_, mapBytes_);
  if (dl_)
    dlclose(dl_);
}

void Module::release() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1)
    delete this;
}

Status Module::deviceState(const std::string &device, const DeviceStateFactory &create,
                           ModuleDeviceState **out) const {
  std::lock_guard<std::mutex> lock(deviceStateMutex_);
  std::unique_ptr<ModuleDeviceState> &slot = deviceStates_[device];
  if (!slot) {
    Status s = create(&slot);
    if (!s.isOk()) {
      deviceStates_.erase(device);
      return s;
    }
  }
  *out = slot.get();
  return Status::ok();
}

int32_t Module::findEntry(const char *name) const {
  if (!name)
    return -1;
  for (int32_t i = 0; i < numEntries(); ++i)
    if (std::strcmp(entry(i).name, name) == 0)
      return i;
  return -1;
}

const nncc_plan *Module::plan(int32_t deviceKind) const {
  for (int32_t p = 0; p < abi_->num_plans; ++p)
    if (abi_->plans[p].device_kind == deviceKind)
      return &abi_->plans[p];
  return nullptr;
}

std::string Module::planKinds() const {
  std::string s;
  for (int32_t p = 0; p < abi_->num_plans; ++p)
    s += (p ? ", " : "") + std::string(deviceKindName(abi_->plans[p].device_kind));
  return s;
}

Status Module::planFor(int32_t deviceKind, const nncc_plan **out) const {
  *out = plan(deviceKind);
  if (*out)
    return Status::ok();
  const char *kind = deviceKindName(deviceKind);
  return error(NNCC_ERROR_UNAVAILABLE,
               format("module '%s' has no plan for %s devices (it was compiled for %s; compile it with a "
                      "target list that includes %s, e.g. the default --target)",
                      path_.c_str(), kind, planKinds().c_str(), kind));
}

int64_t Module::maxArenaBytes(const nncc_plan &plan) {
  int64_t most = 0;
  for (int32_t e = 0; e < plan.num_entries; ++e)
    most = std::max(most, plan.entries[e].arena_bytes);
  return most;
}

std::string Module::entryNames() const {
  std::string s;
  for (int32_t i = 0; i < numEntries(); ++i) {
    if (i)
      s += ", ";
    s += "'" + std::string(entry(i).name) + "'";
  }
  return s.empty() ? "none" : s;
}

int32_t Module::findState(const char *name) const {
  if (!name)
    return -1;
  for (int32_t i = 0; i < abi_->num_states; ++i)
    if (std::strcmp(abi_->states[i].name, name) == 0)
      return i;
  return -1;
}

std::string Module::stateNames() const {
  std::string s;
  for (int32_t i = 0; i < abi_->num_states; ++i)
    s += (i ? ", '" : "'") + std::string(abi_->states[i].name) + "'";
  return s.empty() ? "none" : s;
}

Status Module::load(const char *path, Module **out) {
  if (!path || !out)
    return error(NNCC_ERROR_INVALID_ARGUMENT, "nncc_module_load: path and out must not be NULL");
  *out = nullptr;
  std::string display = path;
  auto fail = [&](nncc_status code, const std::string &why) {
    return error(code, "cannot load module '" + display + "': " + why);
  };

  struct stat st;
  if (stat(path, &st) != 0)
    return fail(errno == ENOENT ? NNCC_ERROR_NOT_FOUND : NNCC_ERROR_INVALID_ARGUMENT,
                std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fail(NNCC_ERROR_INVALID_ARGUMENT, "not a regular file");

  // An absolute path keeps dlopen from searching LD_LIBRARY_PATH for a bare
  // name, and locates a weights side file next to the .so.
  char *resolved = realpath(path, nullptr);
  if (!resolved)
    return fail(NNCC_ERROR_NOT_FOUND, std::strerror(errno));
  std::string absPath = resolved;
  std::free(resolved);

  Status elf = checkElfFile(absPath);
  if (!elf.isOk())
    return fail(elf.code(), elf.message());

  std::unique_ptr<Module, void (*)(Module *)> m(new Module(), [](Module *p) { p->release(); });
  m->path_ = absPath;
  dlerror();
  m->dl_ = dlopen(absPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m->dl_) {
    const char *why = dlerror();
    return fail(NNCC_ERROR_INVALID_MODULE, why ? why : "dlopen failed");
  }
  dlerror();
  void *sym = dlsym(m->dl_, NNCC_MODULE_SYMBOL);
  if (!sym)
    return fail(NNCC_ERROR_INVALID_MODULE,
                "not an nncc module (it does not export '" NNCC_MODULE_SYMBOL "')");
  // Every pointer of the module is checked against its own segments before
  // it is followed: a corrupt file is an error, never a wild read or call.
  ModuleMemory memory;
  Status s = ModuleMemory::ofLibrary(m->dl_, &memory);
  if (!s.isOk())
    return fail(s.code(), s.message());
  if (!memory.executable(sym))
    return fail(NNCC_ERROR_INVALID_MODULE,
                "corrupt module: '" NNCC_MODULE_SYMBOL "' is not code of the module");
  auto get = reinterpret_cast<nncc_module_get_fn>(sym);
  m->abi_ = get();
  if (!m->abi_)
    return fail(NNCC_ERROR_INVALID_MODULE, NNCC_MODULE_SYMBOL "() returned NULL");

  s = m->verify(memory);
  // A module with GPU code may still run on a GPU of this machine: the CPU
  // device refuses it then (CpuDevice), not the load.
  if (s.isOk() && m->abi_->num_gpu_images == 0)
    s = checkHostCpu(*m->abi_);
  if (s.isOk())
    s = m->loadWeights();
  if (!s.isOk())
    return fail(s.code(), s.message());
  *out = m.release();
  return Status::ok();
}

Status Module::verify(const ModuleMemory &memory) {
  // magic, abi_version and struct_size first: nothing past abi_version may be
  // read before the version matches (the layout of the rest belongs to it).
  if (!memory.contains(abi_, offsetof(nncc_module, struct_size) + sizeof(uint64_t)))
    return error(NNCC_ERROR_INVALID_MODULE,
                 NNCC_MODULE_SYMBOL "() returned a pointer outside the module");
  const nncc_module &abi = *abi_;
  if (abi.magic != NNCC_MODULE_MAGIC)
    return error(NNCC_ERROR_INVALID_MODULE,
                 format("bad module magic 0x%08x (expected 0x%08x)", abi.magic, NNCC_MODULE_MAGIC));
  if (abi.abi_version != NNCC_MODULE_ABI_VERSION)
    return error(NNCC_ERROR_ABI_MISMATCH,
                 format("module ABI version %u, but this runtime (nncc %s) loads version %u; "
                        "recompile the model with a matching nncc or use a matching runtime",
                        abi.abi_version, NNCC_RUNTIME_VERSION, NNCC_MODULE_ABI_VERSION));
  if (abi.struct_size < sizeof(nncc_module))
    return error(NNCC_ERROR_ABI_MISMATCH,
                 format("module struct is %llu bytes, this runtime expects at least %zu",
                        static_cast<unsigned long long>(abi.struct_size), sizeof(nncc_module)));
  uint64_t sum = 0;
  NNCC_RETURN_IF_ERROR(planChecksum(abi, memory, &sum));
  if (sum != abi.plan_checksum)
    return error(NNCC_ERROR_INVALID_MODULE,
                 format("plan checksum mismatch (the tables hash to 0x%016llx, the module "
                        "records 0x%016llx): the module is corrupt",
                        static_cast<unsigned long long>(sum),
                        static_cast<unsigned long long>(abi.plan_checksum)));
  NNCC_RETURN_IF_ERROR(verifyPlan(abi, &plan_));
  // Entries by name, in the order of their stage-0 variants; the verifier
  // checked that each name has one variant per stage.
  const nncc_plan &first = abi.plans[0];
  for (int32_t e = 0; e < first.num_entries; ++e) {
    if (first.entries[e].pipeline_stage != 0)
      continue;
    std::vector<int32_t> stages(static_cast<size_t>(abi.pipeline_parallel), -1);
    for (int32_t f = 0; f < first.num_entries; ++f)
      if (std::strcmp(first.entries[f].name, first.entries[e].name) == 0)
        stages[first.entries[f].pipeline_stage] = f;
    stageEntries_.push_back(std::move(stages));
  }
  stateDims_.resize(static_cast<size_t>(abi.num_states));
  for (int32_t i = 0; i < abi.num_states; ++i) {
    const nncc_state &st = abi.states[i];
    int32_t parts = st.shard_parts > 1 ? st.shard_parts : 1;
    stateDims_[i].assign(st.dims, st.dims + st.rank);
    if (parts > 1)
      stateDims_[i][st.shard_axis] *= parts; // the verifier bounds bytes * parts
    stateDescs_.push_back({st.name, st.dtype, st.rank, stateDims_[i].data()});
    stateBytes_.push_back(st.bytes * parts);
  }
  return Status::ok();
}

Status Module::loadWeights() {
  const nncc_module &abi = *abi_;
  if (abi.weights_bytes < 0)
    return error(NNCC_ERROR_INVALID_MODULE, format("negative weights_bytes %lld",
                                                   static_cast<long long>(abi.weights_bytes)));
  if (abi.weights_data && abi.weights_file)
    return error(NNCC_ERROR_INVALID_MODULE,
                 "module has both embedded weights and a weights file");
  size_t bytes = static_cast<size_t>(abi.weights_bytes);
  if (abi.weights_data) {
    weights_ = abi.weights_data;
  } else if (abi.weights_file) {
    std::string file = abi.weights_file;
    if (file.empty() || file[0] != '/')
      file = directoryOf(path_) + "/" + file;
    int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return error(NNCC_ERROR_NOT_FOUND,
                   "cannot open weights file '" + file + "': " + std::strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != bytes) {
      close(fd);
      return error(NNCC_ERROR_INVALID_MODULE,
                   format("weights file '%s' has %lld bytes, the module expects %lld", file.c_str(),
                          static_cast<long long>(st.st_size),
                          static_cast<long long>(abi.weights_bytes)));
    }
    if (bytes > 0) {
      void *p = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        int err = errno;
        close(fd);
        return error(NNCC_ERROR_OUT_OF_MEMORY,
                     "cannot map weights file '" + file + "': " + std::strerror(err));
      }
      map_ = p;
      mapBytes_ = bytes;
      weights_ = static_cast<const uint8_t *>(p);
    }
    close(fd);
  } else if (bytes > 0) {
    return error(NNCC_ERROR_INVALID_MODULE,
                 "module declares weights but has neither embedded data nor a weights file");
  }

  uint64_t sum = fnv1a64(weights_, weights_ ? bytes : 0);
  if (sum != abi.weights_checksum)
    return error(NNCC_ERROR_INVALID_MODULE,
                 format("weights checksum mismatch (FNV-1a 64 of %lld bytes is 0x%016llx, the "
                        "module records 0x%016llx): the weights are corrupt or do not belong "
                        "to this module",
                        static_cast<long long>(abi.weights_bytes),
                        static_cast<unsigned long long>(sum),
                        static_cast<unsigned long long>(abi.weights_checksum)));
  return Status::ok();
}

} // namespace nncc::rt
