#include "analysis/stats/inference.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analysis/stats/mann_whitney.h"

namespace wb {
namespace {

// Benjamini & Hochberg (1995), section 4: the 15 p-values of their example; at q = 0.05 the
// procedure rejects the four smallest. The q-values are R's p.adjust(p, "BH") (recomputed from the
// definition: q_(i) = min_{j >= i} n p_(j) / j).
TEST(Inference, BenjaminiHochbergOnThePapersExample) {
  const std::vector<double> p = {0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344,
                                 0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0000};
  const std::vector<double> want = {0.0015,   0.003,    0.0095,   0.035625, 0.0603,
                                    0.063857, 0.063857, 0.0645,   0.0765,   0.486,
                                    0.581182, 0.714875, 0.753231, 0.813214, 1.0};
  const std::vector<double> q = bh_qvalues(p);
  ASSERT_EQ(q.size(), p.size());
  int rejected = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_NEAR(q[i], want[i], 1e-6) << i;
    rejected += q[i] <= 0.05;
  }
  EXPECT_EQ(rejected, 4);
}

TEST(Inference, BenjaminiHochbergKeepsTheInputOrderAndCaps) {
  // R: p.adjust(c(0.04, 0.01, 0.03, 0.02, 0.05), "BH") is 0.05 everywhere.
  for (double q : bh_qvalues(std::vector<double>{0.04, 0.01, 0.03, 0.02, 0.05}))
    EXPECT_NEAR(q, 0.05, 1e-12);
  const std::vector<double> q = bh_qvalues(std::vector<double>{0.9, 0.001});
  EXPECT_NEAR(q[0], 0.9, 1e-12);
  EXPECT_NEAR(q[1], 0.002, 1e-12);
  EXPECT_NEAR(bh_qvalues(std::vector<double>{0.8, 0.9, 0.95})[2], 0.95, 1e-12);
  EXPECT_TRUE(bh_qvalues(std::vector<double>{}).empty());
}

// R's wilcox.test help example (Hollander & Wolfe's depression scores): wilcox.test(x, y,
// conf.int = TRUE) gives the difference in location 0.305 with the 95 % interval [-0.15, 0.76]
// (order statistics 9 and 42 of the 50 differences x - y; recomputed by enumerating the 3003
// rank assignments). Here y - x, so the signs flip.
// The null distribution counted once for every u is the one P(U <= u) gives: 3 vs 3 values have
// C(6, 3) = 20 orderings, U = 0 in one of them and U <= 1 in two; below 0 nothing, from m n on
// everything, and a fractional u counts the whole values below it.
TEST(Inference, MannWhitneyNullDistributionOnceForEveryU) {
  const std::vector<double> cdf = mann_whitney_exact_cdfs(3, 3);
  ASSERT_EQ(cdf.size(), 10u);
  EXPECT_DOUBLE_EQ(cdf[0], 1.0 / 20);
  EXPECT_DOUBLE_EQ(cdf[1], 2.0 / 20);
  EXPECT_DOUBLE_EQ(cdf[9], 1.0);
  for (std::size_t u = 0; u < cdf.size(); ++u)
    EXPECT_DOUBLE_EQ(mann_whitney_exact_cdf(3, 3, static_cast<double>(u)), cdf[u]);
  EXPECT_DOUBLE_EQ(mann_whitney_exact_cdf(3, 3, -1), 0.0);
  EXPECT_DOUBLE_EQ(mann_whitney_exact_cdf(3, 3, 1.5), cdf[1]);
  EXPECT_DOUBLE_EQ(mann_whitney_exact_cdf(3, 3, 40), 1.0);
}

TEST(Inference, HodgesLehmannIntervalOnRsExample) {
  const std::vector<double> x = {1.15, 0.88, 0.90, 0.74, 1.21};
  const std::vector<double> y = {0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46};
  const ShiftInterval s = hodges_lehmann(x, y);
  EXPECT_NEAR(s.estimate, 0.305, 1e-12);
  EXPECT_NEAR(s.lo, -0.15, 1e-12);
  EXPECT_NEAR(s.hi, 0.76, 1e-12);
  // Covers 1 - 2 P(U <= 8) = 1 - 2 * 60 / 3003 (the enumeration again).
  EXPECT_NEAR(s.confidence, 1.0 - 120.0 / 3003.0, 1e-12);
}

// 5 repetitions a side, as compare sees them: k = qwilcox(0.025, 5, 5) = 3, so the interval is the
// 3rd smallest and 3rd largest of the 25 ratios and covers with 1 - 2 * 4/252 = 96.8 %.
TEST(Inference, HodgesLehmannRatioOfFiveRepetitions) {
  const std::vector<double> base = {100, 102, 98, 101, 99};
  std::vector<double> other;
  for (double v : base) other.push_back(v * 1.10);
  const auto r = hodges_lehmann_ratio(base, other);
  ASSERT_TRUE(r);
  EXPECT_NEAR(r->estimate, 1.10, 1e-12);
  // log ratios y_j / x_i sorted: the 3rd smallest is 1.1 * 98 / 102 ... by hand: the differences
  // of logs are log(1.1) + log(b_j / b_i); the 3rd smallest of log(b_j / b_i) over the 25 pairs is
  // log(99 / 102) (98/102, 98/101, 99/102), the 3rd largest log(102 / 99).
  EXPECT_NEAR(r->lo, 1.1 * 99.0 / 102.0, 1e-12);
  EXPECT_NEAR(r->hi, 1.1 * 102.0 / 99.0, 1e-12);
  EXPECT_NEAR(r->confidence, 1.0 - 2.0 * 4.0 / 252.0, 1e-12);
  EXPECT_FALSE(hodges_lehmann_ratio(std::vector<double>{0, 1}, base));
  EXPECT_THROW(hodges_lehmann(std::vector<double>{}, base), std::invalid_argument);
}

TEST(Inference, HodgesLehmannNormalApproximationForLargeSamples) {
  // 60 vs 60 values 0..59 and 10..69: the shift is 10 and the interval lies around it.
  std::vector<double> x, y;
  for (int i = 0; i < 60; ++i) {
    x.push_back(i);
    y.push_back(i + 10);
  }
  const ShiftInterval s = hodges_lehmann(x, y);
  EXPECT_DOUBLE_EQ(s.estimate, 10);
  EXPECT_LT(s.lo, 10);
  EXPECT_GT(s.hi, 10);
  EXPECT_NEAR(s.confidence, 0.95, 0.01);
  // Symmetric data, symmetric interval.
  EXPECT_NEAR(10 - s.lo, s.hi - 10, 1e-9);
}

}  // namespace
}  // namespace wb
