// The statistics behind compare's verdict, over per-repetition values of a case in two result
// sets (the Mann-Whitney U test itself is analysis/stats/mann_whitney.h):
// - Benjamini-Hochberg q-values: the false discovery rate across the cases of one comparison
//   (Benjamini & Hochberg, JRSS B 57, 1995; R's p.adjust(p, "BH")).
// - The Hodges-Lehmann estimate of the ratio of two sets and its distribution-free confidence
//   interval (Hollander & Wolfe, "Nonparametric Statistical Methods", 4.3; R's
//   wilcox.test(log(y), log(x), conf.int = TRUE), exponentiated): on the logs, the median and two
//   order statistics of the m n pairwise differences, picked from the null distribution of U.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace wb {

// q-values in the order of `p`: q_(i) = min over j >= i of min(1, n p_(j) / j) for p sorted
// ascending. Empty in, empty out.
std::vector<double> bh_qvalues(std::span<const double> p);

// The inverse of the standard normal CDF at p in (0, 1).
double normal_quantile(double p);

struct ShiftInterval {
  double estimate = 0;    // median of the pairwise differences y_j - x_i
  double lo = 0, hi = 0;  // the interval's ends (order statistics of the differences)
  double confidence = 0;  // what the interval achieves (>= the one asked, with few values)
};

// Hodges-Lehmann shift of y against x with a `confidence` interval (two-sided). The order
// statistic k is the smallest with P(U <= k - 1) >= alpha / 2 ... as R: k = qwilcox(alpha / 2, m,
// n), at least 1; from the exact null distribution below 50 values a side, else the normal one.
// Throws std::invalid_argument if either sample is empty.
ShiftInterval hodges_lehmann(std::span<const double> x, std::span<const double> y,
                             double confidence = 0.95);

// The same on the logarithms, exponentiated: the ratio y / x and its interval. nullopt when a
// value is not > 0.
std::optional<ShiftInterval> hodges_lehmann_ratio(std::span<const double> x,
                                                  std::span<const double> y,
                                                  double confidence = 0.95);

}  // namespace wb
