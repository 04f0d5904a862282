//===- CudaDriver.cpp -----------------------------------------------------===//
#include "CudaDriver.h"

#include "../SharedLibrary.h"

#include <cstdlib>
#include <dlfcn.h>

namespace nncc::rt {

namespace {

#define NNCC_STR(x) NNCC_STR2(x)
#define NNCC_STR2(x) #x

using GetProcAddressFn = decltype(&::cuGetProcAddress);

/// Resolves every symbol of CudaSymbols.h: through cuGetProcAddress (the
/// plain name at the CUDA_VERSION of our cuda.h gives exactly the ABI its
/// prototypes declare), or, from drivers older than CUDA 12, by the
/// versioned names cuda.h maps to. Lists what is missing in `missing`.
void resolve(void *lib, CudaSymbols *s, std::string *missing) {
  auto getProc = reinterpret_cast<GetProcAddressFn>(dlsym(lib, NNCC_STR(cuGetProcAddress)));
#define NNCC_CU(name)                                                                              \
  {                                                                                                \
    void *fn = nullptr;                                                                            \
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;                   \
    if (getProc)                                                                                   \
      getProc(#name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found);                      \
    if (!fn || found != CU_GET_PROC_ADDRESS_SUCCESS)                                               \
      fn = dlsym(lib, NNCC_STR(name));                                                             \
    s->name = reinterpret_cast<decltype(s->name)>(fn);                                             \
    if (!fn)                                                                                       \
      noteMissing(missing, #name);                                                                 \
  }
#include "CudaSymbols.h"
#undef NNCC_CU
}

} // namespace

std::string cudaVersionString(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

Status CudaDriver::check(CUresult result, const char *call, const std::string &where) const {
  if (result == CUDA_SUCCESS)
    return Status::ok();
  const char *name = nullptr, *text = nullptr;
  if (sym_.cuGetErrorName)
    sym_.cuGetErrorName(result, &name);
  if (sym_.cuGetErrorString)
    sym_.cuGetErrorString(result, &text);
  std::string msg = (where.empty() ? "" : where + ": ") + call + " failed: " +
                    (name ? name : "CUDA error " + std::to_string(result));
  if (text)
    msg += std::string(" (") + text + ")";
  nncc_status code = result == CUDA_ERROR_OUT_OF_MEMORY ? NNCC_ERROR_OUT_OF_MEMORY
                     : result == CUDA_ERROR_NO_DEVICE || result == CUDA_ERROR_INVALID_DEVICE
                         ? NNCC_ERROR_UNAVAILABLE
                         : NNCC_ERROR_INTERNAL;
  return error(code, msg);
}

Status CudaDriver::load(std::unique_ptr<CudaDriver> *out) {
  const char *env = std::getenv("NNCC_CUDA_DRIVER");
  std::string lib = env && *env ? env : "libcuda.so.1";
  auto unavailable = [](std::string msg) { return error(NNCC_ERROR_UNAVAILABLE, std::move(msg)); };
  dlerror();
  void *h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    return unavailable("no CUDA driver (" + lib + ") found" + (e ? std::string(": ") + e : "") +
                       "; a GPU needs the NVIDIA driver installed" +
                       (env && *env ? " (NNCC_CUDA_DRIVER is set)" : ""));
  }
  auto d = std::unique_ptr<CudaDriver>(new CudaDriver());
  d->library_ = lib;
  std::string missing;
  resolve(h, &d->sym_, &missing);
  // On failure the library stays loaded: harmless, and it may be in use elsewhere.
  if (!missing.empty())
    return unavailable("the CUDA driver " + lib + " lacks " + missing +
                       " (this runtime needs a driver for CUDA " + cudaVersionString(CUDA_VERSION) +
                       " or newer)");
  Status s = d->check(d->sym_.cuInit(0), "cuInit", "");
  if (!s.isOk())
    return unavailable("no GPU: " + s.message());
  s = d->check(d->sym_.cuDriverGetVersion(&d->version_), "cuDriverGetVersion", "");
  if (s.isOk())
    s = d->check(d->sym_.cuDeviceGetCount(&d->deviceCount_), "cuDeviceGetCount", "");
  for (int i = 0; s.isOk() && i < d->deviceCount_; ++i) {
    CUdevice dev = 0;
    s = d->check(d->sym_.cuDeviceGet(&dev, i), "cuDeviceGet", "cuda:" + std::to_string(i));
    d->devices_.push_back(dev);
  }
  if (!s.isOk())
    return s;
  if (d->deviceCount_ == 0)
    return unavailable("no GPU: the CUDA driver (" + lib + ") reports 0 devices");
  d->contexts_.assign(static_cast<size_t>(d->deviceCount_), nullptr);
  *out = std::move(d);
  return Status::ok();
}

Status CudaDriver::get(const CudaDriver **out) {
  static LazyLibrary<CudaDriver> driver(&CudaDriver::load);
  return driver.get(out);
}

CudaContextGuard::~CudaContextGuard() {
  CUcontext popped = nullptr;
  if (driver_)
    driver_->sym().cuCtxPopCurrent(&popped);
}

Status CudaDriver::makeCurrent(int index, CudaContextGuard *guard) const {
  std::string where = "cuda:" + std::to_string(index);
  if (index < 0 || index >= deviceCount_)
    return error(NNCC_ERROR_UNAVAILABLE,
                 format("device %s does not exist (this machine has %d CUDA device%s: cuda:0%s)",
                        where.c_str(), deviceCount_, deviceCount_ == 1 ? "" : "s",
                        deviceCount_ > 1 ? format("..cuda:%d", deviceCount_ - 1).c_str() : ""));
  CUcontext ctx;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!contexts_[index])
      NNCC_CU_CALL(*this, where, cuDevicePrimaryCtxRetain, &contexts_[index], devices_[index]);
    ctx = contexts_[index];
  }
  NNCC_CU_CALL(*this, where, cuCtxPushCurrent, ctx);
  guard->driver_ = this;
  return Status::ok();
}

} // namespace nncc::rt
