//===- SharedLibrary.h - libraries the runtime loads itself ---------------===//
//
// The runtime links no BLAS or CUDA library: it dlopen()s them, trying a list
// of candidates that an environment variable may replace. One place for the
// search and its error text, so every library reports failures the same way.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_SHAREDLIBRARY_H
#define NNCC_RUNTIME_SHAREDLIBRARY_H

#include <functional>
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

} // namespace nncc::rt

#endif // NNCC_RUNTIME_SHAREDLIBRARY_H
