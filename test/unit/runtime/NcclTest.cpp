//===- NcclTest.cpp - collective steps of CUDA sessions over NCCL ---------===//
//
// A data-parallel module (fixtures/collective.c: a kernel, then a bucket of
// two buffers all-reduced to their mean; and a sum) run by one session per
// GPU over a one-process NCCL world (Distributed::localGpus), one thread per
// rank, and over MPI's world (one process per rank, under mpirun), against
// results computed here. ctest runs it as runtime.hostnccl.*
// against fixtures/host_nccl.cpp (NCCL on the host, on the host CUDA
// fixture's streams, two fake GPUs), and on a GPU machine against the real
// driver and libnccl.so.2, where the two-rank tests need two GPUs and skip
// with fewer. The failure cases run as processes of their own
// (NNCC_FAKE_NCCL_FAIL, NNCC_NCCL_LIBRARY pointing nowhere).
//
//===----------------------------------------------------------------------===//
#include "SingleCollectives.h"
#include "nncc/runtime.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <sys/wait.h>
#include <string>
#include <thread>
#include <vector>

using ::testing::HasSubstr;

namespace {

/// NNCC_TEST_HOST_CUDA=libhostcuda.so: that fake is the driver, cuBLASLt and
/// NCCL (unless NNCC_NCCL_LIBRARY is set), with two GPUs.
const bool kHostCuda = [] {
  const char *fake = std::getenv("NNCC_TEST_HOST_CUDA");
  if (!fake || !*fake)
    return false;
  setenv("NNCC_CUDA_DRIVER", fake, 1);
  setenv("NNCC_CUBLASLT_LIBRARY", fake, 1);
  setenv("NNCC_NCCL_LIBRARY", fake, 0);
  setenv("NNCC_FAKE_CUDA_DEVICES", "2", 0);
  return true;
}();

std::string fixturePath(const char *built) {
  const char *dir = std::getenv("NNCC_TEST_FIXTURE_DIR");
  if (!dir || !*dir)
    return built;
  std::string path = built;
  return std::string(dir) + path.substr(path.rfind('/'));
}

/// Why this machine cannot run `ranks` GPU ranks, or "".
std::string tooFewGpus(int ranks) {
  int32_t version = 0;
  const char *lib = nullptr;
  if (nncc_cuda_driver_info(&version, &lib) != NNCC_OK)
    return std::string("no GPU: ") + nncc_last_error();
  int gpus = nncc_device_count("cuda");
  return gpus >= ranks ? "" : "needs " + std::to_string(ranks) + " GPUs, this machine has " + std::to_string(gpus);
}

#define SKIP_WITHOUT_GPUS(n)                                                                       \
  do {                                                                                             \
    std::string why = tooFewGpus(n);                                                               \
    if (!why.empty())                                                                              \
      GTEST_SKIP() << why;                                                                         \
  } while (0)

/// The fixture's weight w (collective.c).
const float kW[8] = {0.5f, -1, 2, -0.25f, 0, 1, -2, 0.75f};

std::vector<float> values(int n, int rank, int run) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    v[i] = static_cast<float>((i * 7 + rank * 13 + run * 5) % 23) / 4 - 2.5f;
  return v;
}

nncc::Tensor wrap(std::vector<float> &v, std::vector<int64_t> dims) {
  return nncc::Tensor::wrap(v.data(), nncc::DType::f32, std::move(dims));
}

/// Runs `body(rank)` on one thread per rank, as the ranks of one process
/// must run: each rank's collectives wait for the others'. Returns each
/// rank's error ("" when none).
std::vector<std::string> together(int ranks, const std::function<void(int)> &body) {
  std::vector<std::string> errors(static_cast<size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (const nncc::Error &e) {
        errors[r] = e.what();
      }
    });
  for (std::thread &t : threads)
    t.join();
  return errors;
}

/// Rank r's inputs of run `run`: x, b.
std::vector<float> inputX(int r, int run) { return values(128, r, run); }
std::vector<float> inputB(int r, int run) { return values(5, r + 7, run); }

/// Checks rank r's outputs of entry "mean" against the mean of all `n`
/// ranks' x + w and b (every rank's inputs are known to every rank).
void expectMean(const nncc::TensorMap &out, int n, int r, int run) {
  for (int i = 0; i < 128; ++i) {
    float sum = 0;
    for (int q = 0; q < n; ++q)
      sum += inputX(q, run)[i] + kW[i % 8];
    ASSERT_FLOAT_EQ(out.at("y").data<float>()[i], sum / static_cast<float>(n))
        << "rank " << r << ", run " << run << ", y[" << i << "]";
  }
  for (int i = 0; i < 5; ++i) {
    float sum = 0;
    for (int q = 0; q < n; ++q)
      sum += inputB(q, run)[i];
    ASSERT_FLOAT_EQ(out.at("yb").data<float>()[i], sum / static_cast<float>(n))
        << "rank " << r << ", run " << run << ", yb[" << i << "]";
  }
}

struct Ranks {
  explicit Ranks(const char *module, const std::vector<int32_t> &devices)
      : mod(nncc::Module::load(fixturePath(module))), comms(nncc::Distributed::localGpus(devices)) {
    for (size_t r = 0; r < devices.size(); ++r) {
      nncc::SessionOptions options;
      options.distributed = comms[r];
      sessions.emplace_back(mod, nncc::Device::cuda(devices[r]), options);
    }
  }
  nncc::Module mod;
  std::vector<nncc::Distributed> comms;
  std::vector<nncc::Session> sessions;
};

/// Runs entry "mean" `runs` times on every rank (the first run eager, the
/// second captured into a CUDA Graph, the others replayed), new inputs each
/// time, and checks every rank's outputs against the mean of all ranks'.
void checkMean(Ranks &ranks, int runs) {
  int n = static_cast<int>(ranks.sessions.size());
  for (int run = 0; run < runs; ++run) {
    std::vector<nncc::TensorMap> out(n);
    std::vector<std::string> errors = together(n, [&](int r) {
      std::vector<float> x = inputX(r, run), b = inputB(r, run);
      out[r] = ranks.sessions[r].run("mean", {{"x", wrap(x, {16, 8})}, {"b", wrap(b, {5})}});
    });
    for (int r = 0; r < n; ++r)
      ASSERT_EQ(errors[r], "") << "rank " << r << ", run " << run;
    for (int r = 0; r < n; ++r)
      expectMean(out[r], n, r, run);
  }
}

// Two GPUs of one process: the kernel's results and an input, averaged over
// both ranks in one bucket, on every run (eager, captured, replayed).
TEST(Nccl, TwoLocalGpusAverageTheBucket) {
  SKIP_WITHOUT_GPUS(2);
  Ranks ranks(FIXTURE_COLLECTIVE_DP2_SO, {0, 1});
  EXPECT_EQ(ranks.comms[1].rank(), 1);
  EXPECT_EQ(ranks.comms[1].size(), 2);
  EXPECT_EQ(ranks.comms[0].backend(), "nccl");
  checkMean(ranks, 4);
}

TEST(Nccl, TwoLocalGpusSum) {
  SKIP_WITHOUT_GPUS(2);
  Ranks ranks(FIXTURE_COLLECTIVE_DP2_SO, {1, 0}); // rank 0 on cuda:1
  for (int run = 0; run < 3; ++run) {
    std::vector<std::vector<float>> x = {values(128, 0, run), values(128, 1, run)};
    std::vector<nncc::TensorMap> out(2);
    std::vector<std::string> errors =
        together(2, [&](int r) { out[r] = ranks.sessions[r].run("sum", {{"x", wrap(x[r], {16, 8})}}); });
    ASSERT_EQ(errors, (std::vector<std::string>{"", ""})) << "run " << run;
    for (int r = 0; r < 2; ++r)
      for (int i = 0; i < 128; ++i)
        ASSERT_FLOAT_EQ(out[r].at("s").data<float>()[i], x[0][i] + x[1][i]) << "rank " << r << ", s[" << i << "]";
  }
}

/// fixtures/single_collectives.c over the NCCL ranks of n GPUs of one
/// process (cuda:0 .. n-1), in sessions on those GPUs (NCCL's collectives)
/// or on the CPU (the ranks' host collectives): every rank's all-gather,
/// reduce-scatter and broadcast results, on every run (on GPUs eager,
/// captured, replayed).
void checkSingleCollectives(const char *module, int n, bool onGpus) {
  nncc::Module mod = nncc::Module::load(fixturePath(module));
  std::vector<int32_t> devices;
  for (int r = 0; r < n; ++r)
    devices.push_back(r);
  std::vector<nncc::Distributed> comms = nncc::Distributed::localGpus(devices);
  std::vector<std::optional<nncc::Session>> sessions(n);
  for (int r = 0; r < n; ++r) {
    nncc::SessionOptions options = onGpus ? nncc::SessionOptions() : nncc::SessionOptions(1);
    options.distributed = comms[r];
    sessions[r].emplace(mod, onGpus ? nncc::Device::cuda(r) : nncc::Device::cpu(), options);
  }
  for (int run = 0; run < 3; ++run) {
    std::vector<nncc::TensorMap> out(n);
    std::vector<std::string> errors = together(n, [&](int r) {
      std::vector<float> x = nncc::test::singleInput(r, run);
      out[r] = sessions[r]->run("step", {{"x", nncc::test::wrapSingleInput(x)}});
    });
    for (int r = 0; r < n; ++r)
      ASSERT_EQ(errors[r], "") << "rank " << r << ", run " << run;
    for (int r = 0; r < n; ++r)
      nncc::test::expectSingleCollectives(out[r], n, r, run);
  }
}

TEST(Nccl, SingleCollectivesTwoLocalGpus) {
  SKIP_WITHOUT_GPUS(2);
  checkSingleCollectives(FIXTURE_SINGLE_NP2_SO, 2, true);
}

// A world of one over NCCL: still ncclAllGather, ncclReduceScatter and
// ncclBroadcast, each the identity.
TEST(Nccl, SingleCollectivesOneGpuWorldOfOne) {
  SKIP_WITHOUT_GPUS(1);
  checkSingleCollectives(FIXTURE_SINGLE_NP1_SO, 1, true);
}

TEST(Nccl, SingleCollectivesCpuSessionsOverLocalRanks) {
  SKIP_WITHOUT_GPUS(2);
  checkSingleCollectives(FIXTURE_SINGLE_NP2_SO, 2, false);
}

// runtime.hostnccl.single-collectives-4gpus (four fake GPUs).
TEST(Nccl, SingleCollectivesFourLocalGpus) {
  SKIP_WITHOUT_GPUS(4);
  checkSingleCollectives(FIXTURE_SINGLE_NP4_SO, 4, true);
  checkSingleCollectives(FIXTURE_SINGLE_NP4_SO, 4, false);
}

// One GPU, a world of one over NCCL: still ncclAllReduce (and ncclAvg), the
// identity.
TEST(Nccl, OneGpuWorldOfOne) {
  SKIP_WITHOUT_GPUS(1);
  Ranks ranks(FIXTURE_COLLECTIVE_DP1_SO, {0});
  checkMean(ranks, 3);
}

// The host collectives of a one-process world meet across its threads.
TEST(Nccl, HostCollectivesOfLocalRanks) {
  SKIP_WITHOUT_GPUS(2);
  std::vector<nncc::Distributed> comms = nncc::Distributed::localGpus({0, 1});
  std::vector<std::vector<float>> data = {{1, 2, 3}, {5, 7, 11}};
  std::vector<std::vector<int>> ids = {{0, 0}, {4, 2}};
  std::vector<std::string> errors = together(2, [&](int r) {
    comms[r].allReduce(data[r].data(), 3, /*mean=*/true);
    comms[r].broadcast(ids[r].data(), sizeof(int) * 2, /*root=*/1);
    comms[r].barrier();
  });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(data[r], (std::vector<float>{3, 4.5f, 7})) << "rank " << r;
    EXPECT_EQ(ids[r], (std::vector<int>{4, 2})) << "rank " << r;
  }
}

// CPU sessions over the same ranks: their collective steps take the host
// collectives (a bucket packed, all-reduced across the threads, unpacked).
TEST(Nccl, CpuSessionsOverLocalRanks) {
  SKIP_WITHOUT_GPUS(2);
  nncc::Module mod = nncc::Module::load(fixturePath(FIXTURE_COLLECTIVE_DP2_SO));
  std::vector<nncc::Distributed> comms = nncc::Distributed::localGpus({0, 1});
  std::vector<std::optional<nncc::Session>> sessions(2);
  for (int r = 0; r < 2; ++r) {
    nncc::SessionOptions options{1};
    options.distributed = comms[r];
    sessions[r].emplace(mod, nncc::Device::cpu(), options);
  }
  for (int run = 0; run < 2; ++run) {
    std::vector<nncc::TensorMap> out(2);
    std::vector<std::string> errors = together(2, [&](int r) {
      std::vector<float> x = inputX(r, run), b = inputB(r, run);
      out[r] = sessions[r]->run("mean", {{"x", wrap(x, {16, 8})}, {"b", wrap(b, {5})}});
    });
    ASSERT_EQ(errors, (std::vector<std::string>{"", ""})) << "run " << run;
    for (int r = 0; r < 2; ++r)
      expectMean(out[r], 2, r, run);
  }
}

// dp=2 x tp=2 on four GPUs of one process: the NCCL world is split into
// the groups (ncclCommSplit), each collective step runs over its group's
// NCCL communicator, the sharded state is each rank's part, and reading it
// gathers the parts over the split group's host collectives. Every rank's
// input differs, so a wrong grouping gives other sums. (The CPU twin of this
// check runs under mpirun: TensorParallelMpiTest.cpp.)
TEST(NcclTensorParallel, FourLocalGpus) {
  SKIP_WITHOUT_GPUS(4);
  nncc::Module mod = nncc::Module::load(fixturePath(FIXTURE_TP_SO));
  std::vector<nncc::Distributed> comms = nncc::Distributed::localGpus({0, 1, 2, 3});
  std::vector<std::optional<nncc::Session>> sessions(4);
  auto x = [](int w) {
    std::vector<float> v(5);
    for (int i = 0; i < 5; ++i)
      v[i] = static_cast<float>((w + 1) * 10 + i) + 0.25f * static_cast<float>(w);
    return v;
  };
  std::vector<nncc::TensorMap> out(4), part(4);
  std::vector<nncc::Tensor> whole(4);
  std::vector<std::string> errors = together(4, [&](int w) {
    nncc::SessionOptions options{1};
    options.distributed = comms[w];
    sessions[w].emplace(mod, nncc::Device::cuda(w), options); // splits: all ranks at once
    std::vector<float> in = x(w);
    out[w] = sessions[w]->run("both", {{"x", wrap(in, {5})}});
    part[w] = sessions[w]->run("read_w", {});
    whole[w] = sessions[w]->state("w");
  });
  ASSERT_EQ(errors, (std::vector<std::string>(4, "")));
  for (int w = 0; w < 4; ++w) {
    int d = w / 2, t = w % 2;
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(out[w].at("s").data<float>()[i], x(2 * d)[i] + x(2 * d + 1)[i]) << "rank " << w << " s " << i;
      EXPECT_EQ(out[w].at("m").data<float>()[i], (x(t)[i] + x(2 + t)[i]) * 0.5f) << "rank " << w << " m " << i;
    }
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 3; ++j)
        EXPECT_EQ(part[w].at("w_part").data<float>()[i * 3 + j], 10 * i + 3 * t + j) << "rank " << w;
    for (int k = 0; k < 24; ++k)
      EXPECT_EQ(whole[w].data<float>()[k], 10 * (k / 6) + k % 6) << "rank " << w;
  }
}

// --- pipeline parallelism: fixtures/pipeline.c, send/recv steps over NCCL ---

constexpr int64_t kPpN = 262144;          // floats of one micro-batch (1 MiB)
constexpr int64_t kPpStateBytes = kPpN * 4; // w0 or w1

/// x f32[3, N] of run `run` and data index d: exact in f32, as are the
/// results (below 2^24).
std::vector<float> pipelineInput(int run, int d) {
  std::vector<float> x(3 * kPpN);
  for (int i = 0; i < 3; ++i)
    for (int64_t k = 0; k < kPpN; ++k)
      x[i * kPpN + k] = static_cast<float>(i * 1000 + run * 10 + d * 100) + 0.5f * static_cast<float>(k);
  return x;
}

nncc::Tensor wrapPipeline(std::vector<float> &x) { return nncc::Tensor::wrap(x.data(), nncc::DType::f32, {3, kPpN}); }

/// The first element where `got` (f32[3, N]) is not `want(k)`, or "".
template <typename Want> std::string firstMismatch(const float *got, Want want) {
  for (int64_t k = 0; k < 3 * kPpN; ++k)
    if (got[k] != want(k))
      return "element " + std::to_string(k) + ": " + std::to_string(got[k]) + ", expected " + std::to_string(want(k));
  return "";
}

/// Reads state `name` on every rank at once (a broadcast over the pipeline
/// group from its stage) and checks each rank got `value` everywhere.
void expectPipelineState(std::vector<nncc::Session> &sessions, const char *name, float value) {
  int n = static_cast<int>(sessions.size());
  std::vector<nncc::Tensor> got(n);
  std::vector<std::string> errors = together(n, [&](int r) { got[r] = sessions[r].state(name); });
  ASSERT_EQ(errors, std::vector<std::string>(n, "")) << "reading " << name;
  for (int r = 0; r < n; ++r)
    for (int64_t k = 0; k < kPpN; ++k)
      ASSERT_EQ(got[r].data<float>()[k], value) << "rank " << r << ", state " << name << "[" << k << "]";
}

std::string fileContents(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string testTmpDir(const char *name) {
  const char *tmp = std::getenv("NNCC_TEST_TMP_DIR"); // gpu-check.sh: a writable folder
  std::string dir = std::string(tmp && *tmp ? tmp : TEST_TMP_ROOT) + "/" + name;
  EXPECT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  return dir;
}

// pp=2 on two GPUs of one process: stage p on cuda:p, 1 MiB activations
// and gradients through ncclSend/ncclRecv in a 1F1B order whose sends, each
// alone in an NCCL group, would wait for each other forever. Every rank
// returns what the one-stage twin computes on the CPU, on every run (eager,
// captured into a CUDA Graph, replayed); each stage holds its own state
// only, and reads, checkpoints and writes of the other's go to its owner.
TEST(Nccl, PipelineTwoLocalGpus) {
  SKIP_WITHOUT_GPUS(2);
  Ranks ranks(FIXTURE_PP_SO, {0, 1});
  nncc::Module twinModule = nncc::Module::load(fixturePath(FIXTURE_PP_TWIN_SO));
  nncc::Session twin(twinModule, nncc::Device::cpu(), {1});
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(ranks.sessions[r].pipelineStage(), r);
    EXPECT_EQ(ranks.sessions[r].stateBytes(), kPpStateBytes) << "rank " << r; // w0 or w1, not both
  }
  for (int run = 0; run < 4; ++run) {
    std::vector<float> x = pipelineInput(run, 0);
    nncc::TensorMap want = twin.run("step", {{"x", wrapPipeline(x)}});
    std::vector<nncc::TensorMap> out(2);
    std::vector<std::string> errors =
        together(2, [&](int r) { out[r] = ranks.sessions[r].run("step", {{"x", wrapPipeline(x)}}); });
    ASSERT_EQ(errors, (std::vector<std::string>{"", ""})) << "run " << run;
    const float *ref = want.at("out").data<float>();
    // w0 = run on stage 0 and w1 = 2 run on stage 1 before this run.
    ASSERT_EQ(firstMismatch(ref, [&](int64_t k) { return 2.0f * (x[k] + run) + 2.0f * run; }), "") << "twin, run "
                                                                                                    << run;
    for (int r = 0; r < 2; ++r)
      ASSERT_EQ(firstMismatch(out[r].at("out").data<float>(), [&](int64_t k) { return ref[k]; }), "")
          << "rank " << r << ", run " << run;
  }
  // Each state reads as its owner's value on both ranks.
  expectPipelineState(ranks.sessions, "w0", 4);
  expectPipelineState(ranks.sessions, "w1", 8);
  // A checkpoint written at pp=2 is the twin's, bit for bit.
  std::string dir = testTmpDir("nccl-pipeline");
  std::vector<std::string> errors = together(2, [&](int r) {
    ranks.sessions[r].saveCheckpoint(dir + "/pp2." + std::to_string(r) + ".ckpt");
  });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  twin.saveCheckpoint(dir + "/twin.ckpt");
  EXPECT_EQ(fileContents(dir + "/pp2.0.ckpt"), fileContents(dir + "/twin.ckpt"));
  EXPECT_EQ(fileContents(dir + "/pp2.1.ckpt"), fileContents(dir + "/twin.ckpt"));
  // Writes: rank r writes 100 + r to w0 and 200 + r to w1; each state keeps
  // its owner's, and the next run uses them.
  for (int r = 0; r < 2; ++r) {
    std::vector<float> w0(kPpN, 100.0f + static_cast<float>(r)), w1(kPpN, 200.0f + static_cast<float>(r));
    ranks.sessions[r].setState("w0", nncc::Tensor::wrap(w0.data(), nncc::DType::f32, {kPpN}));
    ranks.sessions[r].setState("w1", nncc::Tensor::wrap(w1.data(), nncc::DType::f32, {kPpN}));
  }
  std::vector<float> x = pipelineInput(9, 0);
  std::vector<nncc::TensorMap> out(2);
  errors = together(2, [&](int r) { out[r] = ranks.sessions[r].run("step", {{"x", wrapPipeline(x)}}); });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(firstMismatch(out[r].at("out").data<float>(), [&](int64_t k) { return 2.0f * (x[k] + 100) + 201; }),
              "")
        << "rank " << r << " after the writes";
}

// A plan whose sends would wait for each other over NCCL (a kernel between
// each stage's send and its next receive, so each send is an NCCL group of
// its own) is refused when the session is made, naming the steps, instead of
// hanging on the GPU.
TEST(Nccl, PipelineOrderThatWouldHangIsRefused) {
  SKIP_WITHOUT_GPUS(2);
  nncc::Module mod = nncc::Module::load(fixturePath(FIXTURE_PP_BAD_NCCL_ORDER_SO));
  std::vector<nncc::Distributed> comms = nncc::Distributed::localGpus({0, 1});
  nncc::SessionOptions options;
  options.distributed = comms[1];
  try {
    nncc::Session s(mod, nncc::Device::cuda(1), options);
    FAIL() << "a send/recv order that deadlocks over NCCL was accepted";
  } catch (const nncc::Error &e) {
    EXPECT_EQ(e.status(), NNCC_ERROR_UNSUPPORTED);
    EXPECT_THAT(e.what(), HasSubstr("cuda:1: entry 'step': its sends and receives would wait for each other forever "
                                    "over NCCL"));
    EXPECT_THAT(e.what(), HasSubstr("stage 0 waits in step 3 ('send_a1') (a send) for stage 1, stage 1 waits in "
                                    "step 2 ('send_g0') (a send) for stage 0"));
  }
}

// A pp=2 module in a world of one GPU is refused, naming the layout.
TEST(Nccl, PipelineWorldSizeMustMatchTheModule) {
  SKIP_WITHOUT_GPUS(1);
  nncc::Module mod = nncc::Module::load(fixturePath(FIXTURE_PP_SO));
  std::vector<nncc::Distributed> comms = nncc::Distributed::localGpus({0});
  nncc::SessionOptions options;
  options.distributed = comms[0];
  try {
    nncc::Session s(mod, nncc::Device::cuda(0), options);
    FAIL() << "a pp:2 module opened in a world of one";
  } catch (const nncc::Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("was compiled for 2 pipeline-parallel ranks (--parallel=pp:2), but this "
                                    "session's world has 1 (nccl): run it under `mpirun -np 2`"));
  }
}

// dp=2 x pp=2 on four GPUs of one process: world rank w = d*2 + p, the
// pipeline groups {0, 1} and {2, 3} and the data groups {0, 2} and {1, 3}
// split from the NCCL world (ncclCommSplit). Stage 1 of data index d gets
// stage 0's activations of the same d, and every rank returns the mean over
// d; stages of mixed data indices, or a sum, give other numbers.
TEST(NcclPipeline, DataParallelFourLocalGpus) {
  SKIP_WITHOUT_GPUS(4);
  nncc::Module mod = nncc::Module::load(fixturePath(FIXTURE_PP_DP2_SO));
  std::vector<nncc::Distributed> comms = nncc::Distributed::localGpus({0, 1, 2, 3});
  std::vector<std::optional<nncc::Session>> sessions(4);
  std::vector<std::string> errors = together(4, [&](int w) {
    nncc::SessionOptions options{1};
    options.distributed = comms[w];
    sessions[w].emplace(mod, nncc::Device::cuda(w), options); // splits: all ranks at once
  });
  ASSERT_EQ(errors, std::vector<std::string>(4, ""));
  for (int w = 0; w < 4; ++w) {
    EXPECT_EQ(sessions[w]->pipelineStage(), w % 2);
    EXPECT_EQ(sessions[w]->stateBytes(), kPpStateBytes);
  }
  for (int run = 0; run < 3; ++run) {
    std::vector<nncc::TensorMap> out(4);
    std::vector<std::vector<float>> x(4);
    errors = together(4, [&](int w) {
      x[w] = pipelineInput(run, w / 2);
      out[w] = sessions[w]->run("step", {{"x", wrapPipeline(x[w])}});
    });
    ASSERT_EQ(errors, std::vector<std::string>(4, "")) << "run " << run;
    // mean over d of 2 (x_d + w0) + w1, x_1 = x_0 + 100.
    for (int w = 0; w < 4; ++w)
      ASSERT_EQ(firstMismatch(out[w].at("out").data<float>(),
                              [&](int64_t k) { return 2.0f * (x[0][k] + 50 + run) + 2.0f * run; }),
                "")
          << "rank " << w << ", run " << run;
  }
}

TEST(Nccl, SessionOnAnotherGpuIsRefused) {
  SKIP_WITHOUT_GPUS(2);
  nncc::Module mod = nncc::Module::load(fixturePath(FIXTURE_COLLECTIVE_DP2_SO));
  std::vector<nncc::Distributed> comms = nncc::Distributed::localGpus({0, 1});
  nncc::SessionOptions options;
  options.distributed = comms[0];
  try {
    nncc::Session s(mod, nncc::Device::cuda(1), options);
    FAIL() << "a session on cuda:1 took rank 0's communicator (cuda:0)";
  } catch (const nncc::Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("the communicator of rank 0 of 2 (nccl, cuda:0) drives cuda:0, but the "
                                    "session runs on cuda:1"));
  }
}

TEST(Nccl, DevicesAreChecked) {
  SKIP_WITHOUT_GPUS(1);
  int gpus = nncc_device_count("cuda");
  try {
    nncc::Distributed::localGpus({0, 0});
    FAIL() << "one GPU for two ranks was accepted";
  } catch (const nncc::Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("device cuda:0 is listed twice: each rank needs a GPU of its own"));
  }
  try {
    nncc::Distributed::localGpus({0, gpus});
    FAIL() << "cuda:" << gpus << " was accepted";
  } catch (const nncc::Error &e) {
    EXPECT_EQ(e.status(), NNCC_ERROR_UNAVAILABLE);
    EXPECT_THAT(e.what(), HasSubstr("device cuda:" + std::to_string(gpus) + " does not exist"));
  }
}

// A module for two ranks in a world of one is refused before anything runs.
TEST(Nccl, WorldSizeMustMatchTheModule) {
  SKIP_WITHOUT_GPUS(1);
  nncc::Module mod = nncc::Module::load(fixturePath(FIXTURE_COLLECTIVE_DP2_SO));
  std::vector<nncc::Distributed> comms = nncc::Distributed::localGpus({0});
  nncc::SessionOptions options;
  options.distributed = comms[0];
  try {
    nncc::Session s(mod, nncc::Device::cuda(0), options);
    FAIL() << "a dp:2 module opened in a world of one";
  } catch (const nncc::Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("compiled for 2 data-parallel ranks"));
    EXPECT_THAT(e.what(), HasSubstr("this session's world has 1 (nccl)"));
  }
}

// Many processes (runtime.hostnccl.mpi: mpirun -np 2, or 2 GPUs of one
// machine): each process one rank over MPI's world, its session on
// cuda:<rank>; rank 0's NCCL unique id reaches rank 1 over MPI.
TEST(NcclMpi, TwoProcesses) {
  if (!std::getenv("OMPI_COMM_WORLD_SIZE"))
    GTEST_SKIP() << "needs mpirun -np 2";
  SKIP_WITHOUT_GPUS(2);
  nncc::Distributed world = nncc::Distributed::fromMpi();
  ASSERT_EQ(world.size(), 2);
  int r = world.rank();
  nncc::Module mod = nncc::Module::load(fixturePath(FIXTURE_COLLECTIVE_DP2_SO));
  nncc::SessionOptions options;
  options.distributed = world;
  nncc::Session mean(mod, nncc::Device::cuda(r), options);
  nncc::Session sum(mod, nncc::Device::cuda(r), options);
  for (int run = 0; run < 4; ++run) {
    std::vector<float> x = inputX(r, run), b = inputB(r, run);
    nncc::TensorMap out = mean.run("mean", {{"x", wrap(x, {16, 8})}, {"b", wrap(b, {5})}});
    expectMean(out, 2, r, run);
    out = sum.run("sum", {{"x", wrap(x, {16, 8})}});
    for (int i = 0; i < 128; ++i)
      ASSERT_FLOAT_EQ(out.at("s").data<float>()[i], inputX(0, run)[i] + inputX(1, run)[i])
          << "rank " << r << ", run " << run << ", s[" << i << "]";
  }
}

// All-gather, reduce-scatter and broadcast steps as 2 or 4 processes
// (runtime.hostnccl.mpi-single-collectives-np*), each on cuda:<rank>.
TEST(NcclMpiSingleCollectives, Processes) {
  if (!std::getenv("OMPI_COMM_WORLD_SIZE"))
    GTEST_SKIP() << "needs mpirun -np 2 or 4";
  nncc::Distributed world = nncc::Distributed::fromMpi();
  int n = world.size(), r = world.rank();
  ASSERT_TRUE(n == 2 || n == 4);
  SKIP_WITHOUT_GPUS(n);
  nncc::Module mod = nncc::Module::load(fixturePath(n == 2 ? FIXTURE_SINGLE_NP2_SO : FIXTURE_SINGLE_NP4_SO));
  nncc::SessionOptions options;
  options.distributed = world;
  nncc::Session s(mod, nncc::Device::cuda(r), options);
  for (int run = 0; run < 3; ++run) {
    std::vector<float> x = nncc::test::singleInput(r, run);
    nncc::TensorMap out = s.run("step", {{"x", nncc::test::wrapSingleInput(x)}});
    nncc::test::expectSingleCollectives(out, n, r, run);
  }
}

// dp=2 x tp=2 as four processes (runtime.hostnccl.mpi-tensor-parallel:
// mpirun -np 4): each group's NCCL communicator is bootstrapped over its MPI
// group (MPI_Comm_split), each process on cuda:<rank>.
TEST(NcclMpiTensorParallel, FourProcesses) {
  if (!std::getenv("OMPI_COMM_WORLD_SIZE"))
    GTEST_SKIP() << "needs mpirun -np 4";
  SKIP_WITHOUT_GPUS(4);
  nncc::Distributed world = nncc::Distributed::fromMpi();
  ASSERT_EQ(world.size(), 4);
  int w = world.rank(), d = w / 2, t = w % 2;
  nncc::Module mod = nncc::Module::load(fixturePath(FIXTURE_TP_SO));
  nncc::SessionOptions options{1};
  options.distributed = world;
  nncc::Session s(mod, nncc::Device::cuda(w), options);
  auto x = [](int q) { return values(5, q, 0); };
  std::vector<float> in = x(w);
  nncc::TensorMap out = s.run("both", {{"x", wrap(in, {5})}});
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(out.at("s").data<float>()[i], x(2 * d)[i] + x(2 * d + 1)[i]) << "rank " << w << " s " << i;
    EXPECT_EQ(out.at("m").data<float>()[i], (x(t)[i] + x(2 + t)[i]) * 0.5f) << "rank " << w << " m " << i;
  }
  nncc::TensorMap part = s.run("read_w", {});
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(part.at("w_part").data<float>()[i * 3 + j], 10 * i + 3 * t + j) << "rank " << w;
  nncc::Tensor whole = s.state("w");
  for (int k = 0; k < 24; ++k)
    EXPECT_EQ(whole.data<float>()[k], 10 * (k / 6) + k % 6) << "rank " << w;
}

// pp=2 as two processes (runtime.hostnccl.mpi-pipeline: mpirun -np 2): the
// pipeline group's NCCL communicator bootstrapped over MPI's world, each
// process on cuda:<rank>; state reads broadcast over MPI.
TEST(NcclMpiPipeline, TwoProcesses) {
  if (!std::getenv("OMPI_COMM_WORLD_SIZE"))
    GTEST_SKIP() << "needs mpirun -np 2";
  SKIP_WITHOUT_GPUS(2);
  nncc::Distributed world = nncc::Distributed::fromMpi();
  ASSERT_EQ(world.size(), 2);
  int r = world.rank();
  nncc::Module mod = nncc::Module::load(fixturePath(FIXTURE_PP_SO));
  nncc::SessionOptions options;
  options.distributed = world;
  nncc::Session s(mod, nncc::Device::cuda(r), options);
  EXPECT_EQ(s.pipelineStage(), r);
  EXPECT_EQ(s.stateBytes(), kPpStateBytes);
  for (int run = 0; run < 3; ++run) {
    std::vector<float> x = pipelineInput(run, 0);
    nncc::TensorMap out = s.run("step", {{"x", wrapPipeline(x)}});
    ASSERT_EQ(firstMismatch(out.at("out").data<float>(), [&](int64_t k) { return 2.0f * (x[k] + run) + 2.0f * run; }),
              "")
        << "rank " << r << ", run " << run;
  }
  for (auto [name, value] : {std::pair{"w0", 3.0f}, {"w1", 6.0f}}) {
    nncc::Tensor t = s.state(name);
    for (int64_t k = 0; k < kPpN; ++k)
      ASSERT_EQ(t.data<float>()[k], value) << "rank " << r << ", state " << name << "[" << k << "]";
  }
  world.barrier();
}

/// Runs `command` with the shell, its standard error into its output;
/// returns the exit status.
int runCommand(const std::string &command, std::string *output) {
  std::FILE *p = popen((command + " 2>&1").c_str(), "r");
  if (!p)
    return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0)
    output->append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// `values` as a 1-D f32 .npy file.
void writeNpy(const std::string &path, const std::vector<float> &values) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(values.size()) + ",), }";
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  f.write(reinterpret_cast<const char *>(&len), 2);
  f << header;
  f.write(reinterpret_cast<const char *>(values.data()), static_cast<std::streamsize>(values.size() * 4));
}

// nncc-run --train --devices: one session per GPU on threads of one process;
// the loss of step k is the mean of the ranks' samples 2k and 2k + 1.
TEST(Nccl, NnccRunTrainsOnTwoDevices) {
  SKIP_WITHOUT_GPUS(2);
  const char *env = std::getenv("NNCC_TEST_NNCC_RUN"); // gpu-check.sh: the bundle's
  std::string exe = env && *env ? env : NNCC_RUN_EXE;
  if (!std::ifstream(exe).good())
    GTEST_SKIP() << exe << " is not on this machine";
  const char *tmp = std::getenv("NNCC_TEST_TMP_DIR"); // gpu-check.sh: a writable folder
  std::string dir = std::string(tmp && *tmp ? tmp : TEST_TMP_ROOT) + "/nccl-train";
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  writeNpy(dir + "/x.npy", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  std::string module = fixturePath(FIXTURE_COLLECTIVE_DP2_SO), out;
  std::string cmd = exe + " " + module + " --train --data " + dir +
                    " --steps 6 --devices cuda:0,cuda:1 --loss-file " + dir + "/loss.txt";
  ASSERT_EQ(runCommand(cmd, &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("entry 'train_step' on cuda:0,cuda:1 (one process, 2 ranks over NCCL)"));
  EXPECT_THAT(out, HasSubstr("training: 6 steps of batch 2 (2 data-parallel ranks of 1) (10 samples, 5 batches "
                             "per epoch)"));
  EXPECT_EQ(out.find("training:"), out.rfind("training:")) << "printed by more than rank 0:\n" << out;
  std::ifstream losses(dir + "/loss.txt");
  std::vector<float> got;
  for (float v; losses >> v;)
    got.push_back(v);
  // 5 global batches per epoch: step 6 wraps to the first.
  EXPECT_EQ(got, (std::vector<float>{0.5f, 2.5f, 4.5f, 6.5f, 8.5f, 0.5f}));

  // A dp:2 module on one device is refused, naming both sizes.
  out.clear();
  EXPECT_EQ(runCommand(exe + " " + module + " --train --data " + dir +
                           " --steps 1 --devices cuda:1",
                       &out),
            1);
  EXPECT_THAT(out, HasSubstr("compiled for 2 data-parallel ranks"));
  EXPECT_THAT(out, HasSubstr("this session's world has 1 (nccl)"));
}

// mpirun -np 2 nncc-run --device cuda --train: each rank on cuda:<local
// rank>, NCCL's unique id over MPI; the same losses as --devices.
TEST(Nccl, NnccRunTrainsUnderMpirun) {
  SKIP_WITHOUT_GPUS(2);
  if (!kHostCuda || std::string(NNCC_MPIRUN).empty())
    GTEST_SKIP() << "needs the host fixtures and mpirun";
  std::string dir = std::string(TEST_TMP_ROOT) + "/nccl-mpirun";
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  writeNpy(dir + "/x.npy", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  std::string out;
  std::string cmd = "NNCC_FAKE_NCCL_DIR=" + dir + " " + NNCC_MPIRUN +
                    " --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none -np 2 " +
                    NNCC_RUN_EXE + " " + fixturePath(FIXTURE_COLLECTIVE_DP2_SO) + " --device cuda --train --data " +
                    dir + " --steps 6 --loss-file " + dir + "/loss.txt";
  ASSERT_EQ(runCommand(cmd, &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("entry 'train_step' on cuda:0")); // rank 0's; rank 1 prints nothing
  std::ifstream losses(dir + "/loss.txt");
  std::vector<float> got;
  for (float v; losses >> v;)
    got.push_back(v);
  EXPECT_EQ(got, (std::vector<float>{0.5f, 2.5f, 4.5f, 6.5f, 8.5f, 0.5f}));
}

// --- failures, each a process of its own (CMakeLists.txt) ---

/// NNCC_FAKE_NCCL_FAIL=allreduce: ncclAllReduce fails when called; =async:
/// NCCL reports the failure afterwards (ncclCommGetAsyncError); =hang: so,
/// while its kernel never ends: the run's wait sees the error, aborts the
/// communicator and fails, and the next run says why it cannot run.
TEST(NcclFailure, RunFailsNamingTheStep) {
  const char *mode = std::getenv("NNCC_FAKE_NCCL_FAIL");
  if (!kHostCuda || !mode)
    GTEST_SKIP() << "needs the host fixtures and NNCC_FAKE_NCCL_FAIL";
  Ranks ranks(FIXTURE_COLLECTIVE_DP2_SO, {0, 1});
  std::vector<std::string> errors = together(2, [&](int r) {
    std::vector<float> x = inputX(r, 0), b = inputB(r, 0);
    ranks.sessions[r].run("mean", {{"x", wrap(x, {16, 8})}, {"b", wrap(b, {5})}});
  });
  for (int r = 0; r < 2; ++r) {
    std::string rank = "rank " + std::to_string(r) + " of 2 (nccl, cuda:" + std::to_string(r) + ")";
    if (std::string(mode) == "allreduce") {
      EXPECT_THAT(errors[r], HasSubstr("cuda:" + std::to_string(r) + ": entry 'mean' step 1 "
                                       "('all_reduce_bucket_0') (" + rank + "): ncclAllReduce failed: "
                                       "unhandled system error (run with NCCL_DEBUG=INFO for details) "
                                       "(ncclSystemError)"));
    } else {
      std::string failed = "cuda:" + std::to_string(r) + ": entry 'mean' (" + rank +
                           "): a collective step failed: remote process exited or there was a network error "
                           "(ncclRemoteError)";
      EXPECT_THAT(errors[r], HasSubstr(failed));
      if (std::string(mode) == "hang")
        EXPECT_THAT(errors[r], HasSubstr(failed + "; the NCCL communicator was aborted"));
      else
        EXPECT_THAT(errors[r], ::testing::Not(HasSubstr("aborted")));
    }
  }
  if (std::string(mode) != "hang")
    return;
  errors = together(2, [&](int r) {
    std::vector<float> x = inputX(r, 1), b = inputB(r, 1);
    ranks.sessions[r].run("mean", {{"x", wrap(x, {16, 8})}, {"b", wrap(b, {5})}});
  });
  for (int r = 0; r < 2; ++r)
    EXPECT_THAT(errors[r], HasSubstr("cuda:" + std::to_string(r) + ": entry 'mean' step 1 ('all_reduce_bucket_0'): "
                                     "the NCCL communicator of rank " + std::to_string(r) + " of 2 (nccl, cuda:" +
                                     std::to_string(r) + ") was aborted after an earlier error"));
}

/// The same for send/recv steps (fixtures/pipeline.c, pp=2): with
/// NNCC_FAKE_NCCL_FAIL=async or hang the stages' ncclSend/ncclRecv fail
/// when they run, every rank's run fails naming the entry and the rank (and
/// with hang aborts the communicators), and the next run says why it cannot
/// run. =allreduce fails all-reduces only: the pipeline (whose data mean is
/// over a group of one) runs.
TEST(NcclFailure, PipelineRunFailsNamingTheEntry) {
  const char *mode = std::getenv("NNCC_FAKE_NCCL_FAIL");
  if (!kHostCuda || !mode)
    GTEST_SKIP() << "needs the host fixtures and NNCC_FAKE_NCCL_FAIL";
  Ranks ranks(FIXTURE_PP_SO, {0, 1});
  std::vector<float> x = pipelineInput(0, 0);
  std::vector<std::string> errors =
      together(2, [&](int r) { ranks.sessions[r].run("step", {{"x", wrapPipeline(x)}}); });
  if (std::string(mode) == "allreduce") {
    EXPECT_EQ(errors, (std::vector<std::string>{"", ""}));
    return;
  }
  for (int r = 0; r < 2; ++r) {
    std::string failed = "cuda:" + std::to_string(r) + ": entry 'step' (rank " + std::to_string(r) +
                         " of 2 (nccl, cuda:" + std::to_string(r) +
                         ")): a collective step failed: remote process exited or there was a network error "
                         "(ncclRemoteError)";
    EXPECT_THAT(errors[r], HasSubstr(failed));
    if (std::string(mode) == "hang") {
      EXPECT_THAT(errors[r], HasSubstr(failed + "; the NCCL communicator was aborted"));
    }
  }
  if (std::string(mode) != "hang")
    return;
  errors = together(2, [&](int r) { ranks.sessions[r].run("step", {{"x", wrapPipeline(x)}}); });
  EXPECT_THAT(errors[0], HasSubstr("cuda:0: entry 'step' step 1 ('send_a0'): the NCCL communicator of rank 0 of 2 "
                                   "(nccl, cuda:0) was aborted after an earlier error"));
  EXPECT_THAT(errors[1], HasSubstr("cuda:1: entry 'step' step 0 ('recv_a0'): the NCCL communicator of rank 1 of 2 "
                                   "(nccl, cuda:1) was aborted after an earlier error"));
}

/// NNCC_NCCL_LIBRARY pointing nowhere: UNAVAILABLE, naming what was tried.
TEST(NcclMissing, SaysWhatWasTried) {
  const char *lib = std::getenv("NNCC_NCCL_LIBRARY");
  if (!kHostCuda || !lib || std::string(lib).find("/nonexistent/") == std::string::npos)
    GTEST_SKIP() << "needs the host fixtures and NNCC_NCCL_LIBRARY=/nonexistent/...";
  try {
    nncc::Distributed::localGpus({0, 1});
    FAIL() << "a communicator without NCCL";
  } catch (const nncc::Error &e) {
    EXPECT_EQ(e.status(), NNCC_ERROR_UNAVAILABLE);
    EXPECT_THAT(e.what(), HasSubstr("no NCCL found (tried " + std::string(lib) +
                                    " (not found)); collective steps on a GPU need it"));
    EXPECT_THAT(e.what(), HasSubstr("set NNCC_NCCL_LIBRARY"));
  }
}

} // namespace
