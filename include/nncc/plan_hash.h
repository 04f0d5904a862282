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

/// Every model.so ends with a 16-byte trailer after its ELF contents: these 8
/// bytes, then fileChecksum of everything before the trailer (little-endian).
/// The runtime checks it before dlopen, so a flipped bit anywhere in the file
/// (code, relocations, dynamic section, plan, embedded weights) is a clear
/// error instead of a crash or a silently different output. ELF loaders
/// ignore bytes past the section headers; `strip` drops them (the runtime
/// then refuses the file as modified).
constexpr char kFileTrailerMagic[8] = {'N', 'N', 'C', 'C', 'S', 'U', 'M', '1'};
constexpr size_t kFileTrailerBytes = 16;

/// A 64-bit hash of `n` bytes taking 8 at a time (FNV-1a's step on words):
/// several GB/s, since it covers embedded weights too.
inline uint64_t fileChecksum(const uint8_t *p, size_t n) {
  uint64_t h = 14695981039346656037ull;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 1099511628211ull;
    h ^= h >> 29;
  }
  for (; i < n; ++i)
    h = (h ^ p[i]) * 1099511628211ull;
  return h ^ (h >> 32) ^ n;
}

} // namespace nncc

#endif // NNCC_PLAN_HASH_H
