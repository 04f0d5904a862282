//===- Blas.h - the CPU BLAS, loaded at run time --------------------------===//
//
// The runtime never links a BLAS: a module and the runtime copied to a machine
// without one still load, and only running a GEMM step reports what to
// install. The library is found once per process on first use and never
// unloaded. NNCC_BLAS_LIBRARY (a ':'-separated list of sonames or paths)
// replaces the default search list, e.g. to pick MKL.
//
// OpenBLAS picks its kernels by the CPU's family and model, and a CPU newer
// than the library falls back to its SSE3 kernels: Debian 12's 0.3.21 runs
// "Prescott" on a 5th-generation Xeon (model 0xCF), sgemm 1024^3 at 32 GFLOP/s
// against 151 with its AVX-512 ("SkylakeX") kernels. The runtime asks the
// loaded library which kernels it took and, when they are below the CPU's
// AVX2 or AVX-512 (by CPUID, as onnxruntime's MLAS and the runtime's own
// SGEMM decide) and OPENBLAS_CORETYPE is unset, loads it again naming them.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_CPU_BLAS_H
#define NNCC_RUNTIME_CPU_BLAS_H

#include "../Status.h"

#include <atomic>
#include <memory>
#include <string>

namespace nncc::rt {

struct BlasSymbols {
#define NNCC_BLAS_REQUIRED(name, ret, params) ret(*name) params = nullptr;
#define NNCC_BLAS_OPTIONAL(name, ret, params) ret(*name) params = nullptr;
#include "BlasSymbols.h"
#undef NNCC_BLAS_REQUIRED
#undef NNCC_BLAS_OPTIONAL
};

class Blas {
public:
  /// The process's BLAS, loading it on the first call; an error (the same
  /// on every call) when no candidate library provides every required symbol.
  static Status get(const Blas **out);

  const BlasSymbols &symbols() const { return syms_; }
  /// Library that was loaded ("libopenblas.so.0").
  const std::string &library() const { return library_; }
  /// OpenBLAS's kernel set ("SkylakeX"), with how it was chosen when the
  /// runtime named it; "" for another BLAS.
  const std::string &kernels() const { return kernels_; }

  /// Sets the BLAS's own thread count when it has one (OpenBLAS); the setting
  /// is process-wide, so it is only changed when it differs.
  void setThreads(int threads) const;

private:
  /// Finds the first candidate library with every required symbol.
  static Status load(std::unique_ptr<Blas> *out);

  /// Loads `library_` again with OPENBLAS_CORETYPE naming `core`, when no
  /// one else in the process holds it (else it stays as it is).
  Status reloadWithCore(const char *core, const std::string &detected);

  BlasSymbols syms_;
  std::string library_;
  std::string kernels_;
  mutable std::atomic<int> threads_{0};
};

/// The OpenBLAS core to name instead of `detected` (its own choice) on a CPU
/// with AVX2 and FMA (`avx2`) and AVX-512 F/BW/DQ/VL/CD (`avx512`): "SkylakeX"
/// or "Haswell" when `detected` is an SSE or AVX-only kernel set below them;
/// null when `detected` fits (or is a name this rule does not know).
const char *openblasCoreToName(const std::string &detected, bool avx2, bool avx512);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CPU_BLAS_H
