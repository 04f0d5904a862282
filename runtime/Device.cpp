//===- Device.cpp ---------------------------------------------------------===//
#include "Device.h"

#include "cpu/CpuDevice.h"
#if NNCC_RUNTIME_HAVE_CUDA
#include "cuda/CudaDevice.h"
#endif

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace nncc::rt {

Status failedChecks(const nncc_entry &entry, const int32_t *flags) {
  std::string failed;
  for (int32_t c = 0; c < entry.num_checks; ++c)
    if (flags[c] != 0)
      failed += (failed.empty() ? "" : "; ") + std::string(entry.checks[c].message);
  if (failed.empty())
    return Status::ok();
  return error(NNCC_ERROR_INVALID_INPUT, format("entry '%s': %s", entry.name, failed.c_str()));
}

Status parseDevice(const char *text, DeviceSpec *out) {
  if (!text)
    return error(NNCC_ERROR_INVALID_ARGUMENT, "device must not be NULL");
  std::string s = text;
  if (s == "cpu" || s == "cpu:0") {
    *out = DeviceSpec{DeviceSpec::Cpu, 0};
    return Status::ok();
  }
  if (s == "cuda") {
    *out = DeviceSpec{DeviceSpec::Cuda, 0};
    return Status::ok();
  }
  if (s.compare(0, 5, "cuda:") == 0 && s.size() > 5 && s.size() <= 9) {
    char *end = nullptr;
    errno = 0;
    long n = std::strtol(s.c_str() + 5, &end, 10);
    if (errno == 0 && *end == '\0' && n >= 0 && s[5] >= '0' && s[5] <= '9') {
      *out = DeviceSpec{DeviceSpec::Cuda, static_cast<int>(n)};
      return Status::ok();
    }
  }
  return error(NNCC_ERROR_INVALID_ARGUMENT,
               "unknown device '" + s + "' (expected 'cpu' or 'cuda:N')");
}

int deviceCount(DeviceSpec::Kind kind) {
  if (kind == DeviceSpec::Cpu)
    return 1;
#if NNCC_RUNTIME_HAVE_CUDA
  return cudaDeviceCount();
#else
  return 0;
#endif
}

Status createDeviceSession(const Module &module, const DeviceSpec &device,
                           const SessionConfig &config, std::unique_ptr<DeviceSession> *out) {
  switch (device.kind) {
  case DeviceSpec::Cpu:
    return createCpuSession(module, config, out);
  case DeviceSpec::Cuda:
#if NNCC_RUNTIME_HAVE_CUDA
    return createCudaSession(module, device.index, config, out);
#else
    return error(NNCC_ERROR_UNAVAILABLE,
                 "CUDA support is not available in this runtime build (it was built without "
                 "the CUDA headers; device " + device.str() + ")");
#endif
  }
  return error(NNCC_ERROR_INTERNAL, "unknown device kind");
}

} // namespace nncc::rt
