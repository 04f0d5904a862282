//===- CollectiveScheduleTest.cpp - where a run waits for a collective ----===//
#include "../../../runtime/dist/CollectiveSchedule.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace {

using nncc::rt::CollectiveSchedule;
using nncc::rt::scheduleCollectives;

nncc_buffer_ref arena(int64_t offset, int64_t bytes) { return {NNCC_BUFFER_ARENA, 0, offset, bytes}; }
nncc_buffer_ref ref(int32_t kind, int32_t index, int64_t offset, int64_t bytes) {
  return {kind, index, offset, bytes};
}

/// An entry of steps whose arguments are `args[s]`; `collective[s]` marks
/// the collective steps: all-reduces (inputs, then as many outputs), or
/// the nncc_collective_op `op[s]` when given.
struct Entry {
  std::vector<std::vector<nncc_buffer_ref>> args;
  std::vector<bool> collective;
  std::vector<int64_t> op;
  std::vector<nncc_step> steps;
  std::vector<std::array<int64_t, NNCC_COLLECTIVE_NUM_IPARAMS>> iparams;
  nncc_entry entry{};
  const nncc_entry &build() {
    steps.assign(args.size(), nncc_step{});
    iparams.assign(args.size(), {});
    for (size_t s = 0; s < args.size(); ++s) {
      steps[s].kind = collective[s] ? NNCC_STEP_COLLECTIVE : NNCC_STEP_KERNEL;
      steps[s].num_args = static_cast<int32_t>(args[s].size());
      steps[s].args = args[s].data();
      iparams[s][NNCC_COLLECTIVE_OP] = s < op.size() ? op[s] : int64_t{NNCC_COLLECTIVE_ALL_REDUCE};
      steps[s].num_iparams = NNCC_COLLECTIVE_NUM_IPARAMS;
      steps[s].iparams = iparams[s].data();
    }
    entry.num_steps = static_cast<int32_t>(steps.size());
    entry.steps = steps.data();
    return entry;
  }
};

std::vector<int32_t> waitsBefore(const CollectiveSchedule &c, int32_t s) {
  return {c.waits.begin() + c.waitsBegin[s], c.waits.begin() + c.waitsBegin[s + 1]};
}

// A bucket of two gradients in the arena: the steps after it that touch
// neither result (its inputs included: they are packed at the start) run
// while it is in flight; the first that reads any byte of a result waits.
TEST(CollectiveSchedule, WaitsBeforeTheFirstStepThatTouchesAResult) {
  Entry e;
  e.args = {{arena(0, 64), arena(64, 32)},                                  // 0: grads
            {arena(0, 64), arena(64, 32), arena(128, 64), arena(192, 32)},  // 1: all-reduce
            {arena(0, 96), arena(256, 64)},                                 // 2: reuses the inputs' bytes
            {arena(320, 64)},                                               // 3: elsewhere
            {arena(220, 8), arena(384, 8)},                                 // 4: last bytes of result 2
            {arena(128, 64)}};                                              // 5
  e.collective = {false, true, false, false, false, false};
  CollectiveSchedule c = scheduleCollectives(e.build());
  EXPECT_EQ(c.collectives, 1);
  EXPECT_EQ(c.slot, (std::vector<int32_t>{-1, 0, -1, -1, -1, -1}));
  EXPECT_EQ(c.stagingOffset[1], 0);
  EXPECT_EQ(c.stagingBytes, 128); // 96 bytes, rounded to cache lines
  for (int32_t s = 0; s <= 6; ++s)
    EXPECT_EQ(waitsBefore(c, s), s == 4 ? std::vector<int32_t>{1} : std::vector<int32_t>{}) << "step " << s;
}

// Results that are an entry output nobody reads later, or a state, are
// waited for at the end (or before the step touching the same state); an
// entry input or another output with the same offsets is another buffer.
TEST(CollectiveSchedule, EntryOutputsAndStates) {
  Entry e;
  e.args = {{arena(0, 4), ref(NNCC_BUFFER_OUTPUT, 0, 0, 4)},                // 0: the loss
            {arena(64, 16), ref(NNCC_BUFFER_STATE, 2, 16, 16)},             // 1: into state 2
            {ref(NNCC_BUFFER_OUTPUT, 1, 0, 4), ref(NNCC_BUFFER_INPUT, 0, 0, 64),
             ref(NNCC_BUFFER_STATE, 1, 16, 16), ref(NNCC_BUFFER_WEIGHT, 0, 0, 64)},
            {ref(NNCC_BUFFER_STATE, 2, 0, 17)}};                            // 3: one byte of state 2
  e.collective = {true, true, false, false};
  CollectiveSchedule c = scheduleCollectives(e.build());
  EXPECT_EQ(c.collectives, 2);
  EXPECT_EQ(c.stagingOffset[0], 0);
  EXPECT_EQ(c.stagingOffset[1], 64);
  EXPECT_EQ(c.stagingBytes, 128);
  EXPECT_EQ(waitsBefore(c, 3), std::vector<int32_t>{1});
  EXPECT_EQ(waitsBefore(c, 4), std::vector<int32_t>{0});
  for (int32_t s : {0, 1, 2})
    EXPECT_TRUE(waitsBefore(c, s).empty()) << "step " << s;
}

// Two buckets waited for at the same step, in the order they started.
TEST(CollectiveSchedule, SeveralBucketsAtOneStep) {
  Entry e;
  e.args = {{arena(0, 8), arena(8, 8)}, {arena(16, 8), arena(24, 8)}, {arena(28, 8), arena(12, 1)}};
  e.collective = {true, true, false};
  CollectiveSchedule c = scheduleCollectives(e.build());
  EXPECT_EQ(waitsBefore(c, 2), (std::vector<int32_t>{0, 1}));
  EXPECT_TRUE(waitsBefore(c, 3).empty());
}

// A pipeline stage's 1F1B order: sends (no outputs) are waited for at the
// end of the run only, whatever touches their buffers later (the staging
// copy is sent); a receive's own buffers are its outputs, waited for
// before the first step that reads or overwrites them. Both stage every
// buffer (k = num_args).
TEST(CollectiveSchedule, SendsWaitAtTheEndReceivesBeforeTheirFirstToucher) {
  constexpr int64_t S = NNCC_COLLECTIVE_SEND, R = NNCC_COLLECTIVE_RECV, K = 0;
  Entry e;
  e.args = {{arena(0, 64)},                 // 0: a0 = f(x0)
            {arena(0, 64)},                 // 1: send a0
            {arena(0, 64)},                 // 2: a1 = f(x1), over a0's bytes
            {arena(0, 64), arena(64, 32)},  // 3: send a1 and a second buffer
            {arena(128, 64)},               // 4: recv g0
            {arena(256, 8)},                // 5: elsewhere
            {arena(128, 8)},                // 6: reads g0
            {arena(192, 16)},               // 7: recv g1, never touched
            {arena(64, 32)}};               // 8: overwrites the sent buffer
  e.collective = {false, true, false, true, true, false, false, true, false};
  e.op = {K, S, K, S, R, K, K, R, K};
  CollectiveSchedule c = scheduleCollectives(e.build());
  EXPECT_EQ(c.collectives, 4);
  EXPECT_EQ(c.stagingOffset[3], 64);
  EXPECT_EQ(c.stagingOffset[4], 192); // 64 + 96 rounded up
  EXPECT_EQ(c.stagingOffset[7], 256);
  for (int32_t s = 0; s < 9; ++s)
    EXPECT_EQ(waitsBefore(c, s), s == 6 ? std::vector<int32_t>{4} : std::vector<int32_t>{}) << "step " << s;
  EXPECT_EQ(waitsBefore(c, 9), (std::vector<int32_t>{1, 3, 7}));
}

// No collective: nothing to stage or wait for.
TEST(CollectiveSchedule, NoCollectives) {
  Entry e;
  e.args = {{arena(0, 8)}};
  e.collective = {false};
  CollectiveSchedule c = scheduleCollectives(e.build());
  EXPECT_EQ(c.collectives, 0);
  EXPECT_EQ(c.stagingBytes, 0);
  EXPECT_TRUE(c.waits.empty());
}

} // namespace
