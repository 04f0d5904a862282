//===- CudaModule.h - a module's code and weights on one GPU --------------===//
//
// Made once per (module, device) by the first session there and kept in the
// Module (Module::deviceState) until it unloads, so every session on the
// device shares one upload of the weights and one loaded CUmodule.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_CUDA_CUDAMODULE_H
#define NNCC_RUNTIME_CUDA_CUDAMODULE_H

#include "../Module.h"
#include "CudaDriver.h"

namespace nncc::rt {

class CudaModule final : public ModuleDeviceState {
public:
  /// Loads the best GPU image for cuda:index (GpuImage.h), resolves every
  /// launch's function and uploads the weight blob. The device's context
  /// must be current.
  static Status create(const Module &module, const CudaDriver &driver, int index,
                       std::unique_ptr<ModuleDeviceState> *out);
  ~CudaModule() override;

  /// Launch `launch` of kernel `kernel`.
  CUfunction function(int32_t kernel, int32_t launch) const { return functions_[kernel][launch]; }
  /// Device copy of the weight blob (0 when the module has none).
  CUdeviceptr weights() const { return weights_; }
  /// "sm_90 cubin" or "sm_80 PTX (JIT)": what was loaded, for messages.
  const std::string &codeDescription() const { return code_; }

private:
  CudaModule(const CudaDriver &driver, int index) : driver_(driver), index_(index) {}
  Status loadCode(const Module &module);

  const CudaDriver &driver_;
  int index_;
  std::string where_;
  CUmodule cuModule_ = nullptr;
  std::string code_;
  std::vector<std::vector<CUfunction>> functions_;
  CUdeviceptr weights_ = 0;
};

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CUDA_CUDAMODULE_H
