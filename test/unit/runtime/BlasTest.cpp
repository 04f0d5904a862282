//===- BlasTest.cpp - OpenBLAS runs kernels that fit the CPU --------------===//
#include "../../../runtime/cpu/Blas.h"
#include "../../../runtime/cpu/CpuFeatures.h"
#include "nncc/runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

using nncc::rt::openblasCoreToName;

std::string named(const std::string &detected, bool avx2, bool avx512) {
  const char *core = openblasCoreToName(detected, avx2, avx512);
  return core ? core : "";
}

TEST(CpuBlas, KernelsBelowTheCpuAreNamedUp) {
  // OpenBLAS 0.3.21 on a CPU model it does not know (a 5th-generation Xeon).
  EXPECT_EQ(named("Prescott", true, true), "SkylakeX");
  EXPECT_EQ(named("Prescott", true, false), "Haswell");
  EXPECT_EQ(named("Unknown", true, false), "Haswell");
  EXPECT_EQ(named("sandybridge", true, true), "SkylakeX");
  EXPECT_EQ(named("Excavator", true, false), "Haswell");
}

TEST(CpuBlas, KernelsThatFitAreKept) {
  EXPECT_EQ(named("SkylakeX", true, true), "");
  EXPECT_EQ(named("Cooperlake", true, true), "");
  // AVX2 kernels on an AVX-512 CPU are OpenBLAS's own choice (Zen 4 in 0.3.21).
  EXPECT_EQ(named("Haswell", true, true), "");
  EXPECT_EQ(named("Zen", true, true), "");
  // A CPU without AVX2 and FMA: SSE kernels are right.
  EXPECT_EQ(named("Prescott", false, false), "");
  EXPECT_EQ(named("Sandybridge", false, false), "");
  // A name newer than the rule: OpenBLAS knew the CPU.
  EXPECT_EQ(named("GraniteRapids", true, true), "");
}

/// The loaded library's kernels, through the C API: never below the CPU's
/// AVX2 or AVX-512 unless OPENBLAS_CORETYPE asked for them. runtime.sgemm-avx2
/// runs this with avx512f hidden (then Haswell is the floor) and
/// runtime.sgemm-blas-only with avx2 hidden too (then any kernels fit).
TEST(CpuBlas, LoadedKernelsFitTheCpu) {
  const char *library = nullptr, *kernels = nullptr;
  if (nncc_cpu_blas_info(&library) != NNCC_OK)
    GTEST_SKIP() << nncc_last_error();
  ASSERT_EQ(nncc_cpu_blas_kernels(&kernels), NNCC_OK) << nncc_last_error();
  std::string k = kernels;
  if (k.empty())
    GTEST_SKIP() << library << " is not OpenBLAS";
  const char *forced = std::getenv("OPENBLAS_CORETYPE");
  if (forced && *forced) {
    EXPECT_EQ(k.substr(k.find(' ')), " (OPENBLAS_CORETYPE)") << k;
    return;
  }
  std::string core = k.substr(0, k.find(' '));
  bool avx2 = nncc::rt::missingCpuFeatures("avx2,fma").empty();
  bool avx512 = nncc::rt::missingCpuFeatures("avx512f,avx512bw,avx512dq,avx512vl,avx512cd").empty();
  EXPECT_EQ(named(core, avx2, avx512), "") << "OpenBLAS runs " << k << " on a CPU with"
                                           << (avx512 ? " AVX-512" : avx2 ? " AVX2" : "out AVX2");
  std::printf("CPU BLAS: %s, kernels %s\n", library, kernels);
}

} // namespace
