//===- TensorParallelTest.cpp - ABI v7's layout and sharded state, one rank ===//
//
// What needs no MPI: the verifier refuses inconsistent layouts, a dp=2 x
// tp=2 module is refused by a world of one naming its layout, the layout and
// whole state shapes are reported, and the one-rank twin of the fixture runs.
// The many-rank behavior is TensorParallelMpiTest.cpp's (under mpirun).
#include "TensorProto.h"
#include "TestUtil.h"
#include "nncc/runtime.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <sys/wait.h>

using ::testing::HasSubstr;

namespace {

TEST(TensorParallel, ReportsLayoutAndWholeStates) {
  nncc::Module m = nncc::Module::load(FIXTURE_TP_SO);
  EXPECT_EQ(m.parallel().data, 2);
  EXPECT_EQ(m.parallel().tensor, 2);
  EXPECT_EQ(m.parallel().worldSize(), 4);
  EXPECT_EQ(m.parallel().pipeline, 1);
  int32_t dp = 0, pp = 0, tp = 0;
  ASSERT_EQ(nncc_module_parallel(m.handle(), &dp, &pp, &tp), NNCC_OK);
  EXPECT_EQ(dp, 2);
  EXPECT_EQ(pp, 1);
  EXPECT_EQ(tp, 2);
  // The sharded state is reported whole: f32[4, 6], not a part's [4, 3].
  std::vector<nncc::TensorInfo> states = m.states();
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].name, "w");
  EXPECT_EQ(states[0].dims, (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(states[1].dims, (std::vector<int64_t>{3}));
  nncc::Module twin = nncc::Module::load(FIXTURE_TP_TWIN_SO);
  EXPECT_EQ(twin.parallel().worldSize(), 1);
  EXPECT_EQ(twin.states()[0].dims, (std::vector<int64_t>{4, 6}));
}

TEST(TensorParallel, WorldOfOneIsRefused) {
  nncc::Module m = nncc::Module::load(FIXTURE_TP_SO);
  try {
    nncc::Session s(m, nncc::Device::cpu(), {1});
    FAIL() << "a dp=2 x tp=2 module opened in a world of one";
  } catch (const nncc::Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("was compiled for 4 ranks (--parallel=dp:2,tp:2: 2 data- times 2 "
                                    "tensor-parallel), but this session's world has 1 (self): run it under "
                                    "`mpirun -np 4`"));
  }
}

// The twin (layout 1 x 1): its collectives are over groups of one, and its
// state starts from the whole weight.
TEST(TensorParallel, TwinRunsAlone) {
  nncc::Module m = nncc::Module::load(FIXTURE_TP_TWIN_SO);
  nncc::Session s(m, nncc::Device::cpu(), {1});
  std::vector<float> x = {1, 2, 3, 4, 5};
  nncc::TensorMap out = s.run("both", {{"x", nncc::Tensor::wrap(x.data(), nncc::DType::f32, {5})}});
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(out.at("s").data<float>()[i], x[i]);
    EXPECT_EQ(out.at("m").data<float>()[i], x[i]);
  }
  nncc::Tensor w = s.state("w");
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j)
      EXPECT_EQ(w.data<float>()[i * 6 + j], 10 * i + j);
}

struct ShellResult {
  int exitCode;
  std::string output; // stdout and stderr
};

ShellResult shell(const std::string &cmd, const std::string &dir) {
  std::string log = dir + "/log.txt";
  int status = std::system((cmd + " > " + log + " 2>&1").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, nncc::test::readFile(log)};
}

void writeFloats(const std::string &path, const std::string &name, std::vector<int64_t> dims,
                 const std::vector<float> &v) {
  nncc::tools::HostTensor t;
  t.name = name;
  t.dtype = NNCC_DTYPE_F32;
  t.dims = std::move(dims);
  t.data.resize(v.size() * 4);
  std::memcpy(t.data.data(), v.data(), t.data.size());
  std::string error;
  ASSERT_TRUE(nncc::tools::writeTensorProtoFile(path, t, &error)) << error;
}

TEST(TensorParallel, NnccRunInfoAndRefusal) {
  std::string dir = nncc::test::makeTempDir("tp_nncc_run");
  ShellResult info = shell(std::string(NNCC_RUN_EXE) + " " + FIXTURE_TP_SO + " --info", dir);
  EXPECT_EQ(info.exitCode, 0) << info.output;
  EXPECT_THAT(info.output, HasSubstr("parallel: dp=2 x tp=2 (run it as 4 ranks: mpirun -np 4"));
  EXPECT_THAT(info.output, HasSubstr("state: w f32[4,6], bias f32[3]"));
  writeFloats(dir + "/input_0.pb", "x", {5}, {1, 2, 3, 4, 5});
  ShellResult alone = shell(std::string(NNCC_RUN_EXE) + " " + FIXTURE_TP_SO + " --entry both --input-dir " + dir, dir);
  EXPECT_EQ(alone.exitCode, 1);
  EXPECT_THAT(alone.output, HasSubstr("this session's world has 1 (self): run it under `mpirun -np 4`"));
}

// nncc-run under mpirun -np 4: every rank reads the same x, so the tensor
// sum is 2x and the data mean x; rank 0 alone writes the outputs and the
// states, whole (the other ranks join its gathers of the sharded "w").
TEST(TensorParallel, NnccRunUnderMpirun) {
  if (std::string(NNCC_MPIRUN).empty())
    GTEST_SKIP() << "no mpirun (or no MPI backend)";
  std::string dir = nncc::test::makeTempDir("tp_nncc_run_mpi");
  writeFloats(dir + "/input_0.pb", "x", {5}, {1, 2, 3, 4, 5});
  mkdir((dir + "/out").c_str(), 0755);
  mkdir((dir + "/state").c_str(), 0755);
  // A rank that missed a gather would leave the others waiting: bounded.
  ShellResult r = shell("timeout 120 " + std::string(NNCC_MPIRUN) +
                    " --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none -np 4 " +
                    NNCC_RUN_EXE + " " + FIXTURE_TP_SO + " --entry both --threads 1 --input-dir " + dir +
                    " --output-dir " + dir + "/out --state-out " + dir + "/state",
                dir);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  nncc::tools::HostTensor s, m, w;
  std::string error;
  ASSERT_TRUE(nncc::tools::readTensorProtoFile(dir + "/out/output_0.pb", &s, &error)) << error;
  ASSERT_TRUE(nncc::tools::readTensorProtoFile(dir + "/out/output_1.pb", &m, &error)) << error;
  ASSERT_TRUE(nncc::tools::readTensorProtoFile(dir + "/state/state_0.pb", &w, &error)) << error;
  const float *sv = reinterpret_cast<const float *>(s.data.data()), *mv = reinterpret_cast<const float *>(m.data.data());
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(sv[i], 2.0f * static_cast<float>(i + 1)) << i;
    EXPECT_EQ(mv[i], static_cast<float>(i + 1)) << i;
  }
  ASSERT_EQ(w.dims, (std::vector<int64_t>{4, 6}));
  const float *wv = reinterpret_cast<const float *>(w.data.data());
  for (int k = 0; k < 24; ++k)
    EXPECT_EQ(wv[k], 10 * (k / 6) + k % 6) << k;
  // Only rank 0 printed.
  EXPECT_EQ(r.output.find("entry 'both'"), r.output.rfind("entry 'both'")) << r.output;
}

} // namespace
