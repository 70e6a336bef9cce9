// analysis/stats/mix.h: the distance from an observed class distribution to a prediction and to the
// closest mix of its steady state and its alternatives, against hand-computed minima and grids.
#include "analysis/stats/mix.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

namespace wb {
namespace {

TEST(Mix, TvDistanceCountsClassesOfEitherSide) {
  EXPECT_DOUBLE_EQ(tv_distance({{"llc", 1.0}}, {{"llc", 1.0}}), 0.0);
  EXPECT_DOUBLE_EQ(tv_distance({{"llc", 1.0}}, {{"same-cpu", 1.0}}), 1.0);
  EXPECT_DOUBLE_EQ(tv_distance({{"llc", 0.5}, {"same-cpu", 0.5}}, {{"llc", 1.0}}), 0.5);
}

TEST(Mix, ObservedInsideTheSegmentIsAtDistanceZero) {
  // 0.6 smt-sibling + 0.4 llc is 60 % of the steady state and 40 % of the alternative.
  MixFit m =
      closest_mix({{"smt-sibling", 0.6}, {"llc", 0.4}}, {{"smt-sibling", 1.0}}, {{"llc", 1.0}});
  EXPECT_NEAR(m.distance, 0.0, 1e-12);
  EXPECT_NEAR(m.share, 0.4, 1e-12);
  // A share a 100-step grid cannot hit: exactly one third.
  m = closest_mix({{"same-cpu", 2.0 / 3}, {"llc", 1.0 / 3}}, {{"same-cpu", 1.0}}, {{"llc", 1.0}});
  EXPECT_NEAR(m.distance, 0.0, 1e-12);
  EXPECT_NEAR(m.share, 1.0 / 3, 1e-12);
  // At the alternative itself: w = 1.
  m = closest_mix({{"llc", 1.0}}, {{"same-cpu", 1.0}}, {{"llc", 1.0}});
  EXPECT_NEAR(m.distance, 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(m.share, 1.0);
}

TEST(Mix, ObservedOutsideTheSegmentTakesTheSmallestShareOfTheFlatMinimum) {
  // obs same-cpu 50 % llc 50 %, between smt-sibling 100 % and llc 100 %: TV(w) = 1 - w up to
  // w = 0.5, then 0.5 flat (the same-cpu half no mix has).
  MixFit m = closest_mix({{"same-cpu", 0.5}, {"llc", 0.5}}, {{"smt-sibling", 1.0}}, {{"llc", 1.0}});
  EXPECT_NEAR(m.distance, 0.5, 1e-12);
  EXPECT_NEAR(m.share, 0.5, 1e-12);
  // A class neither side has: every mix is at distance 1, and the steady state alone (w = 0) wins.
  m = closest_mix({{"cluster", 1.0}}, {{"smt-sibling", 1.0}}, {{"llc", 1.0}});
  EXPECT_DOUBLE_EQ(m.distance, 1.0);
  EXPECT_DOUBLE_EQ(m.share, 0.0);
}

TEST(Mix, SameSteadyStateAndAlternativeIsTheStrictDistance) {
  MixFit m = closest_mix({{"smt-sibling", 0.7}, {"llc", 0.3}}, {{"smt-sibling", 1.0}},
                         {{"smt-sibling", 1.0}});
  EXPECT_NEAR(m.distance, 0.3, 1e-12);
  EXPECT_DOUBLE_EQ(m.share, 0.0);
}

TEST(Mix, ClassesPresentInOnlyOneDistribution) {
  // p = same-cpu 100 %, a = llc 50 % cluster 50 %, obs = same-cpu 50 % llc 50 %:
  // TV(w) = (|0.5 - (1 - w)| + |0.5 - 0.5 w| + 0.5 w) / 2: 0.5 at w = 0, 0.25 at w = 0.5 (the
  // same-cpu breakpoint), 0.5 at w = 1.
  MixFit m = closest_mix({{"same-cpu", 0.5}, {"llc", 0.5}}, {{"same-cpu", 1.0}},
                         {{"llc", 0.5}, {"cluster", 0.5}});
  EXPECT_NEAR(m.distance, 0.25, 1e-12);
  EXPECT_NEAR(m.share, 0.5, 1e-12);
  // p = same-cpu 80 % llc 20 %, a = llc 60 % cluster 40 %, obs = same-cpu 20 % llc 50 % cluster
  // 30 %: TV(w) = 0.8 |w - 0.75|.
  m = closest_mix({{"same-cpu", 0.2}, {"llc", 0.5}, {"cluster", 0.3}},
                  {{"same-cpu", 0.8}, {"llc", 0.2}}, {{"llc", 0.6}, {"cluster", 0.4}});
  EXPECT_NEAR(m.distance, 0.0, 1e-12);
  EXPECT_NEAR(m.share, 0.75, 1e-12);
}

// The exact minimum is never above a fine grid's and at most one grid step's slope below it.
TEST(Mix, NeverWorseThanAFineGrid) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  const std::vector<std::string> classes = {"same-cpu", "smt-sibling", "llc", "cross-llc"};
  auto random_shares = [&] {
    ClassShares s;
    double total = 0;
    for (const auto& c : classes)
      if (u(rng) < 0.7) total += s[c] = u(rng);
    if (total == 0) return ClassShares{{"llc", 1.0}};
    for (auto& [c, f] : s) f /= total;
    return s;
  };
  constexpr int kSteps = 10000;
  const auto shares = [&](const ClassShares& s) {  // per class of `classes`, 0 where absent
    std::array<double, 4> out{};
    for (std::size_t i = 0; i < classes.size(); ++i)
      out[i] = s.count(classes[i]) ? s.at(classes[i]) : 0;
    return out;
  };
  for (int trial = 0; trial < 200; ++trial) {
    const ClassShares obs = random_shares(), p = random_shares(), a = random_shares();
    // The grid in plain arrays (total variation: half the summed absolute difference): two
    // million maps of strings took a minute under the sanitizers' -O0.
    const auto o = shares(obs), ps = shares(p), as = shares(a);
    double grid = 2;
    for (int k = 0; k <= kSteps; ++k) {
      const double w = double(k) / kSteps;
      double tv = 0;
      for (std::size_t i = 0; i < o.size(); ++i)
        tv += std::fabs(o[i] - ((1 - w) * ps[i] + w * as[i]));
      grid = std::min(grid, tv / 2);
    }
    const MixFit m = closest_mix(obs, p, a);
    EXPECT_LE(m.distance, grid + 1e-12) << trial;
    EXPECT_GE(m.distance, grid - 1.0 / kSteps) << trial;  // the slope is at most 1
    EXPECT_GE(m.share, 0.0);
    EXPECT_LE(m.share, 1.0);
  }
}

TEST(Mix, RangeFitTakesTheBestAlternativeAndKeepsTheStrictDistance) {
  const ClassShares obs = {{"smt-sibling", 0.6}, {"llc", 0.4}};
  RangeFit f = closest_in_range(obs, {{"smt-sibling", 1.0}}, {{{"same-cpu", 1.0}}, {{"llc", 1.0}}});
  EXPECT_NEAR(f.strict, 0.4, 1e-12);
  EXPECT_NEAR(f.best, 0.0, 1e-12);
  EXPECT_NEAR(f.share, 0.4, 1e-12);
  EXPECT_EQ(f.alternative, 1u);
  // No alternative, or none that helps: the steady state alone.
  f = closest_in_range(obs, {{"smt-sibling", 1.0}}, {});
  EXPECT_NEAR(f.best, 0.4, 1e-12);
  EXPECT_FALSE(f.alternative.has_value());
  f = closest_in_range({{"smt-sibling", 1.0}}, {{"smt-sibling", 1.0}}, {{{"llc", 1.0}}});
  EXPECT_DOUBLE_EQ(f.best, 0.0);
  EXPECT_DOUBLE_EQ(f.share, 0.0);
  EXPECT_FALSE(f.alternative.has_value());
}

// Each repetition may settle in any of the states: a three-way split is inside the range.
TEST(Mix, RangeFitMixesEveryAlternative) {
  const ClassShares obs = {{"same-cpu", 0.58}, {"llc", 0.27}, {"cross-llc", 0.15}};
  RangeFit f = closest_in_range(obs, {{"same-cpu", 1.0}}, {{{"llc", 1.0}}, {{"cross-llc", 1.0}}});
  EXPECT_NEAR(f.strict, 0.42, 1e-12);
  EXPECT_NEAR(f.best, 0.0, 1e-9);
  EXPECT_NEAR(f.share, 0.42, 1e-9);
  ASSERT_EQ(f.weights.size(), 2u);
  EXPECT_NEAR(f.weights[0], 0.27, 1e-9);
  EXPECT_NEAR(f.weights[1], 0.15, 1e-9);
  EXPECT_EQ(f.alternative, 0u);  // the heaviest
}

// Never worse than a fine brute force over the weights of four states.
TEST(Mix, RangeFitOfManyStatesMatchesABruteForce) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  const std::vector<std::string> classes = {"same-cpu", "smt-sibling", "llc", "cross-llc"};
  auto random_shares = [&]() {
    ClassShares m;
    double sum = 0;
    for (const auto& c : classes) sum += m[c] = u(rng) < 0.4 ? 0.0 : u(rng);
    if (sum == 0) return ClassShares{{"llc", 1.0}};
    for (auto& [c, f] : m) f /= sum;
    return m;
  };
  for (int trial = 0; trial < 20; ++trial) {
    const ClassShares obs = random_shares(), steady = random_shares();
    const std::vector<ClassShares> alts = {random_shares(), random_shares(), random_shares()};
    const RangeFit f = closest_in_range(obs, steady, alts);
    double brute = tv_distance(obs, steady);
    const int n = 30;
    for (int a = 0; a <= n; ++a)
      for (int b = 0; a + b <= n; ++b)
        for (int c = 0; a + b + c <= n; ++c) {
          const double w[4] = {1.0 * (n - a - b - c) / n, 1.0 * a / n, 1.0 * b / n, 1.0 * c / n};
          ClassShares m;
          for (const auto& cl : classes) {
            m[cl] = w[0] * (steady.count(cl) ? steady.at(cl) : 0);
            for (int i = 0; i < 3; ++i)
              m[cl] += w[i + 1] * (alts[i].count(cl) ? alts[i].at(cl) : 0);
          }
          brute = std::min(brute, tv_distance(obs, m));
        }
    EXPECT_LE(f.best, brute + 1e-9) << "trial " << trial;
    EXPECT_LE(f.best, f.strict);
    double sum = 0;
    for (double x : f.weights) sum += x;
    EXPECT_NEAR(sum, f.share, 1e-9);
  }
}

// Coverage: the share of all distributions over the classes within 0.25 of the range. On two
// classes the simplex is a segment: a vertex covers a quarter of it, the whole segment all of it.
// On three, one edge covers 1 - 0.75^2 of the triangle; a range with every vertex covers it all.
TEST(Mix, CoverageIsTheShareOfTheSimplexARangeAdmits) {
  const std::vector<std::string> two = {"llc", "same-cpu"}, three = {"llc", "same-cpu", "x"};
  const ClassShares llc = {{"llc", 1}}, same = {{"same-cpu", 1}}, x = {{"x", 1}};
  EXPECT_NEAR(range_coverage(llc, {}, two, 0.25), 0.25, 0.05);
  EXPECT_DOUBLE_EQ(range_coverage(llc, {same}, two, 0.25), 1.0);
  EXPECT_NEAR(range_coverage(llc, {same}, three, 0.25), 1 - 0.75 * 0.75, 0.06);
  EXPECT_DOUBLE_EQ(range_coverage(llc, {same, x}, three, 0.25), 1.0);
  // The same answer every time (a fixed sequence), and exact on a single class.
  EXPECT_EQ(range_coverage(llc, {}, three, 0.25), range_coverage(llc, {}, three, 0.25));
  EXPECT_EQ(range_coverage(llc, {}, {"llc"}, 0.25), 1.0);
  EXPECT_EQ(range_coverage(same, {}, {"llc"}, 0.25), 0.0);
}

}  // namespace
}  // namespace wb
