// Statistics of raw latency samples (nanoseconds), as stored in a result set's rtt_ns.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <vector>

namespace wb {

struct SampleStats {
  size_t count = 0;
  double min = 0, mean = 0, median = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, stddev = 0;
  double mdape_pct = 0;  // median absolute percentage deviation from the median
};

// Percentiles by linear interpolation between closest ranks (the "R7"/numpy default) of a
// sorted sample. q in [0, 1].
double percentile_sorted(std::span<const double> sorted, double q);

SampleStats compute_stats(std::span<const int64_t> samples);
SampleStats compute_stats(std::vector<double> samples);

// {"min", "mean", "median", "p90", "p99", "p999", "max", "stddev", "mdape_pct"}
nlohmann::ordered_json to_json(const SampleStats& s);

}  // namespace wb
