//===- CublasLt.cpp -------------------------------------------------------===//
#include "CublasLt.h"

#include "../SharedLibrary.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
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

bool tryLoad(const std::string &lib, CublasLtSymbols *s, std::string *why) {
  void *h = openLibrary(lib, why);
  if (!h)
    return false;
  std::string missing;
#define NNCC_LT(name)                                                                              \
  s->name = reinterpret_cast<decltype(s->name)>(dlsym(h, #name));                                  \
  if (!s->name)                                                                                    \
    missing += std::string(missing.empty() ? "" : ", ") + #name;
#include "CublasLtSymbols.h"
#undef NNCC_LT
  if (!missing.empty()) {
    *why = "missing " + missing;
    dlclose(h);
    return false;
  }
  return true;
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

Status CublasLt::get(const CublasLt **out) {
  static std::once_flag once;
  static CublasLt *lt = nullptr;
  static Status *failure = nullptr;
  std::call_once(once, [] {
    std::string tried;
    auto *l = new CublasLt();
    l->library_ = loadFirst(
        candidates(), [&](const std::string &lib, std::string *why) { return tryLoad(lib, &l->sym_, why); },
        &tried);
    if (!l->library_.empty()) {
      lt = l;
      return;
    }
    delete l;
    failure = new Status(NNCC_ERROR_UNAVAILABLE,
                         "no cuBLASLt found (tried " + tried +
                             "); GEMM steps on a GPU need it: install the CUDA 13 cuBLAS "
                             "libraries or set NNCC_CUBLASLT_LIBRARY");
  });
  if (!lt)
    return *failure;
  *out = lt;
  return Status::ok();
}

} // namespace nncc::rt
