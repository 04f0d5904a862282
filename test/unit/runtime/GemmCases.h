//===- GemmCases.h - the GEMM fixture's entries and their reference --------===//
//
// fixtures/gemm_variants.c has one GEMM per entry (f16/bf16 operands, bias,
// relu/gelu, tf32, broadcast batches, beta). checkGemmEntry runs an entry on a
// device and compares it with a double-precision reference computed here from
// this table, independently of the runtime's code.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_TEST_RUNTIME_GEMMCASES_H
#define NNCC_TEST_RUNTIME_GEMMCASES_H

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace nncc::test {

struct GemmCase {
  const char *entry;
  int64_t batch, m, n, k;
  bool transA, transB;
  int64_t lda, ldb, ldc, strideA, strideB, strideC;
  int32_t dtypeA, dtypeB, dtypeC;
  int activation; // 0 none, 1 relu, 2 gelu (erf)
  bool bias, c0;
  double alpha, beta;
};

/// A fixture module's path: as built, or in NNCC_TEST_FIXTURE_DIR when set
/// (scripts/gpu-check.sh carries the fixtures to a GPU machine).
std::string fixturePath(const char *built);

/// GoogleTest prints a case by its entry name.
inline void PrintTo(const GemmCase &c, std::ostream *os) { *os << c.entry; }

/// Every entry of gemm_variants.c, in order.
const std::vector<GemmCase> &gemmCases();

/// Extra tolerance a device needs beyond rounding C to its dtype (cuBLASLt's
/// gelu epilogue is the tanh approximation, tf32 keeps 10 mantissa bits).
struct DeviceTolerance {
  double gelu = 0;
  double tf32 = 0;
};

/// Runs `c.entry` of the fixture module on `device` with deterministic
/// inputs and checks every element of c against the reference.
void checkGemmEntry(const std::string &modulePath, const std::string &device, const GemmCase &c,
                    const DeviceTolerance &tol);

} // namespace nncc::test

#endif
