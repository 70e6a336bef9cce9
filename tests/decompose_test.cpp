#include "analysis/stats/decompose.h"

#include <gtest/gtest.h>

#include <random>

namespace wb {
namespace {

// n repetitions of 1000 round trips, `stacked` of them on the same CPU at `same_ns`, the rest in
// the LLC at `llc_ns`; each repetition's means jitter by a few percent.
std::vector<RepetitionTally> mixture(std::mt19937_64& rng, int n, double stacked, double same_ns,
                                     double llc_ns) {
  std::normal_distribution<double> jitter(1.0, 0.03);
  std::vector<RepetitionTally> reps;
  for (int i = 0; i < n; ++i)
    reps.push_back({{"same-cpu", 1000 * stacked, same_ns * jitter(rng)},
                    {"llc", 1000 * (1 - stacked), llc_ns * jitter(rng)}});
  return reps;
}

void expect_parts_add_up(const Decomposition& d) {
  EXPECT_NEAR(d.placement + d.cost, d.mean_b - d.mean_a, 1e-6 * std::abs(d.mean_b));
}

TEST(Decompose, APlacementShiftIsPlacementNotCost) {
  std::mt19937_64 rng(1);
  const auto a = mixture(rng, 15, 0.7, 5000, 40000), b = mixture(rng, 15, 0.4, 5000, 40000);
  const Decomposition d = decompose(a, b);
  expect_parts_add_up(d);
  EXPECT_NEAR(d.placement, 0.3 * 35000, 1500);
  EXPECT_LT(d.placement_ci.lo, d.placement);
  EXPECT_GT(d.placement_ci.lo, 0);                  // clear of zero
  EXPECT_LT(std::abs(d.cost), 0.05 * d.placement);  // the per-class means did not move
  EXPECT_LT(d.cost_ci.hi - d.cost_ci.lo, 0.2 * d.placement);
  ASSERT_EQ(d.classes.size(), 2u);
  EXPECT_NEAR(d.classes[0].share_a, 0.7, 1e-9);
  EXPECT_NEAR(d.classes[0].share_b, 0.4, 1e-9);
}

TEST(Decompose, ADearerPlacementIsCostNotPlacement) {
  std::mt19937_64 rng(2);
  const auto a = mixture(rng, 15, 0.7, 5000, 40000), b = mixture(rng, 15, 0.7, 5000, 50000);
  const Decomposition d = decompose(a, b);
  expect_parts_add_up(d);
  EXPECT_NEAR(d.cost, 0.3 * 10000, 600);
  EXPECT_NEAR(d.placement, 0, 1e-6);  // shares are equal: no placement part at all
  EXPECT_GT(d.cost_ci.lo, 0);
}

TEST(Decompose, AClassOnOneSideIsAllPlacement) {
  const std::vector<RepetitionTally> a = {{{"same-cpu", 100, 5000}}, {{"same-cpu", 100, 5200}}};
  const std::vector<RepetitionTally> b = {{{"same-cpu", 50, 5100}, {"llc", 50, 40000}},
                                          {{"same-cpu", 50, 5100}, {"llc", 50, 42000}}};
  const Decomposition d = decompose(a, b);
  expect_parts_add_up(d);
  ASSERT_EQ(d.classes.size(), 2u);
  EXPECT_FALSE(d.classes[1].in_a);
  EXPECT_EQ(d.classes[1].mean_a, d.classes[1].mean_b);
  EXPECT_NEAR(d.placement, d.mean_b - d.mean_a - d.cost, 1e-6);
  EXPECT_NEAR(d.cost, 0, 100);  // same-cpu hardly moved
  EXPECT_THROW(decompose(std::vector<RepetitionTally>{}, b), std::invalid_argument);
}

}  // namespace
}  // namespace wb
