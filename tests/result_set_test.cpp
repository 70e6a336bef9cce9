#include "common/schema/result_set.h"

#include <gtest/gtest.h>

#include "common/measure/knobs.h"
#include "common/schema/histogram.h"
#include "tests/support.h"

namespace wb {
namespace {

CaseRecord case_record(int64_t begin_ns, int64_t end_ns) {
  CaseRecord rec;
  rec.spec.name = "pipe/threads/same-cpu";
  rec.spec.mechanism = "pipe";
  rec.spec.placement = "same-cpu";
  rec.spec.cpu_pairs = {{0, 0}};
  for (int r = 0; r < 2; ++r) {
    PairSamples p;
    for (int64_t k = 1; k <= 100; ++k) {
      p.rtt_ns.push_back(1000 * k + r);
      p.wakeup_ns.push_back(400 * k);
      p.waker_cpu.push_back(0);
      p.wakee_cpu.push_back(0);
    }
    p.begin_ns = begin_ns;
    p.end_ns = end_ns;
    rec.repetitions.push_back({p});
  }
  return rec;
}

// A repetition whose span was never recorded (begin == end) measured no rate: tps is null, in the
// case and in each repetition, not 0.0 (which reads as "no transaction went through").
TEST(ResultSet, TpsIsNullWhenTheSpanIsZero) {
  const auto j = case_json(case_record(0, 0), test::this_machine());
  EXPECT_TRUE(j["tps"].is_null()) << j["tps"];
  for (const auto& rep : j["repetitions"]) EXPECT_TRUE(rep["tps"].is_null()) << rep["tps"];
  const auto k = case_json(case_record(1'000'000'000, 1'000'500'000), test::this_machine());
  EXPECT_DOUBLE_EQ(k["tps"].get<double>(), 200000.0);  // 100 round trips in 0.5 ms
}

// Every metric compare offers has a value per repetition, and the histograms give back the
// repetition's percentiles to within the bucket error.
TEST(ResultSet, RepetitionsCarryEveryStatisticAndTheHistograms) {
  const auto j = case_json(case_record(0, 1000), test::this_machine());
  ASSERT_EQ(j["repetitions"].size(), 2u);
  const auto& rep = j["repetitions"][1];
  for (const char* k : {"min", "mean", "median", "p90", "p99", "p999", "max", "wakeup-min",
                        "wakeup-median", "wakeup-p90", "wakeup-p99", "wakeup-p999", "wakeup-max"})
    EXPECT_TRUE(rep.contains(k) && rep[k].is_number()) << k;
  EXPECT_DOUBLE_EQ(rep["min"].get<double>(), 1001);
  const Histogram rtt = Histogram::from_json(nlohmann::json(rep["rtt_hist"]));
  const Histogram wake = Histogram::from_json(nlohmann::json(rep["wakeup_hist"]));
  EXPECT_EQ(rtt.count(), 100);
  EXPECT_EQ(wake.count(), 100);
  for (const char* k : {"median", "p90", "p99"}) {
    const double q = std::string(k) == "median" ? 0.5 : std::string(k) == "p90" ? 0.9 : 0.99;
    EXPECT_NEAR(rtt.percentile(q), rep[k].get<double>(), rep[k].get<double>() / 256);
  }
  EXPECT_EQ(j["wakeup_ns"]["p999"].is_number(), true);
}

}  // namespace
}  // namespace wb
