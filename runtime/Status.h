//===- Status.h - status code + message, the runtime's error type ---------===//
//
// The runtime reports errors as values (IREE's iree_status_t in miniature):
// every fallible internal function returns a Status, and the C ABI turns it
// into an nncc_status plus the thread-local nncc_last_error() message. No
// exceptions cross the C boundary and nothing a user's file or input can cause
// aborts the process.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_STATUS_H
#define NNCC_RUNTIME_STATUS_H

#include "nncc/runtime.h"

#include <string>
#include <utility>

namespace nncc::rt {

class [[nodiscard]] Status {
public:
  Status() = default;
  Status(nncc_status code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }
  bool isOk() const { return code_ == NNCC_OK; }
  explicit operator bool() const { return isOk(); }
  nncc_status code() const { return code_; }
  const std::string &message() const { return message_; }

  /// Prefixes the message with context ("cannot load module 'm.so': ").
  Status &prefix(const std::string &context) {
    if (!isOk())
      message_ = context + message_;
    return *this;
  }

private:
  nncc_status code_ = NNCC_OK;
  std::string message_;
};

/// printf-style formatting into a std::string (error paths only).
std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

inline Status error(nncc_status code, std::string message) { return Status(code, std::move(message)); }

} // namespace nncc::rt

/// Returns early from the enclosing function when `expr` is an error.
#define NNCC_RETURN_IF_ERROR(expr)                                                                 \
  do {                                                                                             \
    ::nncc::rt::Status nncc_status_ = (expr);                                                      \
    if (!nncc_status_.isOk())                                                                      \
      return nncc_status_;                                                                         \
  } while (0)

#endif // NNCC_RUNTIME_STATUS_H
