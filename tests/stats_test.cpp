#include "common/schema/stats.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace wb {
namespace {

TEST(Stats, PercentilesInterpolateBetweenRanks) {
  std::vector<int64_t> v;
  for (int i = 1; i <= 101; ++i) v.push_back(i);  // 1..101
  const SampleStats s = compute_stats(std::span<const int64_t>(v));
  EXPECT_EQ(s.count, 101u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 101);
  EXPECT_DOUBLE_EQ(s.median, 51);
  EXPECT_DOUBLE_EQ(s.p90, 91);
  EXPECT_DOUBLE_EQ(s.p99, 100);
  EXPECT_NEAR(s.p999, 100.9, 1e-9);
  EXPECT_DOUBLE_EQ(s.mean, 51);
}

TEST(Stats, StddevAndMdape) {
  const std::vector<int64_t> v = {90, 100, 100, 110, 200};
  const SampleStats s = compute_stats(std::span<const int64_t>(v));
  EXPECT_DOUBLE_EQ(s.median, 100);
  // |dev|/median in %: 10, 0, 0, 10, 100 -> median 10.
  EXPECT_DOUBLE_EQ(s.mdape_pct, 10);
  EXPECT_NEAR(s.stddev, 45.27692569068709, 1e-9);  // sqrt(8200 / 4)
}

TEST(Stats, EmptyAndSingle) {
  EXPECT_EQ(compute_stats(std::vector<double>{}).count, 0u);
  const SampleStats one = compute_stats(std::vector<double>{7});
  EXPECT_DOUBLE_EQ(one.median, 7);
  EXPECT_DOUBLE_EQ(one.p99, 7);
  EXPECT_DOUBLE_EQ(one.stddev, 0);
}

TEST(Stats, JsonHasTheContractKeys) {
  const auto j = to_json(compute_stats(std::vector<double>{1, 2, 3}));
  for (const char* k :
       {"min", "mean", "median", "p90", "p99", "p999", "max", "stddev", "mdape_pct"})
    EXPECT_TRUE(j.contains(k)) << k;
}

}  // namespace
}  // namespace wb
