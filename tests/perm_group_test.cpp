// Schreier-Sims (analysis/predict/perm_group.h): orders of groups known by hand, a rebased chain of
// the same group, and the stabilizer of its first base point (orbit-stabilizer).
#include "analysis/predict/perm_group.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

namespace wb {
namespace {

Perm cycle(int degree, const std::vector<int>& points) {
  Perm p(static_cast<std::size_t>(degree));
  std::iota(p.begin(), p.end(), 0);
  for (std::size_t i = 0; i < points.size(); ++i)
    p[static_cast<std::size_t>(points[i])] = points[(i + 1) % points.size()];
  return p;
}

double log2_factorial(int n) {
  double s = 0;
  for (int k = 2; k <= n; ++k) s += std::log2(k);
  return s;
}

// The symmetric group from a transposition and an n-cycle; the trivial group; a product of
// cyclic groups on disjoint points (4 x 6, not 24 from one generator).
TEST(PermGroup, OrdersOfKnownGroups) {
  const int n = 9;
  std::vector<int> all(n);
  std::iota(all.begin(), all.end(), 0);
  const StabChain sym(n, {cycle(n, {0, 1}), cycle(n, all)});
  EXPECT_NEAR(sym.log2_order(), log2_factorial(n), 1e-9);
  EXPECT_NEAR(StabChain(n, {}).log2_order(), 0, 1e-12);
  const StabChain c4c6(10, {cycle(10, {0, 1, 2, 3}), cycle(10, {4, 5, 6, 7, 8, 9})});
  EXPECT_NEAR(c4c6.log2_order(), std::log2(24.0), 1e-9);
  // The wreath product C3 wr C2 on two blocks {0,1,2}, {3,4,5}: 3 * 3 * 2 = 18.
  Perm swap = cycle(6, {0, 3});
  swap[1] = 4, swap[4] = 1, swap[2] = 5, swap[5] = 2;
  const StabChain wreath(6, {cycle(6, {0, 1, 2}), swap});
  EXPECT_NEAR(wreath.log2_order(), std::log2(18.0), 1e-9);
}

// Rebased on any point the chain has the same order; the stabilizer of the first base point has
// order |G| / |orbit|, and fixes that point.
TEST(PermGroup, RebasedChainAndStabilizer) {
  Perm swap = cycle(6, {0, 3});
  swap[1] = 4, swap[4] = 1, swap[2] = 5, swap[5] = 2;
  const StabChain wreath(6, {cycle(6, {0, 1, 2}), swap});
  for (int x = 0; x < 6; ++x) {
    const StabChain c = wreath.rebased({x}, 7);
    EXPECT_NEAR(c.log2_order(), wreath.log2_order(), 1e-9);
    const std::vector<Perm> stab = c.stabilizer_generators();
    for (const Perm& g : stab) EXPECT_EQ(g[static_cast<std::size_t>(x)], x);
    EXPECT_NEAR(StabChain(6, stab).log2_order(), std::log2(18.0 / 6), 1e-9) << x;
    EXPECT_NEAR(c.tail().log2_order(), std::log2(3.0), 1e-9) << x;
  }
  // A two-point prefix: the stabilizer of 0 and 1 in S5 is S3.
  const StabChain s5(5, {cycle(5, {0, 1}), cycle(5, {0, 1, 2, 3, 4})});
  const StabChain c = s5.rebased({0, 1}, 3);
  EXPECT_NEAR(c.tail().tail().log2_order(), std::log2(6.0), 1e-9);
}

}  // namespace
}  // namespace wb
