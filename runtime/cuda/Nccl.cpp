//===- Nccl.cpp -----------------------------------------------------------===//
#include "Nccl.h"

#include "../SharedLibrary.h"

#include <cstdlib>
#include <dlfcn.h>
#include <vector>

namespace nncc::rt {

namespace {

std::vector<std::string> candidates() {
  std::vector<std::string> out = pathsFromEnv("NNCC_NCCL_LIBRARY");
  if (!out.empty())
    return out;
  const char *home = std::getenv("CUDA_HOME");
  std::string toolkit = std::string(home && *home ? home : "/usr/local/cuda") + "/lib64/";
  return {"libnccl.so.2", "libnccl.so", toolkit + "libnccl.so.2"};
}

void resolve(void *h, NcclSymbols *s, std::string *missing) {
#define NNCC_NCCL(name)                                                                            \
  s->name = reinterpret_cast<decltype(s->name)>(dlsym(h, #name));                                  \
  if (!s->name)                                                                                    \
    noteMissing(missing, #name);
#include "NcclSymbols.h"
#undef NNCC_NCCL
  s->ncclCommSplit = reinterpret_cast<decltype(s->ncclCommSplit)>(dlsym(h, "ncclCommSplit"));
}

const char *resultName(ncclResult_t r) {
  switch (r) {
  case ncclSuccess: return "ncclSuccess";
  case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
  case ncclSystemError: return "ncclSystemError";
  case ncclInternalError: return "ncclInternalError";
  case ncclInvalidArgument: return "ncclInvalidArgument";
  case ncclInvalidUsage: return "ncclInvalidUsage";
  case ncclRemoteError: return "ncclRemoteError";
  case ncclInProgress: return "ncclInProgress";
  default: return nullptr;
  }
}

} // namespace

Status Nccl::check(ncclResult_t result, const char *call, const std::string &where) const {
  if (result == ncclSuccess)
    return Status::ok();
  const char *text = sym_.ncclGetErrorString ? sym_.ncclGetErrorString(result) : nullptr;
  const char *name = resultName(result);
  std::string msg = (where.empty() ? "" : where + ": ") + call + " failed: " +
                    (text ? text : "NCCL error") + " (" +
                    (name ? name : "ncclResult_t " + std::to_string(result)) + ")";
  return error(result == ncclInvalidArgument || result == ncclInvalidUsage ? NNCC_ERROR_INVALID_ARGUMENT
                                                                           : NNCC_ERROR_INTERNAL,
               msg);
}

Status Nccl::load(std::unique_ptr<Nccl> *out) {
  std::string tried;
  auto n = std::unique_ptr<Nccl>(new Nccl());
  n->library_ = loadFirstWithSymbols(candidates(), resolve, &n->sym_, &tried);
  if (n->library_.empty())
    return error(NNCC_ERROR_UNAVAILABLE,
                 "no NCCL found (tried " + tried +
                     "); collective steps on a GPU need it: install NCCL 2 (libnccl2, or the "
                     "nvidia-nccl wheel) or set NNCC_NCCL_LIBRARY");
  NNCC_RETURN_IF_ERROR(n->check(n->sym_.ncclGetVersion(&n->version_), "ncclGetVersion", n->library_));
  *out = std::move(n);
  return Status::ok();
}

Status Nccl::get(const Nccl **out) {
  static LazyLibrary<Nccl> nccl(&Nccl::load);
  return nccl.get(out);
}

} // namespace nncc::rt
