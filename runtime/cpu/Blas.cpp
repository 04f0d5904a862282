//===- Blas.cpp -----------------------------------------------------------===//
#include "Blas.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <vector>

namespace nncc::rt {

namespace {

const char *const kDefaultLibraries[] = {"libopenblas.so.0", "libblas.so.3", "libcblas.so.3"};

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  const char *env = std::getenv("NNCC_BLAS_LIBRARY");
  if (env && *env) {
    std::string list = env;
    size_t start = 0;
    while (start <= list.size()) {
      size_t end = list.find(':', start);
      if (end == std::string::npos)
        end = list.size();
      if (end > start)
        out.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  } else {
    out.assign(std::begin(kDefaultLibraries), std::end(kDefaultLibraries));
  }
  return out;
}

/// Tries one library; on failure says why in `why`.
bool tryLoad(const std::string &lib, BlasSymbols *syms, std::string *why) {
  dlerror();
  void *h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    std::string msg = e ? e : "cannot be loaded";
    *why = msg.find("No such file") != std::string::npos ? "not found" : msg;
    return false;
  }
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
    std::vector<std::string> libs = candidates();
    std::string tried;
    auto *b = new Blas();
    for (const std::string &lib : libs) {
      std::string why;
      if (tryLoad(lib, &b->syms_, &why)) {
        b->library_ = lib;
        blas = b;
        return;
      }
      tried += (tried.empty() ? "" : ", ") + lib + " (" + why + ")";
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
