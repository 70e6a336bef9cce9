#include "common/schema/stats.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

namespace wb {

double percentile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

SampleStats compute_stats(std::vector<double> v) {
  SampleStats s;
  s.count = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  s.median = percentile_sorted(v, 0.5);
  s.p90 = percentile_sorted(v, 0.90);
  s.p99 = percentile_sorted(v, 0.99);
  s.p999 = percentile_sorted(v, 0.999);
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0;
  if (s.median != 0) {
    std::vector<double> dev(v.size());
    for (size_t i = 0; i < v.size(); ++i) dev[i] = std::fabs(v[i] - s.median) / s.median * 100.0;
    std::sort(dev.begin(), dev.end());
    s.mdape_pct = percentile_sorted(dev, 0.5);
  }
  return s;
}

SampleStats compute_stats(std::span<const int64_t> samples) {
  return compute_stats(std::vector<double>(samples.begin(), samples.end()));
}

nlohmann::ordered_json to_json(const SampleStats& s) {
  return {{"min", s.min}, {"mean", s.mean},     {"median", s.median},
          {"p90", s.p90}, {"p99", s.p99},       {"p999", s.p999},
          {"max", s.max}, {"stddev", s.stddev}, {"mdape_pct", s.mdape_pct}};
}

}  // namespace wb
