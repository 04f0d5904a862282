//===- TestUtil.h - shared helpers of the runtime tests -------------------===//
#ifndef NNCC_TEST_RUNTIME_TESTUTIL_H
#define NNCC_TEST_RUNTIME_TESTUTIL_H

#include "nncc/runtime.h"
#include "relu_gemm_data.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nncc::test {

/// A fresh, empty directory under the build tree for one test.
std::string makeTempDir(const std::string &name);
/// Copies a file, keeping at most maxBytes of it (a truncated copy).
void copyFile(const std::string &from, const std::string &to, size_t maxBytes = SIZE_MAX);
void writeFile(const std::string &path, const void *data, size_t bytes);
std::string readFile(const std::string &path);

/// The fixture's weight blob (FIXTURE_WEIGHTS_BYTES bytes).
std::vector<uint8_t> fixtureWeightBlob();
/// Deterministic input x of forward (16x8 values in [-1, 1)), varied by seed.
std::vector<float> makeX(int seed);
/// y = (relu(x + w)) * m, computed here independently of the module.
std::vector<float> referenceForward(const std::vector<float> &x);

/// Bytes a cpu session of the fixture allocates: its 512-byte arena, plus,
/// where this CPU runs the runtime's own GEMM kernel, the GEMM's B (a
/// weight) packed once and the packed-A scratch of `threads` threads.
int64_t fixtureSessionBytes(int threads);

struct ModuleRelease {
  void operator()(nncc_module_handle *m) const { nncc_module_release(m); }
};
struct SessionDestroy {
  void operator()(nncc_session *s) const { nncc_session_destroy(s); }
};
using ModulePtr = std::unique_ptr<nncc_module_handle, ModuleRelease>;
using SessionPtr = std::unique_ptr<nncc_session, SessionDestroy>;

/// Loads a module that must load (test failure otherwise; nullptr).
ModulePtr loadModule(const std::string &path);
/// Opens a cpu session that must open.
SessionPtr openSession(nncc_module_handle *m, int threads);

/// Runs forward with caller-provided outputs; returns the status.
nncc_status runForward(nncc_session *s, const std::vector<float> &x, std::vector<float> *y,
                       std::vector<float> *yCopy);

extern const int64_t kXDims[2];
extern const int64_t kYDims[2];

} // namespace nncc::test

#endif
