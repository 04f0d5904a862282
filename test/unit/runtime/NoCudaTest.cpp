//===- NoCudaTest.cpp - every CUDA path on a machine without a usable GPU --===//
//
// Run by ctest once per situation, each in a process of its own (the driver
// is loaded once per process): NNCC_CUDA_DRIVER names no library, or a fake
// libcuda.so.1 (fixtures/fake_cuda.c) whose NNCC_FAKE_CUDA_MODE says "a
// driver but no GPU", "0 devices" or "a driver too old". NNCC_TEST_EXPECT is
// the message every path must give; the CPU must be unaffected.
//
//===----------------------------------------------------------------------===//
#include "nncc/runtime.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <sys/wait.h>

using ::testing::HasSubstr;

namespace {

std::string expected() {
  const char *e = std::getenv("NNCC_TEST_EXPECT");
  return e ? e : "NNCC_TEST_EXPECT is not set";
}

struct Result {
  int exitCode;
  std::string output;
};

Result runTool(const std::string &cmd) {
  std::string log = std::string(TEST_TMP_ROOT) + "/nocuda_" + std::to_string(getpid()) + ".txt";
  int status = std::system((cmd + " > " + log + " 2>&1").c_str());
  std::string out;
  if (FILE *f = std::fopen(log.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0)
      out.append(buf, n);
    std::fclose(f);
  }
  std::remove(log.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(NoCuda, NoDevicesAndBestIsCpu) {
  EXPECT_EQ(nncc_device_count("cuda"), 0);
  EXPECT_EQ(nncc::Device::best().str(), "cpu");
  nncc::Module gpu = nncc::Module::load(FIXTURE_GPU_OK_SO);
  EXPECT_TRUE(gpu.runsOn("cuda")); // it has GPU code, but there is no GPU
  EXPECT_EQ(nncc::Device::best(gpu).str(), "cpu");
  EXPECT_EQ(nncc_device_count("cpu"), 1);
}

TEST(NoCuda, QueriesSayWhy) {
  int32_t version = 0;
  const char *lib = nullptr;
  EXPECT_EQ(nncc_cuda_driver_info(&version, &lib), NNCC_ERROR_UNAVAILABLE);
  EXPECT_THAT(nncc_last_error(), HasSubstr(expected()));
  nncc_cuda_device_info info{};
  info.struct_size = sizeof(info);
  EXPECT_EQ(nncc_cuda_get_device_info(0, &info), NNCC_ERROR_UNAVAILABLE);
  EXPECT_THAT(nncc_last_error(), HasSubstr(expected()));
}

TEST(NoCuda, SessionFailsClearlyCpuStillRuns) {
  nncc::Module m = nncc::Module::load(FIXTURE_GPU_OK_SO);
  try {
    nncc::Session s(m, nncc::Device::cuda(0));
    FAIL() << "a cuda:0 session opened";
  } catch (const nncc::Error &e) {
    EXPECT_EQ(e.status(), NNCC_ERROR_UNAVAILABLE);
    EXPECT_THAT(e.what(), HasSubstr("cannot open device cuda:0: "));
    EXPECT_THAT(e.what(), HasSubstr(expected()));
  }
  nncc::Session cpu(m, nncc::Device::cpu(), {1});
  std::vector<float> x(128, 1.0f);
  nncc::TensorMap out =
      cpu.run("forward", {{"x", nncc::Tensor::wrap(x.data(), nncc::DType::f32, {16, 8})}});
  EXPECT_EQ(out.at("y").data<float>()[0], 3.0f); // 2 * (1 + 0.5)
}

TEST(NoCuda, NnccRunExitsOneWithTheReason) {
  Result r = runTool(std::string(NNCC_RUN_EXE) + " " + FIXTURE_GPU_OK_SO +
                     " --device cuda:0 --input-dir /nonexistent");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.output, HasSubstr("nncc-run: error: cannot open device cuda:0: "));
  EXPECT_THAT(r.output, HasSubstr(expected()));
}

TEST(NoCuda, NnccInfoSaysSoAndExitsZero) {
  Result r = runTool(NNCC_INFO_EXE);
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("CUDA\n  not available: "));
  EXPECT_THAT(r.output, HasSubstr(expected()));
  EXPECT_THAT(r.output, HasSubstr("\nCPU\n"));
  r = runTool(std::string(NNCC_INFO_EXE) + " --json");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("\"available\":false,\"error\":"));
}

} // namespace
