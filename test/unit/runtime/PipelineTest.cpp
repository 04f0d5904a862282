//===- PipelineTest.cpp - a pipeline-parallel module in one process -------===//
//
// What needs no MPI: the entry listing of fixtures/pipeline.c (each name
// once, each stage's steps on request), the one-rank twin's numbers, and a
// world of one refused by the pp=2 module. PipelineMpiTest.cpp runs it.
#include "nncc/runtime.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using ::testing::HasSubstr;

namespace {

TEST(Pipeline, ListsEachEntryOnceAndEveryStagesSteps) {
  nncc::Module m = nncc::Module::load(FIXTURE_PP_SO);
  nncc::Module::Parallel layout = m.parallel();
  EXPECT_EQ(layout.pipeline, 2);
  EXPECT_EQ(layout.worldSize(), 2);
  ASSERT_EQ(nncc_module_num_entries(m.handle()), 1);
  EXPECT_EQ(m.entry("step").index, 0);
  EXPECT_EQ(m.steps("step")[1].name, "send_a0");
  EXPECT_EQ(m.steps("step", "cpu", 1)[0].name, "recv_a0");
  EXPECT_EQ(nncc_module_stage_num_steps(m.handle(), "cpu", 0, 1), 11);
  EXPECT_EQ(nncc_module_stage_num_steps(m.handle(), "cpu", 0, 2), -1);
  nncc_step_info info;
  EXPECT_EQ(nncc_module_stage_step_info(m.handle(), "cpu", 0, 2, 0, &info), NNCC_ERROR_NOT_FOUND);
  EXPECT_THAT(nncc_last_error(), HasSubstr("pipeline stage 2 out of range (the module has 2)"));
}

TEST(Pipeline, WorldOfOneRefused) {
  nncc::Module m = nncc::Module::load(FIXTURE_PP_SO);
  try {
    nncc::Session s(m, nncc::Device::cpu(), {1});
    FAIL() << "a pp=2 module opened by one rank";
  } catch (const nncc::Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("was compiled for 2 pipeline-parallel ranks (--parallel=pp:2), but this "
                                    "session's world has 1 (self): run it under `mpirun -np 2`"));
  }
}

TEST(Pipeline, TwinComputesBothStages) {
  nncc::Module m = nncc::Module::load(FIXTURE_PP_TWIN_SO);
  nncc::Session s(m, nncc::Device::cpu(), {1});
  EXPECT_EQ(s.pipelineStage(), 0);
  constexpr int64_t n = 262144;
  EXPECT_EQ(s.stateBytes(), 2 * n * 4); // one stage holds w0 and w1
  std::vector<float> x(3 * n, 1.5f);
  for (float w : {0.0f, 1.0f}) {
    nncc::TensorMap out = s.run("step", {{"x", nncc::Tensor::wrap(x.data(), nncc::DType::f32, {3, n})}});
    EXPECT_EQ(out.at("out").data<float>()[3 * n - 1], 2.0f * (1.5f + w) + 2.0f * w);
  }
}

} // namespace
