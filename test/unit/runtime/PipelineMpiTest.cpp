//===- PipelineMpiTest.cpp - pp=2 and dp=2 x pp=2 under mpirun ------------===//
//
// Run by ctest under `mpirun -np 2` (PipelineMpi.*, with the collectives on
// the communication thread and, NNCC_SYNC_COLLECTIVES=1, on the calling
// one) and `-np 4` (PipelineMpiDp2.*) on the CPU.
// fixtures/pipeline.c's stages exchange 1 MiB messages in a 1F1B order that
// deadlocks with blocking sends; every rank returns the same result, which
// the one-rank twin computes too. World rank w = d*2 + p.
#include "nncc/runtime.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sys/stat.h>

using ::testing::HasSubstr;

namespace {

constexpr int64_t kN = 262144;
constexpr int64_t kStateBytes = kN * 4; // w0 or w1

/// x f32[3, N] of data index d: distinct per microbatch, element and d,
/// exact in f32 (as are the results below 2^24).
std::vector<float> inputOf(int d) {
  std::vector<float> x(3 * kN);
  for (int i = 0; i < 3; ++i)
    for (int64_t k = 0; k < kN; ++k)
      x[i * kN + k] = static_cast<float>(i * 1000 + d * 100) + 0.5f * static_cast<float>(k);
  return x;
}

nncc::Tensor wrap(std::vector<float> &x) { return nncc::Tensor::wrap(x.data(), nncc::DType::f32, {3, kN}); }

/// Runs "step" and checks out = 2 (mean x + w0) + w1, mean x = x of d = 0
/// plus `shift`.
void expectStep(nncc::Session &s, std::vector<float> &x, float shift, float w0, float w1, const char *what) {
  nncc::TensorMap out = s.run("step", {{"x", wrap(x)}});
  const float *o = out.at("out").data<float>();
  std::vector<float> x0 = inputOf(0);
  for (int64_t k = 0; k < 3 * kN; ++k)
    ASSERT_EQ(o[k], 2.0f * (x0[k] + shift + w0) + w1) << what << " at " << k;
}

void expectState(nncc::Session &s, const char *name, float value) {
  nncc::Tensor t = s.state(name);
  ASSERT_EQ(t.dims(), (std::vector<int64_t>{kN}));
  for (int64_t k = 0; k < kN; ++k)
    ASSERT_EQ(t.data<float>()[k], value) << "state " << name << " at " << k;
}

std::string tmpDir() {
  std::string dir = std::string(TEST_TMP_ROOT) + "/pipeline";
  mkdir(TEST_TMP_ROOT, 0755);
  mkdir(dir.c_str(), 0755);
  return dir;
}

std::string contents(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(PipelineMpi, OneFOneBStagedStateAndCheckpoints) {
  nncc::Distributed world = nncc::Distributed::fromMpi();
  ASSERT_EQ(world.size(), 2) << "run under mpirun -np 2";
  int w = world.rank();
  nncc::Module m = nncc::Module::load(FIXTURE_PP_SO);
  EXPECT_EQ(m.parallel().pipeline, 2);
  EXPECT_EQ(m.parallel().stage(w), w);
  ASSERT_EQ(m.entries().size(), 1u); // "step" once, though listed per stage
  EXPECT_EQ(m.steps("step", "cpu", 1)[0].name, "recv_a0");
  nncc::SessionOptions options(1);
  options.distributed = world;
  nncc::Session s(m, nncc::Device::cpu(), options);
  EXPECT_EQ(s.pipelineStage(), w);
  // Each stage allocates its own state only: w0 on rank 0, w1 on rank 1
  // (the twin, below, holds both).
  EXPECT_EQ(s.stateBytes(), kStateBytes);

  // Stage 0 computes, stage 1 answers; both return the data-group mean (a
  // group of one here). w0 += 1 on stage 0, w1 += 2 on stage 1 per run.
  std::vector<float> x = inputOf(0);
  expectStep(s, x, 0, 0, 0, "run 1");
  expectStep(s, x, 0, 1, 2, "run 2");
  // Each state reads as its owner's value on every rank (the other stage
  // has no copy: it receives the owner's).
  expectState(s, "w0", 2);
  expectState(s, "w1", 4);

  // A checkpoint written at pp=2 is the one-rank twin's, bit for bit...
  std::string dir = tmpDir();
  std::string at2 = dir + "/at2." + std::to_string(w) + ".ckpt";
  s.saveCheckpoint(at2);
  nncc::Module twinModule = nncc::Module::load(FIXTURE_PP_TWIN_SO);
  nncc::Session twin(twinModule, nncc::Device::cpu(), {1});
  EXPECT_EQ(twin.stateBytes(), 2 * kStateBytes);
  EXPECT_EQ(s.allocatedBytes(), twin.allocatedBytes() - kStateBytes); // the same arena, one state less
  twin.loadCheckpoint(at2);
  std::string at1 = dir + "/at1." + std::to_string(w) + ".ckpt";
  twin.saveCheckpoint(at1);
  EXPECT_EQ(contents(at1), contents(at2));
  expectStep(twin, x, 0, 2, 4, "twin after the pp=2 checkpoint");
  expectStep(s, x, 0, 2, 4, "run 3");

  // ...and the twin's loads at pp=2: each stage keeps its own states' values
  // (the other stage's are read and dropped).
  std::vector<float> seven(kN, 7.0f), nine(kN, 9.0f);
  twin.setState("w0", nncc::Tensor::wrap(seven.data(), nncc::DType::f32, {kN}));
  twin.setState("w1", nncc::Tensor::wrap(nine.data(), nncc::DType::f32, {kN}));
  twin.saveCheckpoint(at1);
  s.loadCheckpoint(at1);
  expectState(s, "w0", 7);
  expectState(s, "w1", 9);
  expectStep(s, x, 0, 7, 9, "run after loading the twin's checkpoint");
  expectState(s, "w0", 8);
  expectState(s, "w1", 11);

  // Writing another stage's state is accepted and dropped: rank w writes
  // 100 + w to w0 and 200 + w to w1, and each keeps its owner's value.
  std::vector<float> mine0(kN, 100.0f + static_cast<float>(w)), mine1(kN, 200.0f + static_cast<float>(w));
  s.setState("w0", nncc::Tensor::wrap(mine0.data(), nncc::DType::f32, {kN}));
  s.setState("w1", nncc::Tensor::wrap(mine1.data(), nncc::DType::f32, {kN}));
  expectState(s, "w0", 100);
  expectState(s, "w1", 201);
  expectStep(s, x, 0, 100, 201, "run after each rank wrote both states");
  world.barrier();
}

TEST(PipelineMpiDp2, DataGroupsAcrossStages) {
  nncc::Distributed world = nncc::Distributed::fromMpi();
  ASSERT_EQ(world.size(), 4) << "run under mpirun -np 4";
  int w = world.rank(), d = w / 2, p = w % 2;
  nncc::SessionOptions options(1);
  options.distributed = world;
  // The pp=2 module needs 2 ranks, not 4 (one MPI world per process: this
  // test's, so the refusal is checked here).
  try {
    nncc::Session s(nncc::Module::load(FIXTURE_PP_SO), nncc::Device::cpu(), options);
    FAIL() << "a pp=2 module opened by 4 ranks";
  } catch (const nncc::Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("was compiled for 2 pipeline-parallel ranks (--parallel=pp:2), but this "
                                    "session's world has 4 (mpi): run it under `mpirun -np 2`"));
  }
  nncc::Module m = nncc::Module::load(FIXTURE_PP_DP2_SO);
  nncc::Session s(m, nncc::Device::cpu(), options);
  EXPECT_EQ(s.pipelineStage(), p);
  EXPECT_EQ(s.stateBytes(), kStateBytes); // w0 on stage 0, w1 on stage 1
  // Stage 1 of data index d gets stage 0's activations of the same d: the
  // mean over d of 2 (x_d + w0) + w1, x_1 = x_0 + 100. A sum, or stages of
  // mixed data indices, give other numbers.
  std::vector<float> x = inputOf(d);
  expectStep(s, x, 50, 0, 0, "run 1");
  expectStep(s, x, 50, 1, 2, "run 2");
  expectState(s, "w0", 2);
  expectState(s, "w1", 4);
  world.barrier();
}

} // namespace
