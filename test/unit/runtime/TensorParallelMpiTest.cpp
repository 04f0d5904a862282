//===- TensorParallelMpiTest.cpp - dp=2 x tp=2 under mpirun ---------------===//
//
// Run by ctest under `mpirun -np 4` (TensorParallelMpi.*) and `-np 2`
// (TensorParallelMpiRefused.*) on the CPU, over MPI. Every rank's input
// differs, so a collective over the wrong ranks gives other numbers than
// the references computed here from the layout: world rank w = d*2 + t, the
// tensor group {2d, 2d+1}, the data group {t, 2+t}.
#include "nncc/runtime.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

using ::testing::HasSubstr;

namespace {

/// x of world rank `w`: distinct per rank and element, exact in f32.
std::vector<float> inputOf(int w) {
  std::vector<float> x(5);
  for (int i = 0; i < 5; ++i)
    x[i] = static_cast<float>((w + 1) * 10 + i) + 0.25f * static_cast<float>(w);
  return x;
}

/// A whole f32[4, 6] "w" with values f(i, j).
template <typename F> std::vector<float> whole(F f) {
  std::vector<float> v(24);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j)
      v[i * 6 + j] = f(i, j);
  return v;
}

/// Rank t's part of `w` (columns [3t, 3t+3)) as the session's "read_w" returns it.
void expectPart(nncc::Session &s, const std::vector<float> &w, int t) {
  nncc::TensorMap out = s.run("read_w", {});
  const float *part = out.at("w_part").data<float>();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      ASSERT_EQ(part[i * 3 + j], w[i * 6 + 3 * t + j]) << "rank part of tensor index " << t << " at " << i << "," << j;
}

void expectWhole(nncc::Session &s, const std::vector<float> &w) {
  nncc::Tensor got = s.state("w");
  ASSERT_EQ(got.dims(), (std::vector<int64_t>{4, 6}));
  for (int k = 0; k < 24; ++k)
    ASSERT_EQ(got.data<float>()[k], w[k]) << k;
}

std::string tmpDir() {
  std::string dir = std::string(TEST_TMP_ROOT) + "/tensor-parallel";
  mkdir(TEST_TMP_ROOT, 0755);
  mkdir(dir.c_str(), 0755);
  return dir;
}

TEST(TensorParallelMpi, GroupsShardsAndCheckpoints) {
  nncc::Distributed world = nncc::Distributed::fromMpi();
  ASSERT_EQ(world.size(), 4) << "run under mpirun -np 4";
  int w = world.rank(), d = w / 2, t = w % 2;
  nncc::Module m = nncc::Module::load(FIXTURE_TP_SO);
  nncc::SessionOptions options(1);
  options.distributed = world;
  nncc::Session s(m, nncc::Device::cpu(), options);

  // The sum over the tensor group {2d, 2d+1} and the mean over the data
  // group {t, 2+t}, both in flight in one run.
  std::vector<float> x = inputOf(w);
  nncc::TensorMap out = s.run("both", {{"x", nncc::Tensor::wrap(x.data(), nncc::DType::f32, {5})}});
  std::vector<float> a = inputOf(2 * d), b = inputOf(2 * d + 1), c = inputOf(t), e = inputOf(2 + t);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(out.at("s").data<float>()[i], a[i] + b[i]) << "rank " << w << " tensor sum " << i;
    EXPECT_EQ(out.at("m").data<float>()[i], (c[i] + e[i]) * 0.5f) << "rank " << w << " data mean " << i;
  }

  // The sharded state starts as the rank's part of the whole weight; read,
  // it is the whole (gathered over the tensor group).
  std::vector<float> initial = whole([](int i, int j) { return static_cast<float>(10 * i + j); });
  expectPart(s, initial, t);
  expectWhole(s, initial);
  nncc::Tensor bias = s.state("bias");
  EXPECT_EQ(bias.data<float>()[2], 2.5f);

  // Written whole, each rank keeps its part.
  std::vector<float> v = whole([](int i, int j) { return 100.0f + static_cast<float>(i * 6 + j) * 0.5f; });
  s.setState("w", nncc::Tensor::wrap(v.data(), nncc::DType::f32, {4, 6}));
  expectPart(s, v, t);
  expectWhole(s, v);

  // A checkpoint written at 4 ranks loads into the one-rank twin...
  std::string dir = tmpDir();
  std::string at4 = dir + "/at4." + std::to_string(w) + ".ckpt";
  s.saveCheckpoint(at4);
  nncc::Module twinModule = nncc::Module::load(FIXTURE_TP_TWIN_SO);
  nncc::Session twin(twinModule, nncc::Device::cpu(), {1});
  twin.loadCheckpoint(at4);
  expectWhole(twin, v);
  EXPECT_EQ(twin.state("bias").data<float>()[0], 0.5f);

  // ...and the twin's loads at 4 ranks, each taking its part.
  std::vector<float> u = whole([&](int i, int j) { return -static_cast<float>(i * 6 + j) - 0.125f; });
  twin.setState("w", nncc::Tensor::wrap(u.data(), nncc::DType::f32, {4, 6}));
  std::string at1 = dir + "/at1." + std::to_string(w) + ".ckpt";
  twin.saveCheckpoint(at1);
  s.loadCheckpoint(at1);
  expectPart(s, u, t);
  expectWhole(s, u);
  world.barrier();
}

TEST(TensorParallelMpiRefused, WrongWorldSize) {
  nncc::Distributed world = nncc::Distributed::fromMpi();
  ASSERT_EQ(world.size(), 2) << "run under mpirun -np 2";
  nncc::Module m = nncc::Module::load(FIXTURE_TP_SO);
  nncc::SessionOptions options(1);
  options.distributed = world;
  try {
    nncc::Session s(m, nncc::Device::cpu(), options);
    FAIL() << "a dp=2 x tp=2 module opened by 2 ranks";
  } catch (const nncc::Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("was compiled for 4 ranks (--parallel=dp:2,tp:2: 2 data- times 2 "
                                    "tensor-parallel), but this session's world has 2 (mpi): run it under "
                                    "`mpirun -np 4`"));
  }
}

} // namespace
