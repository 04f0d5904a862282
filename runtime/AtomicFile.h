//===- AtomicFile.h - a file replaced only when complete ------------------===//
#ifndef NNCC_RUNTIME_ATOMICFILE_H
#define NNCC_RUNTIME_ATOMICFILE_H

#include "Status.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

namespace nncc::rt {

/// Writes `bytes` to a temporary file beside `path` and renames it over
/// `path`: a full disk or a crash leaves the previous file intact. `what`
/// names the file in the error ("the checkpoint").
inline Status writeFileAtomically(const char *path, const std::vector<uint8_t> &bytes, const char *what) {
  std::string tmp = std::string(path) + ".tmp-" + std::to_string(::getpid());
  std::FILE *f = std::fopen(tmp.c_str(), "wb");
  bool ok = f && std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = f && std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path) != 0) {
    std::remove(tmp.c_str());
    return error(NNCC_ERROR_INVALID_ARGUMENT, format("%s: cannot write %s", path, what));
  }
  return Status::ok();
}

} // namespace nncc::rt

#endif // NNCC_RUNTIME_ATOMICFILE_H
