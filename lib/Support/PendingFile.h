#ifndef NNCC_LIB_SUPPORT_PENDINGFILE_H
#define NNCC_LIB_SUPPORT_PENDINGFILE_H

#include "lib/Support/Error.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"

#include <string>

namespace nncc {

/// A file written under a temporary name in its final folder and renamed
/// over its real name only when complete: a full disk, a file-size limit, a
/// failed link or a kill never leaves a truncated file where the last good
/// one was (rename within a folder is atomic). The temporary file is removed
/// when the PendingFile dies uncommitted, and on SIGINT/SIGTERM.
class PendingFile {
public:
  /// Reserves `<path>.tmp-XXXXXX` next to `path`.
  static llvm::Expected<PendingFile> create(llvm::StringRef path) {
    PendingFile file;
    file.path_ = path.str();
    int fd = -1;
    llvm::SmallString<256> temp;
    if (auto ec = llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, temp))
      return fail("cannot write '" + path + "': " + ec.message());
    llvm::sys::fs::closeFile(fd);
    file.temp_ = std::string(temp);
    llvm::sys::RemoveFileOnSignal(file.temp_);
    return file;
  }

  PendingFile(PendingFile &&other) noexcept : path_(std::move(other.path_)), temp_(std::move(other.temp_)) {
    other.temp_.clear();
  }
  PendingFile &operator=(PendingFile &&) = delete;
  ~PendingFile() {
    if (!temp_.empty()) {
      llvm::sys::fs::remove(temp_);
      llvm::sys::DontRemoveFileOnSignal(temp_);
    }
  }

  /// Where to write the contents.
  const std::string &tempPath() const { return temp_; }

  /// Renames the temporary file over the real one.
  llvm::Error commit() {
    if (auto ec = llvm::sys::fs::rename(temp_, path_))
      return fail("cannot write '" + path_ + "': " + ec.message());
    llvm::sys::DontRemoveFileOnSignal(temp_);
    temp_.clear();
    return llvm::Error::success();
  }

private:
  PendingFile() = default;
  std::string path_, temp_;
};

} // namespace nncc

#endif // NNCC_LIB_SUPPORT_PENDINGFILE_H
