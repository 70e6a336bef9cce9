// The premises' verdicts (docs/cli.md#compare-the-verdict, analysis/predict/predict_results.h): a
// premise "a is cheaper than b" holds or fails only where compare's verdict on the two cases'
// repetitions is decided, and otherwise "cannot tell" with the change it could detect. Each reading
// is shown on an input that must give another.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "analysis/predict/predict_results.h"
#include "tests/support.h"

namespace wb {
namespace {

using json = nlohmann::json;

// Box C's results (tests/fixtures/predict) with pipe/threads same-cpu and llc given `reps`
// repetitions each around their centers with relative sd `sd`.
json with_repetitions(double same_cpu, double llc, double sd, int reps = 12) {
  json rs =
      json::parse(test::read_fixture(std::string(WB_FIXTURES_DIR) + "/predict/results-box-c.json"));
  rs["topology"]["xml"] =
      test::read_fixture(test::topologies_dir() / "model/box-c-8c-smt2-stride8-1llc.xml");
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(1.0, sd);
  for (json& c : rs["cases"]) {
    const double center = c["name"] == "pipe/threads/same-cpu" ? same_cpu
                          : c["name"] == "pipe/threads/llc"    ? llc
                                                               : 0;
    if (center == 0) continue;
    c["rtt_ns"]["median"] = center;
    c["repetitions"] = json::array();
    for (int i = 0; i < reps; ++i) c["repetitions"].push_back({{"median", center * noise(rng)}});
  }
  return rs;
}

// sync-pair's check at pipe/threads: same-cpu against llc.
const json& sync_pair_check(const json& p) { return p["premises"]["sync-pair"]["checks"][0]; }

TEST(PremiseVerdict, HoldsOnlyWhereTheDifferenceIsDecided) {
  const ResultsPrediction clear = predict_for_results(with_repetitions(2000, 4200, 0.02));
  const json check = sync_pair_check(to_json(clear));
  EXPECT_EQ(check["verdict"], "holds") << check.dump();
  EXPECT_EQ(check["compare_verdict"], "DIFFERENT");
  EXPECT_NE(render_results_text(clear).find("same-cpu 2.00 us vs llc 4.20 us (holds, 52.38% ["),
            std::string::npos)
      << render_results_text(clear);
  // Contradicting input: 3 % cheaper by the medians under 12 % repetition noise (this VM's).
  const ResultsPrediction noisy = predict_for_results(with_repetitions(4074, 4200, 0.12));
  const json n = sync_pair_check(to_json(noisy));
  EXPECT_TRUE(n["holds"].get<bool>()) << "the medians' order alone";
  EXPECT_EQ(n["verdict"], "cannot tell") << n.dump();
  EXPECT_GT(n["detectable_pct"].get<double>(), 3.0);
  const std::string text = render_results_text(noisy);
  EXPECT_NE(text.find("(cannot tell, 3.00% ["), std::string::npos) << text;
  EXPECT_NE(text.find("it detects"), std::string::npos) << text;
  EXPECT_NE(text.find("holds / fails: compare's verdict"), std::string::npos) << text;
}

TEST(PremiseVerdict, FailsWhenDecidedTheOtherWayOrTheSame) {
  const json dearer =
      sync_pair_check(to_json(predict_for_results(with_repetitions(5000, 4200, 0.02))));
  EXPECT_EQ(dearer["verdict"], "fails") << dearer.dump();
  EXPECT_EQ(dearer["compare_verdict"], "DIFFERENT");
  const ResultsPrediction same = predict_for_results(with_repetitions(4200, 4200, 0.005, 20));
  EXPECT_EQ(sync_pair_check(to_json(same))["compare_verdict"], "SAME");
  EXPECT_EQ(sync_pair_check(to_json(same))["verdict"], "fails");
  EXPECT_NE(render_results_text(same).find("(fails: the same within +-5%"), std::string::npos)
      << render_results_text(same);
  // Contradicting input: without repetitions nothing is decided, whatever the medians say.
  json bare = with_repetitions(2000, 4200, 0.02);
  for (json& c : bare["cases"]) c.erase("repetitions");
  const json none = sync_pair_check(to_json(predict_for_results(bare)));
  EXPECT_EQ(none["verdict"], "cannot tell") << none.dump();
}

}  // namespace
}  // namespace wb
