#include "common/schema/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "common/schema/stats.h"

namespace wb {
namespace {

TEST(Histogram, BucketsAreExactBelow256AndAtMostOnePart128Wide) {
  for (int64_t v = 0; v < 256; ++v) {
    EXPECT_EQ(Histogram::lower_bound(Histogram::index_of(v)), v);
    EXPECT_EQ(Histogram::width(Histogram::index_of(v)), 1);
  }
  // Every value lands in the bucket whose [lower, lower + width) holds it, and the widths stay
  // within 1/128 of the value, up to the largest int64.
  std::mt19937_64 rng(7);
  for (int k = 0; k < 100000; ++k) {
    const int64_t v = static_cast<int64_t>(rng() >> (rng() % 63 + 1));
    const int64_t i = Histogram::index_of(v);
    const int64_t lo = Histogram::lower_bound(i), w = Histogram::width(i);
    ASSERT_LE(lo, v) << v;
    ASSERT_LT(v - lo, w) << v;
    ASSERT_LE(static_cast<double>(w), std::max(1.0, static_cast<double>(v) / 128.0)) << v;
  }
  // Consecutive indexes tile the values without gaps.
  for (int64_t i = 0; i < Histogram::index_of(INT64_MAX); ++i)
    ASSERT_EQ(Histogram::lower_bound(i) + Histogram::width(i), Histogram::lower_bound(i + 1)) << i;
  // 1 ns .. 10 s in at most 3600 buckets.
  EXPECT_LT(Histogram::index_of(10'000'000'000), 3600);
}

// Percentiles from the histogram against the exact ones of the raw samples
// (common/schema/stats.h), on a skewed latency-like sample: within half a bucket, i.e. 1/256 of
// the value.
TEST(Histogram, PercentilesWithinTheBucketErrorOfTheExactOnes) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> body(std::log(40000.0), 0.3);
  std::exponential_distribution<double> tail(1.0 / 200000.0);
  std::vector<int64_t> v;
  for (int k = 0; k < 20000; ++k)
    v.push_back(static_cast<int64_t>(k % 50 == 0 ? 40000 + tail(rng) : body(rng)));
  Histogram h;
  h.add(v);
  ASSERT_EQ(h.count(), 20000);
  std::vector<double> sorted(v.begin(), v.end());
  std::sort(sorted.begin(), sorted.end());
  for (double q : {0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0}) {
    const double exact = percentile_sorted(sorted, q);
    EXPECT_NEAR(h.percentile(q), exact, exact / 256.0 + 0.5) << "q " << q;
  }
  // The CDF at a value is the share of samples below it, to within the bucket holding it.
  for (double x : {30000.0, 40000.0, 60000.0, 300000.0}) {
    const double exact =
        static_cast<double>(std::upper_bound(sorted.begin(), sorted.end(), x) - sorted.begin()) /
        static_cast<double>(sorted.size());
    const double in_bucket =
        static_cast<double>(h.buckets().count(Histogram::index_of(static_cast<int64_t>(x)))
                                ? h.buckets().at(Histogram::index_of(static_cast<int64_t>(x)))
                                : 0) /
        20000.0;
    EXPECT_NEAR(h.cdf(x), exact, in_bucket + 1e-12) << x;
  }
}

TEST(Histogram, SmallValuesAreExact) {
  Histogram h;
  h.add(std::vector<int64_t>{1, 2, 3, 4, 100});
  EXPECT_DOUBLE_EQ(h.percentile(0.5), 3);
  EXPECT_DOUBLE_EQ(h.percentile(0.0), 1);
  EXPECT_DOUBLE_EQ(h.percentile(1.0), 100);
  EXPECT_DOUBLE_EQ(h.percentile(0.875), 52);  // R7: 4 + 0.5 * (100 - 4)
  EXPECT_DOUBLE_EQ(h.cdf(3), 0.6);
  EXPECT_DOUBLE_EQ(Histogram().percentile(0.5), 0);
}

TEST(Histogram, JsonRoundTripKeepsOnlyNonEmptyBuckets) {
  Histogram a, b;
  a.add(std::vector<int64_t>{5, 5, 1000, 123456789});
  b.add(1000, 3);
  a.merge(b);
  const auto j = a.to_json();
  EXPECT_EQ(j["index"].size(), 3u);
  EXPECT_EQ(j["count"], nlohmann::json({2, 4, 1}));
  const Histogram back = Histogram::from_json(nlohmann::json(j));
  EXPECT_EQ(back.buckets(), a.buckets());
  EXPECT_EQ(back.count(), 7);
  for (const char* bad : {R"({"bucket_bits": 6, "index": [], "count": []})",
                          R"({"bucket_bits": 7, "index": [1, 1], "count": [1, 1]})",
                          R"({"bucket_bits": 7, "index": [1], "count": [0]})",
                          R"({"bucket_bits": 7, "index": [1], "count": []})"})
    EXPECT_THROW(Histogram::from_json(nlohmann::json::parse(bad)), std::invalid_argument) << bad;
}

}  // namespace
}  // namespace wb
