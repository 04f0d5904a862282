//===- SharedLibrary.h - libraries the runtime loads itself ---------------===//
//
// The runtime links no BLAS or CUDA library: it dlopen()s them, trying a list
// of candidates that an environment variable may replace. One place for the
// search, the symbol checks and their error text, and the load-once-per-process
// (LazyLibrary), so every library reports failures the same way.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_SHAREDLIBRARY_H
#define NNCC_RUNTIME_SHAREDLIBRARY_H

#include "Status.h"

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace nncc::rt {

/// The colon-separated paths in environment variable `var`; empty when it is
/// unset or empty.
std::vector<std::string> pathsFromEnv(const char *var);

/// dlopen(path, RTLD_NOW | RTLD_LOCAL); on failure null, and `why` is "not
/// found" or the loader's message.
void *openLibrary(const std::string &path, std::string *why);

/// Tries `paths` in order until `load(path, &why)` succeeds and returns that
/// path; when none does, returns "" and `tried` lists each path with its why.
std::string loadFirst(const std::vector<std::string> &paths,
                      const std::function<bool(const std::string &, std::string *)> &load,
                      std::string *tried);

/// Appends `name`, a symbol a library lacks, to the ", "-separated `missing`.
void noteMissing(std::string *missing, const char *name);

/// openLibrary(path), then `resolve(handle, &missing)`, which fills a symbol
/// table and notes each required symbol it cannot find. When one is missing
/// the library is closed again, `why` says "missing a, b" and the result is
/// false. The handle of a library that loads stays open for the process.
bool openWithSymbols(const std::string &path,
                     const std::function<void(void *, std::string *)> &resolve, std::string *why);

/// loadFirst with openWithSymbols: the first of `paths` whose library has
/// every required symbol, its table resolved into `symbols` by `resolve`.
template <typename Symbols>
std::string loadFirstWithSymbols(const std::vector<std::string> &paths,
                                 void (*resolve)(void *, Symbols *, std::string *), Symbols *symbols,
                                 std::string *tried) {
  return loadFirst(
      paths,
      [&](const std::string &path, std::string *why) {
        Symbols s;
        if (!openWithSymbols(path, [&](void *h, std::string *missing) { resolve(h, &s, missing); }, why))
          return false;
        *symbols = s;
        return true;
      },
      tried);
}

/// A library wrapper `T` (its symbol table, path, state) built on first use,
/// once per process, and never freed. `load` builds it or returns why it
/// cannot; that error is what every later get() returns too.
template <typename T> class LazyLibrary {
public:
  using Load = Status (*)(std::unique_ptr<T> *out);
  explicit LazyLibrary(Load load) : load_(load) {}

  Status get(const T **out) {
    std::call_once(once_, [this] {
      std::unique_ptr<T> loaded;
      Status s = load_(&loaded);
      if (s.isOk())
        loaded_ = loaded.release();
      else
        failure_ = new Status(std::move(s)); // outlives static destructors
    });
    if (!loaded_)
      return *failure_;
    *out = loaded_;
    return Status::ok();
  }

private:
  Load load_;
  std::once_flag once_;
  const T *loaded_ = nullptr;
  const Status *failure_ = nullptr;
};

} // namespace nncc::rt

#endif // NNCC_RUNTIME_SHAREDLIBRARY_H
