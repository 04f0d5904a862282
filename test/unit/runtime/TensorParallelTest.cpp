//===- TensorParallelTest.cpp - ABI v7's layout and sharded state, one rank ===//
//
// What needs no MPI: the verifier refuses inconsistent layouts, a dp=2 x
// tp=2 module is refused by a world of one naming its layout, the layout and
// whole state shapes are reported, and the one-rank twin of the fixture runs.
// The many-rank behavior is TensorParallelMpiTest.cpp's (under mpirun).
#include "nncc/runtime.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using ::testing::HasSubstr;

namespace {

std::string loadError(const char *path) {
  nncc_module_handle *m = nullptr;
  nncc_status s = nncc_module_load(path, &m);
  nncc_module_release(m);
  EXPECT_EQ(s, NNCC_ERROR_INVALID_MODULE) << path;
  return nncc_last_error();
}

TEST(TensorParallel, VerifierRejectsInconsistentLayouts) {
  EXPECT_THAT(loadError(FIXTURE_TP_BAD_GROUP_SIZE_SO),
              HasSubstr("entry 'both' step 0 ('tensor_sum'): its tensor group has 4 ranks, but the module's "
                        "layout dp=2 x tp=2 gives it 2"));
  EXPECT_THAT(loadError(FIXTURE_TP_BAD_GROUP_SO), HasSubstr("unknown parallel group 3 (1: data, 2: tensor)"));
  EXPECT_THAT(loadError(FIXTURE_TP_BAD_PARTS_SO),
              HasSubstr("state 'w' is split in 3 parts along axis 1, but a sharded state needs as many parts "
                        "as the module's tensor-parallel ranks (2)"));
  EXPECT_THAT(loadError(FIXTURE_TP_BAD_WEIGHT_SO),
              HasSubstr("state 'w' starts from weight 0, which is no weight of its whole (all parts') size"));
  EXPECT_THAT(loadError(FIXTURE_TP_BAD_LAYOUT_SO), HasSubstr("invalid parallel layout dp=0 x tp=2"));
}

TEST(TensorParallel, ReportsLayoutAndWholeStates) {
  nncc::Module m = nncc::Module::load(FIXTURE_TP_SO);
  EXPECT_EQ(m.parallel().data, 2);
  EXPECT_EQ(m.parallel().tensor, 2);
  EXPECT_EQ(m.parallel().worldSize(), 4);
  int32_t dp = 0, tp = 0;
  ASSERT_EQ(nncc_module_parallel(m.handle(), &dp, &tp), NNCC_OK);
  EXPECT_EQ(dp, 2);
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

} // namespace
