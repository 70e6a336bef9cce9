#include "analysis/stats/inference.h"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "analysis/stats/mann_whitney.h"

namespace wb {

std::vector<double> bh_qvalues(std::span<const double> p) {
  const std::size_t n = p.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::vector<double> q(n);
  double running = 1.0;
  for (std::size_t r = n; r-- > 0;) {
    const std::size_t i = order[r];
    running = std::min(running, p[i] * static_cast<double>(n) / static_cast<double>(r + 1));
    q[i] = std::min(running, 1.0);
  }
  return q;
}

namespace {

double median_sorted(const std::vector<double>& v) {
  const std::size_t k = v.size();
  return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2.0;
}

}  // namespace

double normal_quantile(double p) {
  return boost::math::quantile(boost::math::normal(), std::clamp(p, 1e-300, 1 - 1e-16));
}

ShiftInterval hodges_lehmann(std::span<const double> x, std::span<const double> y,
                             double confidence) {
  if (x.empty() || y.empty())
    throw std::invalid_argument("Hodges-Lehmann needs at least one value in each sample");
  const std::size_t m = x.size(), n = y.size(), mn = m * n;
  std::vector<double> d;
  d.reserve(mn);
  for (double a : x)
    for (double b : y) d.push_back(b - a);
  std::sort(d.begin(), d.end());
  const double alpha = 1.0 - confidence;
  // k: the smallest u with P(U <= u) >= alpha / 2 (R's qwilcox), at least 1; the interval is the
  // k-th smallest and the k-th largest difference and covers with 1 - 2 P(U <= k - 1).
  std::size_t k = 0;
  double achieved = 0;
  if (m < kExactLimit && n < kExactLimit) {
    const std::vector<double> cdf = mann_whitney_exact_cdfs(m, n);
    while (k < mn && cdf[k] < alpha / 2) ++k;
    k = std::max<std::size_t>(k, 1);
    achieved = 1.0 - 2.0 * cdf[k - 1];
  } else {
    const double dm = static_cast<double>(m), dn = static_cast<double>(n);
    const double sd = std::sqrt(dm * dn * (dm + dn + 1) / 12.0);
    const double c = dm * dn / 2.0 + normal_quantile(alpha / 2) * sd;
    k = static_cast<std::size_t>(std::max(1.0, std::floor(c)));
    achieved =
        1.0 - std::erfc((dm * dn / 2.0 - static_cast<double>(k) + 0.5) / sd / std::sqrt(2.0));
  }
  k = std::min(k, (mn + 1) / 2);
  return {median_sorted(d), d[k - 1], d[mn - k], achieved};
}

std::optional<ShiftInterval> hodges_lehmann_ratio(std::span<const double> x,
                                                  std::span<const double> y, double confidence) {
  std::vector<double> lx, ly;
  for (double v : x) {
    if (!(v > 0)) return std::nullopt;
    lx.push_back(std::log(v));
  }
  for (double v : y) {
    if (!(v > 0)) return std::nullopt;
    ly.push_back(std::log(v));
  }
  ShiftInterval s = hodges_lehmann(lx, ly, confidence);
  s.estimate = std::exp(s.estimate);
  s.lo = std::exp(s.lo);
  s.hi = std::exp(s.hi);
  return s;
}

}  // namespace wb
