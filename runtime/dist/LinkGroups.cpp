//===- LinkGroups.cpp -----------------------------------------------------===//
#include "LinkGroups.h"

#include <algorithm>
#include <numeric>

namespace nncc::rt {

namespace {

int64_t link(const std::vector<std::vector<int64_t>> &cost, int32_t a, int32_t b) {
  return std::max(cost[size_t(a)][size_t(b)], cost[size_t(b)][size_t(a)]);
}

/// Branch and bound over the partitions: `order` holds the groups so far
/// (the last one possibly open), `used` the devices in them.
struct Search {
  const std::vector<std::vector<int64_t>> &cost;
  int32_t n, size;
  std::vector<int32_t> order, best;
  std::vector<bool> used;
  int64_t bestCost;

  void extend(int64_t closedCost, int64_t openCost) {
    if (closedCost + openCost >= bestCost)
      return;
    if (int32_t(order.size()) == n) {
      bestCost = closedCost + openCost;
      best = order;
      return;
    }
    bool opening = order.size() % size_t(size) == 0;
    if (opening) {
      closedCost += openCost;
      openCost = 0;
    }
    // A new group starts with the lowest unused device; a member joins
    // after the group's last one (each group's members in increasing order).
    int32_t from = opening ? 0 : order.back() + 1;
    for (int32_t d = from; d < n; ++d) {
      if (used[size_t(d)])
        continue;
      int64_t worst = openCost;
      size_t head = order.size() - order.size() % size_t(size);
      for (size_t m = head; m < order.size(); ++m)
        worst = std::max(worst, link(cost, order[m], d));
      used[size_t(d)] = true;
      order.push_back(d);
      extend(closedCost, worst);
      order.pop_back();
      used[size_t(d)] = false;
      if (opening)
        break; // the lowest unused device heads the group
    }
  }
};

} // namespace

int64_t groupsCost(const std::vector<std::vector<int64_t>> &cost, const std::vector<int32_t> &order, int32_t size) {
  int64_t total = 0;
  for (size_t g = 0; g + size_t(size) <= order.size(); g += size_t(size)) {
    int64_t worst = 0;
    for (size_t a = g; a < g + size_t(size); ++a)
      for (size_t b = a + 1; b < g + size_t(size); ++b)
        worst = std::max(worst, link(cost, order[a], order[b]));
    total += worst;
  }
  return total;
}

std::vector<int32_t> bestLinkGroups(const std::vector<std::vector<int64_t>> &cost, int32_t size) {
  int32_t n = int32_t(cost.size());
  std::vector<int32_t> identity(size_t(n), 0);
  std::iota(identity.begin(), identity.end(), 0);
  if (size < 2 || n > 16 || n % size != 0)
    return identity;
  Search s{cost, n, size, {}, identity, std::vector<bool>(size_t(n), false), groupsCost(cost, identity, size)};
  s.extend(0, 0);
  return s.best;
}

} // namespace nncc::rt
