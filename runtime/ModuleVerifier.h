//===- ModuleVerifier.h - check a module's tables before running them -----===//
#ifndef NNCC_RUNTIME_MODULEVERIFIER_H
#define NNCC_RUNTIME_MODULEVERIFIER_H

#include "Status.h"
#include "nncc/module_abi.h"

#include <cstdint>
#include <vector>

namespace nncc::rt {

/// What verification derives from a module's tables.
struct VerifiedPlan {
  struct IOBytes {
    std::vector<int64_t> inputs, outputs; // byte sizes, checked against overflow
  };
  std::vector<IOBytes> io; // per entry (the same in every plan)
};

/// "cpu", "cuda" (an nncc_device_kind's name in messages and device specs).
const char *deviceKindName(int32_t kind);

/// Checks every count, index, region and parameter of `m` that the
/// executors trust. The tables must have passed planChecksum's bounds walk
/// (this reads them without checking pointers).
Status verifyPlan(const nncc_module &m, VerifiedPlan *out);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_MODULEVERIFIER_H
