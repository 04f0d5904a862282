//===- CudaModule.cpp -----------------------------------------------------===//
#include "CudaModule.h"

#include "GpuImage.h"

namespace nncc::rt {

namespace {

/// Bytes of the JIT's error log kept for the error message.
constexpr size_t kJitLogBytes = 8192;

} // namespace

Status CudaModule::create(const Module &module, const CudaDriver &driver, int index,
                          std::unique_ptr<ModuleDeviceState> *out) {
  std::unique_ptr<CudaModule> m(new CudaModule(driver, index));
  m->where_ = "cuda:" + std::to_string(index);
  const nncc_module &abi = module.abi();
  bool hasLaunches = false;
  for (int32_t k = 0; k < abi.num_kernels; ++k)
    hasLaunches |= abi.kernels[k].num_gpu_launches > 0;
  if (hasLaunches)
    NNCC_RETURN_IF_ERROR(m->loadCode(module));

  if (module.weightsBytes() > 0) {
    const std::string &w = m->where_;
    NNCC_CU_CALL(driver, w + " (weights)", cuMemAlloc, &m->weights_,
                 static_cast<size_t>(module.weightsBytes()));
    // On a stream of its own, non-blocking: the legacy NULL stream would
    // wait for (and hold up) other work of the process on this GPU.
    CUstream upload = nullptr;
    NNCC_CU_CALL(driver, w + " (weights)", cuStreamCreate, &upload, CU_STREAM_NON_BLOCKING);
    Status s = driver.check(driver.sym().cuMemcpyHtoDAsync(m->weights_, module.weights(),
                                                           static_cast<size_t>(module.weightsBytes()),
                                                           upload),
                            "cuMemcpyHtoDAsync", w + " (weights)");
    CUresult synced = driver.sym().cuStreamSynchronize(upload);
    if (s.isOk())
      s = driver.check(synced, "cuStreamSynchronize", w + " (weights)");
    driver.sym().cuStreamDestroy(upload);
    NNCC_RETURN_IF_ERROR(s);
  }
  *out = std::move(m);
  return Status::ok();
}

Status CudaModule::loadCode(const Module &module) {
  const nncc_module &abi = module.abi();
  CUdevice dev = driver_.device(index_);
  int major = 0, minor = 0;
  NNCC_CU_CALL(driver_, where_, cuDeviceGetAttribute, &major,
               CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  NNCC_CU_CALL(driver_, where_, cuDeviceGetAttribute, &minor,
               CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  std::vector<GpuCodeChoice> choices;
  NNCC_RETURN_IF_ERROR(chooseGpuCode(abi, major, minor, &choices).prefix(where_ + ": "));

  // Best first; a failure (a cubin the driver refuses, PTX of an ISA newer
  // than the driver reads) moves on to the next and is reported if none loads.
  std::string failures;
  for (const GpuCodeChoice &c : choices) {
    std::string what = std::string(c.image->arch) + (c.cubin ? " cubin" : " PTX (JIT)");
    Status s;
    if (c.cubin) {
      s = driver_.check(driver_.sym().cuModuleLoadData(&cuModule_, c.image->cubin),
                        "cuModuleLoadData", where_);
    } else {
      std::string log(kJitLogBytes, '\0');
      CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
      void *values[] = {&log[0], reinterpret_cast<void *>(kJitLogBytes)};
      s = driver_.check(driver_.sym().cuModuleLoadDataEx(&cuModule_, c.image->ptx, 2, opts,
                                                         values),
                        "cuModuleLoadDataEx", where_);
      log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
      if (!s.isOk() && !log.empty())
        s = error(s.code(), s.message() + "; JIT log: " + log);
    }
    if (s.isOk()) {
      code_ = what;
      break;
    }
    cuModule_ = nullptr;
    failures += (failures.empty() ? "" : "; ") + what + ": " + s.message();
  }
  if (!cuModule_)
    return error(NNCC_ERROR_UNAVAILABLE,
                 format("%s: no GPU image of the module loads (%s)", where_.c_str(),
                        failures.c_str()));

  functions_.resize(static_cast<size_t>(abi.num_kernels));
  for (int32_t k = 0; k < abi.num_kernels; ++k) {
    const nncc_kernel &kernel = abi.kernels[k];
    for (int32_t l = 0; l < kernel.num_gpu_launches; ++l) {
      const nncc_gpu_launch &g = kernel.gpu_launches[l];
      std::string w = format("%s: kernel '%s' launch %d ('%s' in the %s)", where_.c_str(),
                             kernel.name, l, g.function, code_.c_str());
      CUfunction f = nullptr;
      NNCC_CU_CALL(driver_, w, cuModuleGetFunction, &f, cuModule_, g.function);
      // Static plus dynamic shared memory over 48 KiB needs the opt-in, and
      // the static size is the compiled image's: opt in for any dynamic use.
      if (g.shared_bytes > 0)
        NNCC_CU_CALL(driver_, w, cuFuncSetAttribute, f,
                     CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                     static_cast<int>(g.shared_bytes));
      functions_[k].push_back(f);
    }
  }
  return Status::ok();
}

CudaModule::~CudaModule() {
  // Errors are ignored: at process exit the driver may be gone already.
  CudaContextGuard ctx;
  if (!driver_.makeCurrent(index_, &ctx).isOk())
    return;
  if (weights_)
    driver_.sym().cuMemFree(weights_);
  if (cuModule_)
    driver_.sym().cuModuleUnload(cuModule_);
}

} // namespace nncc::rt
