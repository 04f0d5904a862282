//===- Nccl.h - NCCL, loaded at run time ----------------------------------===//
//
// Collective steps on GPUs call NCCL. Like the driver and cuBLASLt it is
// loaded once per process, on the first session (or communicator) that needs
// it, so the runtime links no NCCL and loads without one:
// NNCC_NCCL_LIBRARY (a ':'-separated list) replaces the search list
// libnccl.so.2, libnccl.so, then the toolkit's $CUDA_HOME/lib64 (default
// /usr/local/cuda).
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_CUDA_NCCL_H
#define NNCC_RUNTIME_CUDA_NCCL_H

#include "../Status.h"

#include <nccl.h>

#include <memory>
#include <string>

namespace nncc::rt {

struct NcclSymbols {
#define NNCC_NCCL(name) decltype(&::name) name = nullptr;
#include "NcclSymbols.h"
#undef NNCC_NCCL
  /// Optional (NCCL 2.18+): null in an older NCCL, which then cannot split
  /// a one-process world into parallel groups.
  decltype(&::ncclCommSplit) ncclCommSplit = nullptr;
};

class Nccl {
public:
  /// The process's NCCL; an UNAVAILABLE error listing what was tried (the
  /// same on every call) when none loads.
  static Status get(const Nccl **out);

  const NcclSymbols &sym() const { return sym_; }
  const std::string &library() const { return library_; }
  /// ncclGetVersion: 22804 for 2.28.4.
  int version() const { return version_; }

  /// OK for ncclSuccess; else "<where>: <call> failed: <NCCL's text> (ncclX)".
  Status check(ncclResult_t result, const char *call, const std::string &where) const;

private:
  static Status load(std::unique_ptr<Nccl> *out);

  NcclSymbols sym_;
  std::string library_;
  int version_ = 0;
};

#define NNCC_NCCL_CALL(nccl, where, fn, ...)                                                       \
  NNCC_RETURN_IF_ERROR((nccl).check((nccl).sym().fn(__VA_ARGS__), #fn, where))

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CUDA_NCCL_H
