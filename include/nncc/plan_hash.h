/* The hashing primitive of nncc_module.plan_checksum, shared by the compiler
 * (lib/Target/Plan.cpp hashes its ModulePlan) and the runtime
 * (runtime/PlanChecksum.cpp hashes the loaded nncc_module): FNV-1a 64 over a
 * canonical encoding of values, so that both sides agree whatever the width
 * of a field. Header-only and dependency-free (the runtime links no LLVM);
 * internal to nncc, not installed.
 */
#ifndef NNCC_PLAN_HASH_H
#define NNCC_PLAN_HASH_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace nncc {

class PlanHash {
public:
  /// Any integer field: 8 bytes, little-endian (sign-extended).
  void integer(int64_t v) {
    uint64_t u = static_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i)
      byte(static_cast<uint8_t>(u >> (8 * i)));
  }
  /// A double by its bits.
  void real(double v) {
    int64_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    integer(bits);
  }
  /// A string: its length, then its bytes ("ab","c" and "a","bc" differ).
  void string(const char *s, size_t length) {
    integer(static_cast<int64_t>(length));
    bytes(s, length);
  }
  /// A NULL string, distinct from "".
  void absent() { integer(-1); }
  void bytes(const void *data, size_t n) {
    const auto *p = static_cast<const uint8_t *>(data);
    for (size_t i = 0; i < n; ++i)
      byte(p[i]);
  }
  uint64_t value() const { return h_; }

private:
  void byte(uint8_t b) {
    h_ ^= b;
    h_ *= 1099511628211ull;
  }
  uint64_t h_ = 14695981039346656037ull;
};

} // namespace nncc

#endif // NNCC_PLAN_HASH_H
