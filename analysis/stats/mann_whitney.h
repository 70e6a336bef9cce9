// Mann-Whitney U (Wilcoxon rank-sum) test, two-sided, for comparing per-repetition values of two
// result sets. It assumes nothing about the shape of the distributions, which matters here:
// per-repetition medians of wakeup latency are skewed and often bimodal (migrations, idle states).
//
// Method (the same choice as R's wilcox.test(exact = NULL, correct = TRUE)):
// - exact null distribution of U when both samples have fewer than kExactLimit values and there
//   are no ties: the counts of U are built by the recurrence of Mann & Whitney (1947),
//   f(u; m, n) = f(u - n; m - 1, n) + f(u; m, n - 1);
// - otherwise the normal approximation with the tie-corrected variance
//   sigma^2 = m n / 12 * ((N + 1) - sum(t^3 - t) / (N (N - 1)))  (t: size of each tie group)
//   and a continuity correction of 0.5 towards the mean.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace wb {

inline constexpr std::size_t kExactLimit = 50;

struct MannWhitneyResult {
  double u = 0;        // U of the first sample: pairs with x > y, plus half the tied pairs
  double p_value = 1;  // two-sided; 1 when every value is tied (no evidence of any difference)
  bool exact = false;  // exact null distribution (false: normal approximation)
  bool ties = false;   // some value occurs more than once in the pooled sample
};

// Two-sided test of x against y. Both samples must be non-empty (throws std::invalid_argument).
MannWhitneyResult mann_whitney_u(std::span<const double> x, std::span<const double> y);

// The smallest two-sided p-value the exact test can reach with m and n values (complete
// separation): 2 / C(m + n, m), capped at 1. With 5 vs 5 it is 2/252 = 0.0079; with 3 vs 3, 0.1.
double mann_whitney_min_p(std::size_t m, std::size_t n);

// P(U <= u) under the null hypothesis for samples of m and n values without ties (exact; meant for
// m, n < kExactLimit: it takes O(m^2 n^2) time).
double mann_whitney_exact_cdf(std::size_t m, std::size_t n, double u);
// The same for every u = 0 .. m n at once: element u is P(U <= u).
std::vector<double> mann_whitney_exact_cdfs(std::size_t m, std::size_t n);

}  // namespace wb
