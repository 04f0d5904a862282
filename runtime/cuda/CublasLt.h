//===- CublasLt.h - cuBLASLt, loaded at run time --------------------------===//
//
// GEMM steps on a GPU call cuBLASLt (its bias and activation epilogues fuse
// what the plan asks for). Loaded once per process, on the first session
// that has a GEMM step: NNCC_CUBLASLT_LIBRARY (a ':'-separated list) replaces
// the search list libcublasLt.so.13, libcublasLt.so, then the toolkit's
// $CUDA_HOME/lib64 (default /usr/local/cuda).
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_CUDA_CUBLASLT_H
#define NNCC_RUNTIME_CUDA_CUBLASLT_H

#include "../Status.h"

#include <cublasLt.h>

#include <memory>

#include <string>

namespace nncc::rt {

struct CublasLtSymbols {
#define NNCC_LT(name) decltype(&::name) name = nullptr;
#include "CublasLtSymbols.h"
#undef NNCC_LT
};

class CublasLt {
public:
  /// The process's cuBLASLt; an UNAVAILABLE error listing what was tried
  /// (the same on every call) when none loads.
  static Status get(const CublasLt **out);

  const CublasLtSymbols &sym() const { return sym_; }
  const std::string &library() const { return library_; }

  /// OK for CUBLAS_STATUS_SUCCESS; else "<where>: <call> failed: NAME (text)".
  Status check(cublasStatus_t status, const char *call, const std::string &where) const;

private:
  /// Finds the first candidate library with every symbol.
  static Status load(std::unique_ptr<CublasLt> *out);

  CublasLtSymbols sym_;
  std::string library_;
};

#define NNCC_LT_CALL(lt, where, fn, ...)                                                           \
  NNCC_RETURN_IF_ERROR((lt).check((lt).sym().fn(__VA_ARGS__), #fn, where))

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CUDA_CUBLASLT_H
