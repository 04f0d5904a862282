//===- Blas.cpp -----------------------------------------------------------===//
#include "Blas.h"

#include "../SharedLibrary.h"
#include "CpuFeatures.h"

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>
#include <strings.h>
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

const char *openblasCoreToName(const std::string &detected, bool avx2, bool avx512) {
  // OpenBLAS's x86-64 kernel sets below AVX2, as gotoblas_corename() names them
  // ("Unknown" when its detection found nothing).
  static const char *const kBelowAvx2[] = {
      "Unknown", "Katmai",  "Coppermine", "Northwood",    "Prescott",  "Banias",
      "Atom",    "Core2",   "Penryn",     "Dunnington",   "Nehalem",   "Athlon",
      "Opteron", "Nano",    "Opteron_SSE3", "Barcelona",  "Bobcat",    "Sandybridge",
      "Bulldozer", "Piledriver", "Steamroller", "Excavator"};
  bool below = std::any_of(std::begin(kBelowAvx2), std::end(kBelowAvx2),
                           [&](const char *name) { return strcasecmp(name, detected.c_str()) == 0; });
  if (!avx2 || !below)
    return nullptr;
  return avx512 ? "SkylakeX" : "Haswell";
}

Status Blas::load(std::unique_ptr<Blas> *out) {
  std::string tried;
  auto b = std::unique_ptr<Blas>(new Blas());
  b->library_ = loadFirstWithSymbols(candidates(), resolve, &b->syms_, &tried);
  if (b->library_.empty())
    return error(NNCC_ERROR_UNAVAILABLE,
                 "no CPU BLAS found (tried " + tried + "); install libopenblas0 or set NNCC_BLAS_LIBRARY");
  if (b->syms_.openblas_get_corename) {
    std::string detected = b->syms_.openblas_get_corename();
    b->kernels_ = detected;
    const char *forced = std::getenv("OPENBLAS_CORETYPE");
    if (forced && *forced)
      b->kernels_ += " (OPENBLAS_CORETYPE)";
    else if (const char *core = openblasCoreToName(
                 detected, missingCpuFeatures("avx2,fma").empty(),
                 missingCpuFeatures("avx512f,avx512bw,avx512dq,avx512vl,avx512cd").empty()))
      NNCC_RETURN_IF_ERROR(b->reloadWithCore(core, detected));
  }
  *out = std::move(b);
  return Status::ok();
}

Status Blas::reloadWithCore(const char *core, const std::string &detected) {
  // openWithSymbols keeps one reference to the library for the process: take a
  // second one to learn its handle, and drop both, so that it is unloaded
  // unless the host program loaded it too.
  void *h = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h)
    return Status::ok();
  dlclose(h);
  dlclose(h);
  if (dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) { // the reference it keeps
    kernels_ = detected + " (OpenBLAS's choice, below this CPU's; loaded before the runtime, so not " +
               core + ")";
    return Status::ok();
  }
  // OpenBLAS reads the variable in its constructor, while dlopen runs; it is
  // unset again at once so that child processes detect for themselves.
  setenv("OPENBLAS_CORETYPE", core, 1);
  std::string why;
  bool loaded = openWithSymbols(
      library_, [&](void *handle, std::string *missing) { resolve(handle, &syms_, missing); }, &why);
  unsetenv("OPENBLAS_CORETYPE");
  if (!loaded)
    return error(NNCC_ERROR_UNAVAILABLE, format("loading %s again with OPENBLAS_CORETYPE=%s: %s",
                                                library_.c_str(), core, why.c_str()));
  kernels_ = std::string(syms_.openblas_get_corename ? syms_.openblas_get_corename() : "?") +
             " (named by the runtime: OpenBLAS chose " + detected + " for this CPU)";
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
