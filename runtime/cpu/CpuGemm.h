//===- CpuGemm.h - GEMM steps on the host BLAS ----------------------------===//
//
// A BLAS offers f32 sgemm only. Plain f32 GEMMs (ABI v1) go straight to it
// (sgemv for one-row products). The others take a detour through f32 scratch
// that the session sizes once: f16/bf16 operands are widened exactly, the
// sgemm runs in f32, then one pass adds the bias, applies the activation and
// rounds C to its dtype (nearest even), as NNCC_STEP_GEMM specifies.
// allow_tf32 means nothing on a CPU and is ignored.
//
// f32 GEMMs whose B or A is a module weight run on the runtime's own kernels
// instead (Sgemm.h) when the CPU has AVX2+FMA or AVX-512: the weight is
// packed once when the session is created, and the bias and activation are
// applied in registers before C is stored (docs/performance.md, "CPU GEMM").
// A weight A's product runs as it is (B packed per call) or, over small
// images, transposed (sgemmTransposedIsCheaper).
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_CPU_CPUGEMM_H
#define NNCC_RUNTIME_CPU_CPUGEMM_H

#include "../GemmParams.h"
#include "../Module.h"
#include "../StepArgs.h"
#include "Blas.h"
#include "Sgemm.h"
#include "ThreadPool.h"

#include <unordered_map>
#include <vector>

namespace nncc::rt {

class CpuGemm {
public:
  /// Sizes the f32 scratch for the largest GEMM step of `plan` that needs
  /// it, so running allocates nothing, and packs the weight operand of every
  /// step that runs on the runtime's own kernel; `args` are the steps'
  /// resolved arguments (weights resolved), per entry. Returns the bytes
  /// allocated.
  int64_t reserve(const nncc_plan &plan, std::vector<StepArgs<void *>> &args, int threads);

  /// Runs one GEMM step; args are its resolved buffer pointers. The BLAS
  /// uses pool.threads() threads of its own; the epilogue pass runs on the
  /// pool.
  Status run(const nncc_step &step, void *const *args, ThreadPool &pool);

private:
  /// A step's weight operand, packed once: one copy per batch (one when it
  /// broadcasts).
  struct PackedWeight {
    AlignedFloats data;
    size_t perBatch;
  };
  /// How a step runs on the own kernel (reserve() picks it), and its
  /// weight packed for that form.
  enum class OwnForm {
    PackedB,     // sgemmPacked: op(B) packed
    PackedA,     // sgemmPackedA: op(A) packed
    TransposedA, // sgemmTransposed: op(A)^T packed as the kernel's B
  };
  struct OwnStep {
    OwnForm form;
    PackedWeight weight;
  };
  void runOwn(const GemmParams &g, const PackedWeight &b, void *const *args, ThreadPool &pool);
  /// A weight A's product as it is (sgemmPackedA): `a` is op(A) packed.
  void runPackedA(const GemmParams &g, const PackedWeight &a, void *const *args, ThreadPool &pool);
  /// A weight A's product transposed (sgemmTransposed): `at` is op(A)^T
  /// packed as the kernel's B.
  void runTransposed(const GemmParams &g, const PackedWeight &at, void *const *args, ThreadPool &pool);
  /// Bias (f32, or null), activation and, with out16, the rounding of the
  /// f32 product `c` into C's f16/bf16 (else in place).
  void runEpilogue(const GemmParams &g, float *c, const float *bias, uint16_t *out16,
                   ThreadPool &pool);

  std::vector<float> a_, b_, c_, bias_;
  const SgemmKernel *kernel_ = nullptr;
  /// The steps that run on the own kernel; the others run on the BLAS.
  std::unordered_map<const nncc_step *, OwnStep> own_;
  AlignedFloats scratch_; // packed A, sgemmTasks(threads) pieces
  AlignedFloats product_; // the stacked C^T of the transposed steps
};

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CPU_CPUGEMM_H
