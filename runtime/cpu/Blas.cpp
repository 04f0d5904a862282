//===- Blas.cpp -----------------------------------------------------------===//
#include "Blas.h"

#include "../SharedLibrary.h"

#include <dlfcn.h>
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

/// Fills `s` from the library `h`, noting each required symbol it lacks.
void resolve(void *h, BlasSymbols *s, std::string *missing) {
#define NNCC_BLAS_REQUIRED(name, ret, params)                                                      \
  s->name = reinterpret_cast<ret(*) params>(dlsym(h, #name));                                      \
  if (!s->name)                                                                                    \
    noteMissing(missing, #name);
#define NNCC_BLAS_OPTIONAL(name, ret, params)                                                      \
  s->name = reinterpret_cast<ret(*) params>(dlsym(h, #name));
#include "BlasSymbols.h"
#undef NNCC_BLAS_REQUIRED
#undef NNCC_BLAS_OPTIONAL
}

} // namespace

Status Blas::load(std::unique_ptr<Blas> *out) {
  std::string tried;
  auto b = std::unique_ptr<Blas>(new Blas());
  b->library_ = loadFirstWithSymbols(candidates(), resolve, &b->syms_, &tried);
  if (b->library_.empty())
    return error(NNCC_ERROR_UNAVAILABLE,
                 "no CPU BLAS found (tried " + tried + "); install libopenblas0 or set NNCC_BLAS_LIBRARY");
  *out = std::move(b);
  return Status::ok();
}

Status Blas::get(const Blas **out) {
  static LazyLibrary<Blas> blas(&Blas::load);
  return blas.get(out);
}

void Blas::setThreads(int threads) const {
  if (!syms_.openblas_set_num_threads || threads_.exchange(threads) == threads)
    return;
  syms_.openblas_set_num_threads(threads);
}

} // namespace nncc::rt
