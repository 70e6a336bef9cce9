#include "analysis/stats/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace wb {

// Counts f(k; i, j) are kept for the current j and every i <= m, updated in place as j grows:
// f(k; i, j) = f(k - j; i - 1, j) + f(k; i, j - 1). Only additions, so no cancellation even when
// C(m + n, m) is ~1e29.
std::vector<double> mann_whitney_exact_cdfs(std::size_t m, std::size_t n) {
  const std::size_t max_u = m * n;
  std::vector<std::vector<double>> f(m + 1, std::vector<double>(max_u + 1, 0.0));
  for (auto& row : f) row[0] = 1.0;  // f(0; i, 0) = 1 and f(0; 0, j) = 1
  for (std::size_t j = 1; j <= n; ++j) {
    for (std::size_t i = 1; i <= m; ++i) {
      // f[i - 1] already holds column j (i ascends); f[i][k] still holds column j - 1.
      for (std::size_t k = i * j; k >= j; --k) f[i][k] += f[i - 1][k - j];
    }
  }
  std::vector<double> cdf = std::move(f[m]);
  const double total = std::accumulate(cdf.begin(), cdf.end(), 0.0);
  double below = 0;
  for (double& c : cdf) {
    below += c;
    c = below / total;
  }
  return cdf;
}

double mann_whitney_exact_cdf(std::size_t m, std::size_t n, double u) {
  if (u < 0) return 0;
  const std::vector<double> cdf = mann_whitney_exact_cdfs(m, n);
  return cdf[std::min(static_cast<std::size_t>(u), cdf.size() - 1)];
}

double mann_whitney_min_p(std::size_t m, std::size_t n) {
  // C(m + n, m) computed as a running product; exact in double for the sizes used here.
  double c = 1;
  for (std::size_t i = 1; i <= m; ++i) c = c * static_cast<double>(n + i) / static_cast<double>(i);
  return std::min(1.0, 2.0 / c);
}

MannWhitneyResult mann_whitney_u(std::span<const double> x, std::span<const double> y) {
  if (x.empty() || y.empty()) {
    throw std::invalid_argument("Mann-Whitney U needs at least one value in each sample");
  }
  const std::size_t m = x.size(), n = y.size(), total = m + n;
  struct Item {
    double value;
    bool first;
  };
  std::vector<Item> pooled;
  pooled.reserve(total);
  for (double v : x) pooled.push_back({v, true});
  for (double v : y) pooled.push_back({v, false});
  std::sort(pooled.begin(), pooled.end(),
            [](const Item& a, const Item& b) { return a.value < b.value; });

  // Mid-ranks; tie groups feed the variance correction.
  double rank_sum_x = 0, tie_term = 0;
  MannWhitneyResult r;
  for (std::size_t i = 0; i < total;) {
    std::size_t j = i;
    while (j < total && pooled[j].value == pooled[i].value) ++j;
    const double t = static_cast<double>(j - i);
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k) {
      if (pooled[k].first) rank_sum_x += mid_rank;
    }
    if (t > 1) {
      r.ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  const double dm = static_cast<double>(m), dn = static_cast<double>(n);
  r.u = rank_sum_x - dm * (dm + 1) / 2.0;
  const double mean = dm * dn / 2.0;

  if (m < kExactLimit && n < kExactLimit && !r.ties) {
    r.exact = true;
    // Two-sided: double the smaller tail. P(U >= u) = P(U <= m n - u) by symmetry.
    const double tail = r.u > mean ? mann_whitney_exact_cdf(m, n, dm * dn - r.u)
                                   : mann_whitney_exact_cdf(m, n, r.u);
    r.p_value = std::min(1.0, 2.0 * tail);
    return r;
  }

  const double dt = static_cast<double>(total);
  const double variance = dm * dn / 12.0 * ((dt + 1) - tie_term / (dt * (dt - 1)));
  if (variance <= 0) {
    r.p_value = 1.0;  // every value tied: the samples are indistinguishable
    return r;
  }
  double z = r.u - mean;
  z -= (z > 0 ? 0.5 : (z < 0 ? -0.5 : 0.0));  // continuity correction towards the mean
  z /= std::sqrt(variance);
  r.p_value = std::min(1.0, std::erfc(std::fabs(z) / std::sqrt(2.0)));
  return r;
}

}  // namespace wb
