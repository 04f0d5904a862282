#include "lib/Target/MemoryPlanner.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <numeric>
#include <random>

namespace nncc {

namespace {

/// Places buffers in `order`, each at the offset of the smallest gap that
/// fits among the already placed buffers it overlaps in time (or on top).
int64_t placeInOrder(std::vector<LiveBuffer> &buffers, const std::vector<size_t> &order,
                     int64_t alignment) {
  auto align = [&](int64_t v) { return (v + alignment - 1) / alignment * alignment; };
  int64_t arena = 0;
  std::vector<size_t> placed;
  for (size_t i : order) {
    LiveBuffer &cur = buffers[i];
    int64_t need = align(cur.bytes);
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t j : placed) {
      const LiveBuffer &o = buffers[j];
      if (o.begin <= cur.end && cur.begin <= o.end)
        busy.push_back({o.offset, o.offset + align(o.bytes)});
    }
    std::sort(busy.begin(), busy.end());
    int64_t best = -1, bestGap = INT64_MAX, candidate = 0;
    for (auto [lo, hi] : busy) {
      if (lo - candidate >= need && lo - candidate < bestGap) {
        best = candidate;
        bestGap = lo - candidate;
      }
      candidate = std::max(candidate, hi);
    }
    cur.offset = best >= 0 ? best : candidate;
    placed.push_back(i);
    arena = std::max(arena, cur.offset + need);
  }
  return arena;
}

} // namespace

ArenaLayout packBuffers(std::vector<LiveBuffer> &buffers, int64_t alignment) {
  auto align = [&](int64_t v) { return (v + alignment - 1) / alignment * alignment; };
  ArenaLayout layout;
  for (const auto &b : buffers)
    layout.noReuseBytes += align(b.bytes);
  // Greedy placement is order-sensitive: try a few orders and keep the best.
  using Less = std::function<bool(const LiveBuffer &, const LiveBuffer &)>;
  const Less orders[] = {
      [](const LiveBuffer &a, const LiveBuffer &b) { return a.bytes > b.bytes; },
      [](const LiveBuffer &a, const LiveBuffer &b) {
        return a.bytes * (a.end - a.begin + 1) > b.bytes * (b.end - b.begin + 1);
      },
      [](const LiveBuffer &a, const LiveBuffer &b) {
        return a.end - a.begin != b.end - b.begin ? a.end - a.begin > b.end - b.begin
                                                  : a.bytes > b.bytes;
      },
      [](const LiveBuffer &a, const LiveBuffer &b) { return a.begin < b.begin; },
  };
  std::vector<int64_t> bestOffsets;
  layout.arenaBytes = INT64_MAX;
  auto tryOrder = [&](const std::vector<size_t> &order) {
    int64_t arena = placeInOrder(buffers, order, alignment);
    if (arena < layout.arenaBytes) {
      layout.arenaBytes = arena;
      bestOffsets.clear();
      for (const auto &b : buffers)
        bestOffsets.push_back(b.offset);
    }
  };
  std::vector<size_t> order(buffers.size());
  for (const Less &less : orders) {
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return less(buffers[a], buffers[b]); });
    tryOrder(order);
  }
  // Then perturb the size order: swap neighbours at random (seeded, so plans
  // are reproducible) while the result improves, within a budget that keeps
  // big graphs fast (placement is quadratic in the buffer count).
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return orders[0](buffers[a], buffers[b]); });
  std::mt19937 rng(12345);
  int64_t budget = buffers.size() <= 1 ? 0 : std::min<int64_t>(256, 4000000 / (int64_t)(buffers.size() * buffers.size()));
  for (int64_t trial = 0; trial < budget; ++trial) {
    std::vector<size_t> next = order;
    for (int swaps = 0; swaps < 3; ++swaps) {
      size_t i = rng() % (next.size() - 1);
      std::swap(next[i], next[i + 1 + rng() % std::min<size_t>(4, next.size() - 1 - i)]);
    }
    int64_t before = layout.arenaBytes;
    tryOrder(next);
    if (layout.arenaBytes < before)
      order = next;
  }
  if (buffers.empty())
    layout.arenaBytes = 0;
  for (size_t i = 0; i < buffers.size(); ++i)
    buffers[i].offset = bestOffsets[i];
  // Live bytes per step, by a sweep over begin/end events.
  std::map<int64_t, int64_t> delta;
  for (const auto &b : buffers) {
    delta[b.begin] += align(b.bytes);
    delta[b.end + 1] -= align(b.bytes);
  }
  int64_t live = 0;
  for (const auto &[step, d] : delta) {
    live += d;
    layout.liveLowerBound = std::max(layout.liveLowerBound, live);
  }
  return layout;
}

} // namespace nncc
