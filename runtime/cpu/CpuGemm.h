//===- CpuGemm.h - GEMM steps on the host BLAS ----------------------------===//
//
// A BLAS offers f32 sgemm only. Plain f32 GEMMs (ABI v1) go straight to it
// (sgemv for one-row products). The others take a detour through f32 scratch
// that the session sizes once: f16/bf16 operands are widened exactly, the
// sgemm runs in f32, then one pass adds the bias, applies the activation and
// rounds C to its dtype (nearest even), as NNCC_STEP_GEMM specifies.
// allow_tf32 means nothing on a CPU and is ignored.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_CPU_CPUGEMM_H
#define NNCC_RUNTIME_CPU_CPUGEMM_H

#include "../GemmParams.h"
#include "../Module.h"
#include "Blas.h"
#include "ThreadPool.h"

#include <vector>

namespace nncc::rt {

class CpuGemm {
public:
  /// Sizes the f32 scratch for the largest GEMM step of `plan` that needs
  /// it, so running allocates nothing.
  void reserve(const nncc_plan &plan);

  /// Runs one GEMM step; args are its resolved buffer pointers. The BLAS
  /// uses pool.threads() threads of its own; the epilogue pass runs on the
  /// pool.
  Status run(const nncc_step &step, void *const *args, ThreadPool &pool);

private:
  std::vector<float> a_, b_, c_, bias_;
};

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CPU_CPUGEMM_H
