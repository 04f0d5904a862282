#ifndef NNCC_LIB_SUPPORT_ERROR_H
#define NNCC_LIB_SUPPORT_ERROR_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace nncc {

/// An llvm::Error carrying `message`: how every compiler stage reports a
/// failure up to the driver, which prints it as one paragraph.
inline llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The same, naming the file the failure is about first.
inline llvm::Error fail(llvm::StringRef file, const llvm::Twine &message) {
  return fail(llvm::Twine(file) + ": " + message);
}

} // namespace nncc

#endif // NNCC_LIB_SUPPORT_ERROR_H
