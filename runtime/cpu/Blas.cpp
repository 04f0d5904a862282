//===- Blas.cpp -----------------------------------------------------------===//
#include "Blas.h"

#include "../SharedLibrary.h"

#include <dlfcn.h>
#include <mutex>
#include <vector>

namespace nncc::rt {

namespace {

const char *const kDefaultLibraries[] = {"libopenblas.so.0", "libblas.so.3", "libcblas.so.3"};

std::vector<std::string> candidates() {
  std::vector<std::string> out = pathsFromEnv("NNCC_BLAS_LIBRARY");
  if (out.empty())
    out.assign(std::begin(kDefaultLibraries), std::end(kDefaultLibraries));
  return out;
}

/// Tries one library; on failure says why in `why`.
bool tryLoad(const std::string &lib, BlasSymbols *syms, std::string *why) {
  void *h = openLibrary(lib, why);
  if (!h)
    return false;
  BlasSymbols s;
  std::string missing;
#define NNCC_BLAS_REQUIRED(name, ret, params)                                                      \
  s.name = reinterpret_cast<ret(*) params>(dlsym(h, #name));                                       \
  if (!s.name)                                                                                     \
    missing += std::string(missing.empty() ? "" : ", ") + #name;
#define NNCC_BLAS_OPTIONAL(name, ret, params)                                                      \
  s.name = reinterpret_cast<ret(*) params>(dlsym(h, #name));
#include "BlasSymbols.h"
#undef NNCC_BLAS_REQUIRED
#undef NNCC_BLAS_OPTIONAL
  if (!missing.empty()) {
    *why = "missing " + missing;
    dlclose(h);
    return false;
  }
  *syms = s; // the handle stays open for the life of the process
  return true;
}

} // namespace

Status Blas::get(const Blas **out) {
  static std::once_flag once;
  static Blas *blas = nullptr;
  static Status *failure = nullptr;
  std::call_once(once, [] {
    std::string tried;
    auto *b = new Blas();
    b->library_ = loadFirst(
        candidates(), [&](const std::string &lib, std::string *why) { return tryLoad(lib, &b->syms_, why); },
        &tried);
    if (!b->library_.empty()) {
      blas = b;
      return;
    }
    delete b;
    failure = new Status(NNCC_ERROR_UNAVAILABLE,
                         "no CPU BLAS found (tried " + tried +
                             "); install libopenblas0 or set NNCC_BLAS_LIBRARY");
  });
  if (!blas)
    return *failure;
  *out = blas;
  return Status::ok();
}

void Blas::setThreads(int threads) const {
  if (!syms_.openblas_set_num_threads || threads_.exchange(threads) == threads)
    return;
  syms_.openblas_set_num_threads(threads);
}

} // namespace nncc::rt
