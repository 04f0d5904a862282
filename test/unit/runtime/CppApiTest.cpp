//===- CppApiTest.cpp - the header-only C++ API ---------------------------===//
#include "TestUtil.h"
#include "nncc/runtime.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace nncc::test;
using ::testing::HasSubstr;

namespace {

TEST(CppApi, LoadErrorThrows) {
  try {
    nncc::Module::load("/nonexistent/model.so");
    FAIL() << "no exception";
  } catch (const nncc::Error &e) {
    EXPECT_EQ(e.status(), NNCC_ERROR_NOT_FOUND);
    EXPECT_THAT(e.what(), HasSubstr("cannot load module '/nonexistent/model.so'"));
  }
  EXPECT_THROW(nncc::Module::load(FIXTURE_WRONG_ABI_SO), std::runtime_error);
}

TEST(CppApi, Signatures) {
  nncc::Module m = nncc::Module::load(FIXTURE_OK_SO);
  std::vector<nncc::EntryInfo> entries = m.entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].name, "forward");
  EXPECT_EQ(entries[0].inputs[0].typeString(), "f32[16,8]");
  EXPECT_EQ(entries[0].outputs[1].name, "y_copy");
  EXPECT_EQ(entries[0].arenaBytes, 512);
  EXPECT_EQ(m.entry("double_it").inputs[0].dtype, nncc::DType::i32);
  EXPECT_THROW(m.entry("nope"), nncc::Error);
  EXPECT_EQ(m.producer(), "nncc test fixture");
}

TEST(CppApi, Devices) {
  EXPECT_EQ(nncc::Device::cpu().str(), "cpu");
  EXPECT_EQ(nncc::Device::cuda(2).str(), "cuda:2");
  EXPECT_EQ(nncc::Device::best().str(), "cpu"); // NNCC_CUDA_DRIVER names no driver
  nncc::Module m = nncc::Module::load(FIXTURE_OK_SO);
  try {
    nncc::Session s(m, nncc::Device::cuda(0));
    FAIL() << "no exception";
  } catch (const nncc::Error &e) {
    EXPECT_EQ(e.status(), NNCC_ERROR_UNAVAILABLE);
    EXPECT_THAT(e.what(), ::testing::StartsWith("cannot open device cuda:0: no CUDA driver "
                                                "(/nonexistent/libcuda.so.1) found"));
  }
}

TEST(CppApi, RunReturnsOutputsByName) {
  nncc::Module m = nncc::Module::load(FIXTURE_OK_SO);
  nncc::Session s(m, nncc::Device::best(), {2});
  EXPECT_EQ(s.threads(), 2);
  EXPECT_EQ(s.allocatedBytes(), fixtureSessionBytes(2));
  std::vector<float> x = makeX(4);
  nncc::Tensor xt = nncc::Tensor::wrap(x.data(), nncc::DType::f32, {16, 8});
  EXPECT_EQ(xt.data(), x.data()); // wrapped, not copied
  EXPECT_EQ(xt.numel(), 128);
  EXPECT_EQ(xt.bytes(), 512u);
  nncc::TensorMap outs = s.run("forward", {{"x", xt}});
  ASSERT_EQ(outs.size(), 2u);
  const nncc::Tensor &y = outs.at("y");
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{16, 4}));
  EXPECT_EQ(y.dtype(), nncc::DType::f32);
  std::vector<float> ref = referenceForward(x);
  for (size_t i = 0; i < ref.size(); ++i)
    EXPECT_NEAR(y.data<float>()[i], ref[i], 1e-5);
  EXPECT_THROW(y.data<int32_t>(), nncc::Error);
}

TEST(CppApi, RunIntoCallerOutputs) {
  nncc::Module m = nncc::Module::load(FIXTURE_OK_SO);
  nncc::Session s(m, nncc::Device::cpu(), {1});
  std::vector<float> x = makeX(5);
  std::vector<float> ybuf(64);
  nncc::TensorMap outs{{"y", nncc::Tensor::wrap(ybuf.data(), nncc::DType::f32, {16, 4})}};
  s.run("forward", {{"x", nncc::Tensor::wrap(x.data(), nncc::DType::f32, {16, 8})}}, outs);
  std::vector<float> ref = referenceForward(x);
  EXPECT_NEAR(ybuf[9], ref[9], 1e-5); // written in place
  ASSERT_EQ(outs.count("y_copy"), 1u);  // the missing one was allocated
  EXPECT_EQ(outs.at("y_copy").data<float>()[9], ybuf[9]);

  nncc::Tensor a = nncc::Tensor::empty(nncc::DType::i32, {5});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
  for (int i = 0; i < 5; ++i)
    a.data<int32_t>()[i] = i - 2;
  nncc::TensorMap r = s.run("double_it", {{"a", a}});
  EXPECT_EQ(r.at("b").data<int32_t>()[0], -4);
  EXPECT_EQ(r.at("b").data<int32_t>()[4], 4);
}

TEST(CppApi, InputErrorThrowsWithTheMessage) {
  nncc::Module m = nncc::Module::load(FIXTURE_OK_SO);
  nncc::Session s(m);
  nncc::Tensor x = nncc::Tensor::empty(nncc::DType::f32, {1, 32});
  try {
    s.run("forward", {{"x", x}});
    FAIL() << "no exception";
  } catch (const nncc::Error &e) {
    EXPECT_EQ(e.status(), NNCC_ERROR_INVALID_INPUT);
    EXPECT_STREQ(e.what(), "input 'x': expected f32[16,8], got f32[1,32]");
  }
}

// 2^62 x 4 f32 elements overflow 64 bits: the size must be refused, not
// wrapped to a small buffer.
TEST(CppApi, EmptyRefusesSizesThatDoNotFit) {
  auto message = [](nncc::DType t, std::vector<int64_t> dims) -> std::string {
    try {
      nncc::Tensor::empty(t, std::move(dims));
    } catch (const nncc::Error &e) {
      EXPECT_EQ(e.status(), NNCC_ERROR_INVALID_ARGUMENT);
      return e.what();
    }
    return "no exception";
  };
  EXPECT_EQ(message(nncc::DType::f32, {int64_t(1) << 62, 4}),
            "Tensor::empty(f32[4611686018427387904,4]): more than 2^62 bytes");
  EXPECT_EQ(message(nncc::DType::u8, {int64_t(1) << 32, int64_t(1) << 32}),
            "Tensor::empty(u8[4294967296,4294967296]): more than 2^62 bytes");
  EXPECT_EQ(message(nncc::DType::f32, {3, -1}), "Tensor::empty(f32[3,-1]): negative dimension");
  EXPECT_EQ(nncc::Tensor::empty(nncc::DType::f64, {int64_t(1) << 62, 0}).bytes(), 0u);
}

} // namespace
