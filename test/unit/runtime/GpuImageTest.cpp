//===- GpuImageTest.cpp - which GPU code a device of compute X.Y runs -----===//
#include "../../../runtime/cuda/GpuImage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using nncc::rt::chooseGpuCode;
using nncc::rt::GpuCodeChoice;
using ::testing::HasSubstr;

namespace {

const uint8_t kCubin[4] = {1, 2, 3, 4};

nncc_module withImages(const std::vector<nncc_gpu_image> &images) {
  nncc_module m{};
  m.num_gpu_images = static_cast<int32_t>(images.size());
  m.gpu_images = images.data();
  return m;
}

/// "sm_90 cubin, sm_90 ptx, sm_80 ptx" for a list of choices.
std::string describe(const std::vector<GpuCodeChoice> &choices) {
  std::string s;
  for (const GpuCodeChoice &c : choices)
    s += (s.empty() ? "" : ", ") + std::string(c.image->arch) + (c.cubin ? " cubin" : " ptx");
  return s;
}

std::string choose(const std::vector<nncc_gpu_image> &images, int major, int minor) {
  nncc_module m = withImages(images);
  std::vector<GpuCodeChoice> out;
  nncc::rt::Status s = chooseGpuCode(m, major, minor, &out);
  return s.isOk() ? describe(out) : "error: " + s.message();
}

TEST(GpuImage, ExactCubinFirstThenNewestPtxNotNewerThanTheDevice) {
  std::vector<nncc_gpu_image> images = {{"sm_80", "ptx80", kCubin, 4},
                                        {"sm_90", "ptx90", kCubin, 4}};
  EXPECT_EQ(choose(images, 9, 0), "sm_90 cubin, sm_90 ptx, sm_80 ptx");
  EXPECT_EQ(choose(images, 8, 0), "sm_80 cubin, sm_80 ptx");
  // sm_86: no cubin of its own; sm_80's PTX is JIT-compiled (sm_90's is too new).
  EXPECT_EQ(choose(images, 8, 6), "sm_80 ptx");
  // A newer GPU (sm_100) JITs the newest PTX first.
  EXPECT_EQ(choose(images, 10, 0), "sm_90 ptx, sm_80 ptx");
}

TEST(GpuImage, PtxOnlyImages) {
  EXPECT_EQ(choose({{"sm_80", "ptx", nullptr, 0}}, 9, 0), "sm_80 ptx");
}

TEST(GpuImage, ArchSpecificCodeRunsOnlyOnItsArchitecture) {
  std::vector<nncc_gpu_image> images = {{"sm_90a", "ptx", kCubin, 4}, {"sm_80", "ptx", nullptr, 0}};
  EXPECT_EQ(choose(images, 9, 0), "sm_90a cubin, sm_90a ptx, sm_80 ptx");
  EXPECT_EQ(choose(images, 10, 0), "sm_80 ptx");
}

TEST(GpuImage, NothingFitsSaysWhy) {
  EXPECT_THAT(choose({{"sm_90", "ptx", kCubin, 4}}, 8, 0),
              HasSubstr("error: the module has no GPU code this device (sm_80) can run: it has "
                        "sm_90"));
  EXPECT_THAT(choose({}, 9, 0),
              HasSubstr("error: the module has no GPU code (it was compiled without a cuda "
                        "target; compile it with --target=cuda:sm_90)"));
}

} // namespace
