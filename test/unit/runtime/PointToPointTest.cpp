//===- PointToPointTest.cpp - send/recv orders over NCCL's rendezvous -----===//
//
// checkPointToPointOrder on the orders nncc-pipeline-parallel emits (GPipe
// forward, 1F1B train_step, the last stage's results sent to every other
// stage; passes/PipelineParallel.cpp) for 2 to 4 stages and 1 to 8
// micro-batches: every one runs to its end with consecutive send/recv steps
// in one NCCL group. The same order with a kernel between each send and the
// receive after it (each send a group of its own) would hang, and is
// refused naming where each stage waits.
#include "../../../runtime/dist/PointToPoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace {

using ::testing::HasSubstr;
using nncc::rt::checkPointToPointOrder;
using nncc::rt::pointToPointRuns;

constexpr int64_t kBytes = 1024;

/// The steps of one stage's variant: kernels, sends and receives.
struct StagePlan {
  std::deque<std::array<int64_t, NNCC_COLLECTIVE_NUM_IPARAMS>> iparams; // stable addresses
  std::deque<std::string> names;
  nncc_buffer_ref buffer{NNCC_BUFFER_ARENA, 0, 0, kBytes};
  std::vector<nncc_step> steps;
  bool kernelAfterSend = false; // the broken variant: a kernel after every send

  void kernel(const std::string &name) {
    names.push_back(name);
    nncc_step st{};
    st.kind = NNCC_STEP_KERNEL;
    st.num_args = 1;
    st.args = &buffer;
    st.name = names.back().c_str();
    steps.push_back(st);
  }
  void p2p(bool send, int64_t peer, int64_t stages, const std::string &name) {
    iparams.push_back({send ? NNCC_COLLECTIVE_SEND : NNCC_COLLECTIVE_RECV, 0, 0, stages, NNCC_GROUP_PIPELINE, peer});
    names.push_back(name);
    nncc_step st{};
    st.kind = NNCC_STEP_COLLECTIVE;
    st.num_args = 1;
    st.args = &buffer;
    st.num_iparams = NNCC_COLLECTIVE_NUM_IPARAMS;
    st.iparams = iparams.back().data();
    st.name = names.back().c_str();
    steps.push_back(st);
    if (send && kernelAfterSend)
      kernel("after_" + name);
  }
};

/// passes/PipelineParallel.cpp's oneForwardOneBackward.
std::vector<std::pair<bool, int>> oneForwardOneBackward(int s, int stages, int microBatches) {
  int warmup = std::min(stages - s - 1, microBatches);
  std::vector<std::pair<bool, int>> order;
  int f = 0, b = 0;
  for (; f < warmup; ++f)
    order.push_back({true, f});
  for (; f < microBatches; ++f, ++b) {
    order.push_back({true, f});
    order.push_back({false, b});
  }
  for (; b < microBatches; ++b)
    order.push_back({false, b});
  return order;
}

/// A module of `stages` stages and one entry, "train_step" (1F1B) or
/// "forward" (GPipe), in the order the compiler emits them.
struct Pipeline {
  std::vector<StagePlan> stages;
  std::vector<nncc_entry> entries;
  nncc_plan plan{};
  nncc_module module{};

  Pipeline(int P, int M, bool train, bool kernelAfterSend) : stages(static_cast<size_t>(P)) {
    for (int s = 0; s < P; ++s) {
      StagePlan &st = stages[s];
      st.kernelAfterSend = kernelAfterSend;
      std::vector<std::pair<bool, int>> order;
      for (int i = 0; i < M; ++i)
        order.push_back({true, i});
      if (train)
        order = oneForwardOneBackward(s, P, M);
      for (auto [forward, i] : order) {
        std::string mb = std::to_string(i);
        if (forward) {
          if (s > 0)
            st.p2p(false, s - 1, P, "recv_x" + mb);
          st.kernel("forward" + mb);
          if (s + 1 < P)
            st.p2p(true, s + 1, P, "send_y" + mb);
        } else {
          if (s + 1 < P)
            st.p2p(false, s + 1, P, "recv_dy" + mb);
          st.kernel("backward" + mb);
          if (s > 0)
            st.p2p(true, s - 1, P, "send_dx" + mb);
        }
      }
      if (train)
        st.kernel("optimizer");
      // The last stage's results go to every other stage.
      for (int q = 0; q + 1 < P; ++q)
        if (s + 1 == P)
          st.p2p(true, q, P, "send_results" + std::to_string(q));
      if (s + 1 < P)
        st.p2p(false, P - 1, P, "recv_results");
    }
    for (int s = 0; s < P; ++s) {
      nncc_entry e{};
      e.name = train ? "train_step" : "forward";
      e.num_steps = static_cast<int32_t>(stages[s].steps.size());
      e.steps = stages[s].steps.data();
      e.pipeline_stage = s;
      entries.push_back(e);
    }
    plan = {NNCC_DEVICE_CUDA, P, entries.data()};
    module.pipeline_parallel = P;
    module.data_parallel = module.tensor_parallel = 1;
  }
};

TEST(PointToPoint, RunsOfConsecutiveSendsAndReceives) {
  Pipeline pp(2, 3, /*train=*/true, /*kernelAfterSend=*/false);
  // Stage 0: forward0 send_y0 forward1 send_y1 recv_dy0 backward0 ...
  std::vector<int32_t> runs = pointToPointRuns(pp.entries[0]);
  ASSERT_EQ(pp.stages[0].steps[3].name, std::string("send_y1"));
  EXPECT_EQ(runs[0], -1);
  EXPECT_EQ(runs[1], 2); // send_y0 alone
  EXPECT_EQ(runs[3], 5); // send_y1 with recv_dy0
  EXPECT_EQ(runs[4], 0);
}

TEST(PointToPoint, TheCompilersOrdersRunOverNccl) {
  for (int P = 2; P <= 4; ++P)
    for (int M = 1; M <= 8; ++M)
      for (bool train : {false, true}) {
        Pipeline pp(P, M, train, false);
        nncc::rt::Status s = checkPointToPointOrder(pp.module, pp.plan, "cuda:0");
        EXPECT_TRUE(s.isOk()) << "pp=" << P << ", " << M << " micro-batches, " << (train ? "1F1B" : "GPipe") << ": "
                              << s.message();
      }
}

TEST(PointToPoint, SendsEachAloneWouldHang) {
  Pipeline pp(2, 3, /*train=*/true, /*kernelAfterSend=*/true);
  nncc::rt::Status s = checkPointToPointOrder(pp.module, pp.plan, "cuda:1");
  EXPECT_EQ(s.code(), NNCC_ERROR_UNSUPPORTED);
  EXPECT_THAT(s.message(), HasSubstr("cuda:1: entry 'train_step': its sends and receives would wait for each other "
                                     "forever over NCCL"));
  EXPECT_THAT(s.message(), HasSubstr("stage 0 waits in step 4 ('send_y1') (a send) for stage 1, stage 1 waits in "
                                     "step 3 ('send_dx0') (a send) for stage 0"));
  // GPipe's forward sends only one way: it runs either way.
  Pipeline forward(3, 4, /*train=*/false, /*kernelAfterSend=*/true);
  EXPECT_TRUE(checkPointToPointOrder(forward.module, forward.plan, "cuda:0").isOk());
}

TEST(PointToPoint, UnpairedOrMismatchedMessagesAreInvalid) {
  Pipeline pp(2, 2, /*train=*/false, false);
  pp.stages[1].steps.pop_back(); // the last stage's result, not sent
  pp.entries[1].num_steps = static_cast<int32_t>(pp.stages[1].steps.size());
  nncc::rt::Status s = checkPointToPointOrder(pp.module, pp.plan, "cuda:0");
  EXPECT_EQ(s.code(), NNCC_ERROR_INVALID_MODULE);
  EXPECT_THAT(s.message(), HasSubstr("pipeline stage 1 sends 0 buffers to stage 0, which receives 1 from it"));

  Pipeline sized(2, 2, /*train=*/false, false);
  nncc_buffer_ref small{NNCC_BUFFER_ARENA, 0, 0, kBytes / 2};
  sized.stages[1].steps[0].args = &small; // recv_x0
  s = checkPointToPointOrder(sized.module, sized.plan, "cuda:0");
  EXPECT_EQ(s.code(), NNCC_ERROR_INVALID_MODULE);
  EXPECT_THAT(s.message(), HasSubstr("stage 0's step 1 ('send_y0') sends 1024 bytes, but stage 1's step 0 "
                                     "('recv_x0'), its receive, takes 512"));
}

} // namespace
