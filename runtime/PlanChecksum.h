//===- PlanChecksum.h - bounds-checked walk of a module's tables ----------===//
//
// A loaded module's tables are data from a file: a flipped bit in a count or
// a pointer must be an error, not a wild read. planChecksum walks every table
// of an nncc_module, checking each pointer against the module's own memory
// before it is dereferenced, and hashes what it reads in the canonical order
// lib/Target/Plan.cpp's planChecksum hashes the compiler's plan. Once it
// succeeds, every table, string and embedded blob the runtime reads lies
// inside the module.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_PLANCHECKSUM_H
#define NNCC_RUNTIME_PLANCHECKSUM_H

#include "Status.h"
#include "nncc/module_abi.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nncc::rt {

/// The readable memory of a module: its loaded segments, or (fuzzing) a
/// buffer.
class ModuleMemory {
public:
  /// The readable PT_LOAD segments of the library dlopen returned `handle` for.
  static Status ofLibrary(void *handle, ModuleMemory *out);
  /// The same for the loaded object that contains `address`.
  static Status ofObjectContaining(const void *address, ModuleMemory *out);

  void add(const void *begin, size_t bytes, bool executable);
  /// Whether [p, p + bytes) lies inside one range.
  bool contains(const void *p, uint64_t bytes) const;
  /// Whether p lies inside an executable range.
  bool executable(const void *p) const;
  /// Length of the NUL-terminated string at s, or -1 when s is outside the
  /// memory or its range ends before the NUL.
  int64_t stringLength(const char *s) const;
  uint64_t totalBytes() const;

private:
  struct Range {
    uintptr_t begin, end;
    bool executable;
  };
  const Range *find(uintptr_t p) const;
  std::vector<Range> ranges_;
};

/// Checks that every table, string and blob of `m` (the struct included)
/// lies in `memory` and that CPU kernel code lies in an executable range,
/// and computes the plan checksum. INVALID_MODULE names the first table
/// that does not fit.
Status planChecksum(const nncc_module &m, const ModuleMemory &memory, uint64_t *out);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_PLANCHECKSUM_H
