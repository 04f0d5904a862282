//===- NoBlasTest.cpp - a machine without a CPU BLAS ----------------------===//
// Run with NNCC_BLAS_LIBRARY pointing to a missing library (see CMakeLists).
#include "nncc/runtime.h"
#include "relu_gemm_data.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

TEST(NoBlas, ModulesLoadAndGemmStepsSayWhatIsMissing) {
  const char *env = std::getenv("NNCC_BLAS_LIBRARY");
  ASSERT_TRUE(env) << "run through ctest (runtime.no-blas), which sets NNCC_BLAS_LIBRARY";
  nncc_module_handle *m = nullptr;
  ASSERT_EQ(nncc_module_load(FIXTURE_OK_SO, &m), NNCC_OK) << nncc_last_error();
  nncc_session *s = nullptr;
  ASSERT_EQ(nncc_session_create(m, "cpu", nullptr, &s), NNCC_OK) << nncc_last_error();

  // An entry without GEMM steps runs.
  const int64_t vd[] = {5};
  int32_t a[5] = {1, 2, 3, 4, 5}, b[5] = {};
  nncc_tensor in1[] = {{"a", NNCC_DTYPE_I32, 1, vd, a}};
  nncc_tensor out1[] = {{"b", NNCC_DTYPE_I32, 1, vd, b}};
  ASSERT_EQ(nncc_session_run(s, "double_it", in1, 1, out1, 1), NNCC_OK) << nncc_last_error();
  EXPECT_EQ(b[4], 10);

  // One with a GEMM step fails, naming what was tried and what to install.
  const int64_t xd[] = {FIXTURE_ROWS, FIXTURE_COLS};
  float x[FIXTURE_ROWS * FIXTURE_COLS] = {};
  nncc_tensor in[] = {{"x", NNCC_DTYPE_F32, 2, xd, x}};
  nncc_tensor out[] = {{"y", 0, 0, nullptr, nullptr}, {"y_copy", 0, 0, nullptr, nullptr}};
  for (int i = 0; i < 2; ++i) { // the same answer every time
    EXPECT_EQ(nncc_session_run(s, "forward", in, 1, out, 2), NNCC_ERROR_UNAVAILABLE);
    EXPECT_EQ(std::string(nncc_last_error()),
              "entry 'forward' step 1 (GEMM MatMul_2): no CPU BLAS found (tried " +
                  std::string(env) + " (not found)); install libopenblas0 or set NNCC_BLAS_LIBRARY");
    EXPECT_EQ(out[0].data, nullptr); // runtime-allocated outputs freed on failure
  }
  nncc_session_destroy(s);
  nncc_module_release(m);
}

} // namespace
