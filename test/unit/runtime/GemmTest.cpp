//===- GemmTest.cpp - GEMM steps with ABI v2 options on the CPU -----------===//
#include "GemmCases.h"
#include "nncc/module_abi.h"

#include "../../../runtime/cpu/HalfFloat.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace nncc::test;

namespace {

class CpuGemm : public ::testing::TestWithParam<GemmCase> {};

TEST_P(CpuGemm, MatchesReference) {
  checkGemmEntry(FIXTURE_GEMM_VARIANTS_SO, "cpu", GetParam(), DeviceTolerance{});
}

INSTANTIATE_TEST_SUITE_P(Entries, CpuGemm, ::testing::ValuesIn(gemmCases()),
                         [](const auto &info) { return std::string(info.param.entry); });

// f32 operands with a bf16 C (and bias): the CPU runs it (cuBLASLt cannot).
TEST(CpuGemm, F32OperandsBf16Result) {
  GemmCase c = gemmCases().back(); // large_bias_gelu
  c.dtypeC = NNCC_DTYPE_BF16;      // as in the gemm_unsupported fixture
  checkGemmEntry(FIXTURE_GEMM_UNSUPPORTED_SO, "cpu", c, DeviceTolerance{});
}

// The conversions behind the CPU's f16/bf16 GEMMs, on values whose bits are
// known.
TEST(HalfFloat, F16RoundsToNearestEven) {
  using nncc::rt::floatToF16;
  EXPECT_EQ(floatToF16(1.0f), 0x3c00);
  EXPECT_EQ(floatToF16(-2.0f), 0xc000);
  EXPECT_EQ(floatToF16(65504.0f), 0x7bff);
  EXPECT_EQ(floatToF16(65520.0f), 0x7c00); // rounds up to infinity
  EXPECT_EQ(floatToF16(65519.0f), 0x7bff);
  EXPECT_EQ(floatToF16(0.1f), 0x2e66);
  EXPECT_EQ(floatToF16(1.0f + 1.0f / 2048), 0x3c00);     // tie, to even
  EXPECT_EQ(floatToF16(1.0f + 3.0f / 2048), 0x3c02);     // tie, to even (up)
  EXPECT_EQ(floatToF16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(floatToF16(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: zero
  EXPECT_EQ(floatToF16(std::ldexp(3.0f, -25)), 0x0002);  // tie to even: 2
  EXPECT_EQ(floatToF16(std::ldexp(1023.0f, -24)), 0x03ff);
  EXPECT_EQ(floatToF16(INFINITY), 0x7c00);
  EXPECT_EQ(floatToF16(NAN) & 0x7e00, 0x7e00);
}

TEST(HalfFloat, F16WidensExactly) {
  using nncc::rt::f16ToFloat;
  EXPECT_EQ(f16ToFloat(0x3c00), 1.0f);
  EXPECT_EQ(f16ToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(f16ToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16ToFloat(0x8400), -std::ldexp(1.0f, -14));
  EXPECT_TRUE(std::isinf(f16ToFloat(0xfc00)));
  EXPECT_TRUE(std::isnan(f16ToFloat(0x7e00)));
  for (uint32_t h = 0; h < 0x7c00; ++h) // every finite value round-trips
    ASSERT_EQ(nncc::rt::floatToF16(f16ToFloat(static_cast<uint16_t>(h))), h);
}

TEST(HalfFloat, Bf16RoundsToNearestEven) {
  using nncc::rt::floatToBf16;
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80); // tie, to even
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(3.0f, -8)), 0x3f82); // tie, to even (up)
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(1.0f, -7)), 0x3f81);
  EXPECT_EQ(nncc::rt::bf16ToFloat(0xc040), -3.0f);
  EXPECT_EQ(floatToBf16(NAN) & 0x7fc0, 0x7fc0);
}

} // namespace
