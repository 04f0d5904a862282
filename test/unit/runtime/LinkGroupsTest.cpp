//===- LinkGroupsTest.cpp - tensor groups on the best-linked devices ------===//
//
// bestLinkGroups on link matrices of known machines: NVLink pairs that are
// not consecutive, two fully linked quads, links alike everywhere (the
// given order stands), a slow direction, and sizes it leaves alone.
#include "../../../runtime/dist/LinkGroups.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace {

using nncc::rt::bestLinkGroups;
using nncc::rt::groupsCost;
using nncc::rt::kNoPeerLink;
using Matrix = std::vector<std::vector<int64_t>>;

/// n devices, every pair without peer access except `links` (rank r).
Matrix links(int n, const std::vector<std::pair<std::pair<int, int>, int64_t>> &fast) {
  Matrix m(size_t(n), std::vector<int64_t>(size_t(n), kNoPeerLink));
  for (int i = 0; i < n; ++i)
    m[size_t(i)][size_t(i)] = 0;
  for (auto [pair, rank] : fast) {
    m[size_t(pair.first)][size_t(pair.second)] = rank;
    m[size_t(pair.second)][size_t(pair.first)] = rank;
  }
  return m;
}

TEST(LinkGroups, PairsTheLinkedDevices) {
  // cuda:0-cuda:2 and cuda:1-cuda:3 linked: the given order's groups
  // {0,1} {2,3} have no peer access.
  Matrix m = links(4, {{{0, 2}, 0}, {{1, 3}, 0}});
  EXPECT_EQ(bestLinkGroups(m, 2), (std::vector<int32_t>{0, 2, 1, 3}));
  EXPECT_EQ(groupsCost(m, {0, 1, 2, 3}, 2), 2 * kNoPeerLink);
  EXPECT_EQ(groupsCost(m, {0, 2, 1, 3}, 2), 0);
}

TEST(LinkGroups, PrefersTheLowerPerformanceRank) {
  // Every pair has peer access; 0-3 and 1-2 at rank 0 (NVLink), the others 1.
  Matrix m = links(4, {{{0, 1}, 1}, {{0, 2}, 1}, {{0, 3}, 0}, {{1, 2}, 0}, {{1, 3}, 1}, {{2, 3}, 1}});
  EXPECT_EQ(bestLinkGroups(m, 2), (std::vector<int32_t>{0, 3, 1, 2}));
}

TEST(LinkGroups, FindsTwoLinkedQuadsOfEight) {
  // Quads {0,1,4,5} and {2,3,6,7} fully linked inside, nothing between them.
  std::vector<std::pair<std::pair<int, int>, int64_t>> fast;
  for (const std::vector<int> &quad : {std::vector<int>{0, 1, 4, 5}, std::vector<int>{2, 3, 6, 7}})
    for (size_t a = 0; a < quad.size(); ++a)
      for (size_t b = a + 1; b < quad.size(); ++b)
        fast.push_back({{quad[a], quad[b]}, 0});
  Matrix m = links(8, fast);
  EXPECT_EQ(bestLinkGroups(m, 4), (std::vector<int32_t>{0, 1, 4, 5, 2, 3, 6, 7}));
  // Pairs inside the quads: the given order's {0,1} {2,3} {4,5} {6,7} already are.
  EXPECT_EQ(bestLinkGroups(m, 2), (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(LinkGroups, KeepsTheGivenOrderWhenNoneIsBetter) {
  Matrix same = links(4, {{{0, 1}, 0}, {{0, 2}, 0}, {{0, 3}, 0}, {{1, 2}, 0}, {{1, 3}, 0}, {{2, 3}, 0}});
  EXPECT_EQ(bestLinkGroups(same, 2), (std::vector<int32_t>{0, 1, 2, 3}));
  Matrix none = links(4, {});
  EXPECT_EQ(bestLinkGroups(none, 2), (std::vector<int32_t>{0, 1, 2, 3}));
}

TEST(LinkGroups, CountsTheSlowerDirection) {
  // 0->1 is fast but 1->0 has no peer access: the pair is as slow as none.
  Matrix m = links(4, {{{0, 2}, 1}, {{1, 3}, 1}});
  m[0][1] = 0;
  EXPECT_EQ(bestLinkGroups(m, 2), (std::vector<int32_t>{0, 2, 1, 3}));
}

TEST(LinkGroups, LeavesSizesItCannotGroup) {
  Matrix m = links(6, {{{0, 3}, 0}});
  EXPECT_EQ(bestLinkGroups(m, 4), (std::vector<int32_t>{0, 1, 2, 3, 4, 5})); // 4 does not divide 6
  EXPECT_EQ(bestLinkGroups(m, 1), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(bestLinkGroups(links(18, {{{0, 17}, 0}}), 2).front(), 0); // more than 16: as given
  EXPECT_EQ(bestLinkGroups(links(18, {{{0, 17}, 0}}), 2)[1], 1);
}

} // namespace
