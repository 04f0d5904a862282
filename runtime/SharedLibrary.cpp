//===- SharedLibrary.cpp --------------------------------------------------===//
#include "SharedLibrary.h"

#include <cstdlib>
#include <dlfcn.h>

namespace nncc::rt {

std::vector<std::string> pathsFromEnv(const char *var) {
  std::vector<std::string> out;
  const char *env = std::getenv(var);
  if (!env || !*env)
    return out;
  std::string list = env;
  for (size_t start = 0; start <= list.size();) {
    size_t end = list.find(':', start);
    if (end == std::string::npos)
      end = list.size();
    if (end > start)
      out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void *openLibrary(const std::string &path, std::string *why) {
  dlerror();
  void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    std::string msg = e ? e : "cannot be loaded";
    *why = msg.find("No such file") != std::string::npos ? "not found" : msg;
  }
  return h;
}

std::string loadFirst(const std::vector<std::string> &paths,
                      const std::function<bool(const std::string &, std::string *)> &load,
                      std::string *tried) {
  for (const std::string &path : paths) {
    std::string why;
    if (load(path, &why))
      return path;
    *tried += (tried->empty() ? "" : ", ") + path + " (" + why + ")";
  }
  return "";
}

void noteMissing(std::string *missing, const char *name) {
  *missing += std::string(missing->empty() ? "" : ", ") + name;
}

bool openWithSymbols(const std::string &path,
                     const std::function<void(void *, std::string *)> &resolve, std::string *why) {
  void *h = openLibrary(path, why);
  if (!h)
    return false;
  std::string missing;
  resolve(h, &missing);
  if (missing.empty())
    return true;
  *why = "missing " + missing;
  dlclose(h);
  return false;
}

} // namespace nncc::rt
