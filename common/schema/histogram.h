// A compact log-linear histogram of latencies in nanoseconds, kept per repetition in a result set
// so that any percentile of any repetition, and real CDFs, can be computed later.
//
// Buckets: values below 128 ns have a bucket each (exact); above, every power of two [2^k, 2^k+1)
// is cut into 128 equal sub-buckets, so a bucket is at most 1/128 (0.78 %) of the values it holds
// wide. The index is pure integer arithmetic (no floating point, the same on every architecture),
// covers 0 ns to 2^63 ns, and 1 ns to 10 s takes at most 3,600 buckets; a result set stores only
// the non-empty ones. Negative values (never expected) count in bucket 0.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <span>

namespace wb {

class Histogram {
 public:
  static constexpr int kSubBits = 7;  // 128 sub-buckets per power of two
  static constexpr int64_t kSub = int64_t{1} << kSubBits;

  static int64_t index_of(int64_t value);
  // The values bucket `index` holds: [lower, upper), upper = lower + width.
  static int64_t lower_bound(int64_t index);
  static int64_t width(int64_t index);

  void add(int64_t value, int64_t count = 1);
  void add(std::span<const int64_t> values);
  void merge(const Histogram& other);

  int64_t count() const { return total_; }
  bool empty() const { return total_ == 0; }
  // Non-empty buckets, index -> count, in increasing order.
  const std::map<int64_t, int64_t>& buckets() const { return buckets_; }

  // The q-quantile (q in [0, 1]) the way common/schema/stats.h's percentile_sorted() computes it
  // on the raw samples (linear interpolation between closest ranks), with each order statistic
  // placed at the middle of its bucket: within half a bucket width (0.39 %) of the exact value. 0
  // if empty.
  double percentile(double q) const;
  // The share of values <= x, counting a bucket's values as spread evenly over it.
  double cdf(double x) const;

  // {"bucket_bits": 7, "index": [..], "count": [..]}: the non-empty buckets.
  nlohmann::ordered_json to_json() const;
  // Throws std::invalid_argument (naming what is wrong) on a malformed or foreign object.
  static Histogram from_json(const nlohmann::json& j);

 private:
  // The value of the rank-th smallest sample (0-based), at the middle of its bucket.
  double value_at_rank(int64_t rank) const;

  std::map<int64_t, int64_t> buckets_;
  int64_t total_ = 0;
};

}  // namespace wb
