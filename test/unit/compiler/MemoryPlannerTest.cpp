/// Randomized tests of the arena packer: random DAG schedules with random
/// buffer sizes; every plan must keep simultaneously live buffers apart and
/// stay within reach of the lower bound.
#include "lib/Target/MemoryPlanner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

namespace {

/// Live ranges of a random DAG executed in index order: node i is defined at
/// step i and lives until its last consumer (or the end, for outputs).
std::vector<nncc::LiveBuffer> randomSchedule(std::mt19937 &rng, int nodes) {
  std::vector<nncc::LiveBuffer> buffers(nodes);
  std::uniform_int_distribution<int64_t> size(1, 1 << 16);
  for (int i = 0; i < nodes; ++i) {
    buffers[i].bytes = rng() % 4 == 0 ? size(rng) * 16 : size(rng);
    buffers[i].begin = buffers[i].end = i;
    int inputs = 1 + rng() % 3;
    for (int k = 0; k < inputs && i > 0; ++k) {
      // Mostly recent producers, sometimes a long skip connection.
      int back = rng() % 5 == 0 ? rng() % i : rng() % std::min(i, 4);
      int producer = i - 1 - back;
      buffers[producer].end = std::max<int64_t>(buffers[producer].end, i);
    }
  }
  for (int i = 0; i < nodes; ++i)
    if (rng() % 10 == 0)
      buffers[i].end = nodes; // a graph output, live to the end
  return buffers;
}

TEST(MemoryPlanner, RandomDagsNeverOverlapLiveBuffers) {
  std::mt19937 rng(2026);
  double worst = 1.0;
  for (int trial = 0; trial < 300; ++trial) {
    auto buffers = randomSchedule(rng, 2 + rng() % 120);
    nncc::ArenaLayout layout = nncc::packBuffers(buffers, 64);
    for (size_t i = 0; i < buffers.size(); ++i) {
      const auto &a = buffers[i];
      ASSERT_EQ(a.offset % 64, 0);
      ASSERT_GE(a.offset, 0);
      ASSERT_LE(a.offset + a.bytes, layout.arenaBytes);
      for (size_t j = i + 1; j < buffers.size(); ++j) {
        const auto &b = buffers[j];
        bool liveTogether = a.begin <= b.end && b.begin <= a.end;
        bool apart = a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset;
        ASSERT_TRUE(!liveTogether || apart)
            << "trial " << trial << ": buffers " << i << " and " << j << " overlap";
      }
    }
    ASSERT_GE(layout.arenaBytes, layout.liveLowerBound);
    ASSERT_LE(layout.arenaBytes, layout.noReuseBytes);
    worst = std::max(worst, (double)layout.arenaBytes / layout.liveLowerBound);
  }
  std::printf("worst arena / lower bound over 300 random DAGs: %.3f\n", worst);
  // Random DAGs are harder than model graphs (long skip connections
  // everywhere); the bound keeps regressions visible.
  EXPECT_LE(worst, 1.5);
}

TEST(MemoryPlanner, ChainReusesTwoBuffers) {
  // A chain a -> b -> c -> d of equal sizes needs only two buffers.
  std::vector<nncc::LiveBuffer> buffers{{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 3}};
  nncc::ArenaLayout layout = nncc::packBuffers(buffers, 64);
  EXPECT_EQ(layout.arenaBytes, 2 * 1024);
  EXPECT_EQ(layout.liveLowerBound, 2 * 1024);
  EXPECT_EQ(layout.noReuseBytes, 4 * 1024);
  EXPECT_EQ(buffers[0].offset, buffers[2].offset);
  EXPECT_NE(buffers[0].offset, buffers[1].offset);
}

TEST(MemoryPlanner, EmptyPlan) {
  std::vector<nncc::LiveBuffer> buffers;
  nncc::ArenaLayout layout = nncc::packBuffers(buffers, 64);
  EXPECT_EQ(layout.arenaBytes, 0);
  EXPECT_EQ(layout.liveLowerBound, 0);
}

} // namespace
