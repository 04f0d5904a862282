//===- Blas.h - the CPU BLAS, loaded at run time --------------------------===//
//
// The runtime never links a BLAS: a module and the runtime copied to a machine
// without one still load, and only running a GEMM step reports what to
// install. The library is found once per process on first use and never
// unloaded. NNCC_BLAS_LIBRARY (a ':'-separated list of sonames or paths)
// replaces the default search list, e.g. to pick MKL.
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

  /// Sets the BLAS's own thread count when it has one (OpenBLAS); the setting
  /// is process-wide, so it is only changed when it differs.
  void setThreads(int threads) const;

private:
  /// Finds the first candidate library with every required symbol.
  static Status load(std::unique_ptr<Blas> *out);

  BlasSymbols syms_;
  std::string library_;
  mutable std::atomic<int> threads_{0};
};

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CPU_BLAS_H
