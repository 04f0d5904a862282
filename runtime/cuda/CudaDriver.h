//===- CudaDriver.h - the CUDA driver API, loaded at run time -------------===//
//
// The runtime never links libcuda: the same libnncc_runtime.so runs on a
// machine without a GPU, and only opening a CUDA session (or asking for
// devices) reports what is missing. The driver is loaded once per process,
// on first use, and never unloaded. NNCC_CUDA_DRIVER (a path or soname)
// replaces "libcuda.so.1", e.g. to test against a fake driver.
//
// Every call goes through CudaDriver::check, which turns a CUresult into a
// Status naming the device, the call and the driver's error name and text.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_CUDA_CUDADRIVER_H
#define NNCC_RUNTIME_CUDA_CUDADRIVER_H

#include "../Status.h"

#include <cuda.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace nncc::rt {

struct CudaSymbols {
#define NNCC_CU(name) decltype(&::name) name = nullptr;
#include "CudaSymbols.h"
#undef NNCC_CU
};

class CudaDriver;

/// Pops the context CudaDriver::makeCurrent pushed when it goes out of
/// scope, so the calling thread's own current context (say, the CUDA
/// runtime's, on another device) is back as it was.
class CudaContextGuard {
public:
  CudaContextGuard() = default;
  CudaContextGuard(const CudaContextGuard &) = delete;
  CudaContextGuard &operator=(const CudaContextGuard &) = delete;
  ~CudaContextGuard();

private:
  friend class CudaDriver;
  const CudaDriver *driver_ = nullptr;
};

class CudaDriver {
public:
  /// The process's driver, loaded and initialized (cuInit) on the first
  /// call. Without one, the same UNAVAILABLE error on every call: "no CUDA
  /// driver (libcuda.so.1) found: ..." or "no GPU: ...".
  static Status get(const CudaDriver **out);

  const CudaSymbols &sym() const { return sym_; }
  /// The library that was loaded ("libcuda.so.1").
  const std::string &library() const { return library_; }
  /// cuDriverGetVersion: 13000 for CUDA 13.0.
  int version() const { return version_; }
  int deviceCount() const { return deviceCount_; }

  /// Makes cuda:index's primary context current on the calling thread
  /// (retained once per process, on first use) until `guard` goes out of
  /// scope (cuCtxPushCurrent, then cuCtxPopCurrent); a clear error for an
  /// index the machine does not have.
  Status makeCurrent(int index, CudaContextGuard *guard) const;
  /// The CUdevice of cuda:index (index checked by makeCurrent first).
  CUdevice device(int index) const { return devices_[index]; }

  /// OK for CUDA_SUCCESS; else "<where>: <call> failed: CUDA_ERROR_X (text)".
  Status check(CUresult result, const char *call, const std::string &where) const;

private:
  /// Loads and initializes the driver (cuInit) and lists its devices.
  static Status load(std::unique_ptr<CudaDriver> *out);

  CudaSymbols sym_;
  std::string library_;
  int version_ = 0;
  int deviceCount_ = 0;
  std::vector<CUdevice> devices_;
  mutable std::mutex mutex_;
  mutable std::vector<CUcontext> contexts_; // primary contexts, retained on first use
};

/// Calls driver.sym().fn(args...) and returns its error from the enclosing
/// function, naming `where` (the device) and the call.
#define NNCC_CU_CALL(driver, where, fn, ...)                                                       \
  NNCC_RETURN_IF_ERROR((driver).check((driver).sym().fn(__VA_ARGS__), #fn, where))

/// "13.0" from 13000.
std::string cudaVersionString(int version);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CUDA_CUDADRIVER_H
