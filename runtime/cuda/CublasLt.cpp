//===- CublasLt.cpp -------------------------------------------------------===//
#include "CublasLt.h"

#include "../SharedLibrary.h"

#include <cstdlib>
#include <dlfcn.h>
#include <vector>

namespace nncc::rt {

namespace {

std::vector<std::string> candidates() {
  std::vector<std::string> out = pathsFromEnv("NNCC_CUBLASLT_LIBRARY");
  if (!out.empty())
    return out;
  const char *home = std::getenv("CUDA_HOME");
  std::string toolkit = std::string(home && *home ? home : "/usr/local/cuda") + "/lib64/";
  return {"libcublasLt.so.13", "libcublasLt.so", toolkit + "libcublasLt.so.13"};
}

/// Fills `s` from the library `h`, noting each symbol it lacks.
void resolve(void *h, CublasLtSymbols *s, std::string *missing) {
#define NNCC_LT(name)                                                                              \
  s->name = reinterpret_cast<decltype(s->name)>(dlsym(h, #name));                                  \
  if (!s->name)                                                                                    \
    noteMissing(missing, #name);
#include "CublasLtSymbols.h"
#undef NNCC_LT
}

} // namespace

Status CublasLt::check(cublasStatus_t status, const char *call, const std::string &where) const {
  if (status == CUBLAS_STATUS_SUCCESS)
    return Status::ok();
  const char *name = sym_.cublasLtGetStatusName ? sym_.cublasLtGetStatusName(status) : nullptr;
  const char *text = sym_.cublasLtGetStatusString ? sym_.cublasLtGetStatusString(status) : nullptr;
  std::string msg = (where.empty() ? "" : where + ": ") + call + " failed: " +
                    (name ? name : "cuBLAS status " + std::to_string(status));
  if (text)
    msg += std::string(" (") + text + ")";
  return error(status == CUBLAS_STATUS_ALLOC_FAILED ? NNCC_ERROR_OUT_OF_MEMORY
               : status == CUBLAS_STATUS_NOT_SUPPORTED ? NNCC_ERROR_UNSUPPORTED
                                                      : NNCC_ERROR_INTERNAL,
               msg);
}

Status CublasLt::load(std::unique_ptr<CublasLt> *out) {
  std::string tried;
  auto l = std::unique_ptr<CublasLt>(new CublasLt());
  l->library_ = loadFirstWithSymbols(candidates(), resolve, &l->sym_, &tried);
  if (l->library_.empty())
    return error(NNCC_ERROR_UNAVAILABLE, "no cuBLASLt found (tried " + tried +
                                             "); GEMM steps on a GPU need it: install the CUDA 13 cuBLAS "
                                             "libraries or set NNCC_CUBLASLT_LIBRARY");
  *out = std::move(l);
  return Status::ok();
}

Status CublasLt::get(const CublasLt **out) {
  static LazyLibrary<CublasLt> lt(&CublasLt::load);
  return lt.get(out);
}

} // namespace nncc::rt
