#ifndef NNCC_LIB_SUPPORT_ERROR_H
#define NNCC_LIB_SUPPORT_ERROR_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace nncc {

/// An llvm::Error carrying `message`: how every compiler stage reports a
/// failure up to the driver, which prints it as one paragraph.
inline llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace nncc

#endif // NNCC_LIB_SUPPORT_ERROR_H
