// The tables `wakebench run` prints, as functions of a result set: layout, notes, --show, and
// matrix runs folded into one row.
#include "analysis/report/summary.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "analysis/predict/predict_results.h"
#include "analysis/results/resultset_io.h"
#include "tests/support.h"

namespace {

using nlohmann::json;
using wb::summary_table;

json ok_case(const std::string& mech_mode, const std::string& placement, const std::string& name,
             double median_ns) {
  const auto slash = mech_mode.find('/');
  return {{"name", mech_mode + "/" + name},
          {"mechanism", mech_mode.substr(0, slash)},
          {"mode", mech_mode.substr(slash + 1)},
          {"placement", placement},
          {"status", "ok"},
          {"reason", nullptr},
          {"rtt_ns", {{"median", median_ns}, {"p99", 2 * median_ns}}},
          {"counters",
           {{"waker", {{"context-switches", 1.0}}},
            {"wakee", {{"context-switches", 1.0}}},
            {"unavailable", {{"cycles", "perf_event_open: ENOENT (no hardware PMU; in a VM?)"}}}}}};
}

wb::ResultSet result_set(json cases) {
  return wb::check_result_set({{"schema", wb::kResultSchema},
                               {"schema_version", wb::kResultSchemaVersion},
                               {"environment", {{"hostname", "box"}}},
                               {"cases", std::move(cases)}});
}

TEST(Summary, RowsAreClassesColumnsAreMechanismsAndSkipsAreNoted) {
  json skipped = ok_case("pipe/threads", "smt-sibling", "smt-sibling", 0);
  skipped["status"] = "skipped";
  skipped["reason"] = "unavailable: no SMT: 1 PU per core";
  const std::string t =
      summary_table(result_set({ok_case("pipe/threads", "llc", "llc", 40000),
                                ok_case("pipe/threads", "same-cpu", "same-cpu", 3000),
                                ok_case("futex/processes", "llc", "llc", 45000), skipped}));
  EXPECT_NE(t.find("RTT median / p99 in microseconds (\"box\")"), std::string::npos) << t;
  EXPECT_NE(t.find("pipe/threads"), std::string::npos) << t;
  EXPECT_NE(t.find("futex/processes"), std::string::npos) << t;
  // same-cpu sorts before llc whatever the case order.
  EXPECT_LT(t.find("same-cpu "), t.find("llc "));
  EXPECT_NE(t.find("3.00 / 6.00"), std::string::npos) << t;
  EXPECT_NE(t.find("40.0 / 80.0"), std::string::npos) << t;
  EXPECT_NE(t.find("smt-sibling: unavailable: no SMT"), std::string::npos) << t;
}

TEST(Summary, ShowsOneCounterPerSideOrWhyNot) {
  const wb::ResultSet rs = result_set(json::array({ok_case("pipe/threads", "llc", "llc", 40000)}));
  const std::string cs = summary_table(rs, "context-switches");
  EXPECT_NE(cs.find("context-switches per round trip, waker / wakee"), std::string::npos) << cs;
  EXPECT_NE(cs.find("1.00 / 1.00"), std::string::npos) << cs;
  const std::string cy = summary_table(rs, "cycles");
  EXPECT_NE(cy.find("n/a"), std::string::npos) << cy;
  EXPECT_NE(cy.find("cycles: perf_event_open: ENOENT"), std::string::npos) << cy;
}

TEST(Summary, LargeMatrixIsOneRowSmallOneIsListed) {
  json small = json::array(), big = json::array();
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 5; ++b) {
      const std::string cell = std::to_string(a) + "-" + std::to_string(b);
      json c = ok_case("pipe/processes", "cpu:" + std::to_string(a) + "," + std::to_string(b),
                       "matrix/" + cell, a == b ? 3000 : 40000 + 1000 * a);
      if (a < 2 && b < 2) small.push_back(c);
      big.push_back(c);
    }
  const std::string s = summary_table(result_set(small));
  EXPECT_NE(s.find("matrix/0-1"), std::string::npos) << s;
  EXPECT_EQ(s.find("cells)"), std::string::npos) << s;
  const std::string b = summary_table(result_set(big));
  EXPECT_EQ(b.find("matrix/0-1"), std::string::npos) << b;
  EXPECT_NE(b.find("matrix (25 cells)"), std::string::npos) << b;
  EXPECT_NE(b.find("3.00 .. 44.0"), std::string::npos) << b;
  EXPECT_NE(b.find("draws the CPU x CPU map"), std::string::npos) << b;
}

// A seed claim that names its policy gets the model's prediction for that policy and mainline on
// this machine, for each kernel-placed case it names (here the fixture's predictions for
// pipe/processes/kernel: sync-pair same-cpu at 2.1 us, mainline llc at 5.2 us; and for
// futex/threads/kernel).
TEST(Summary, ClaimWithAPolicyShowsTheModelsPrediction) {
  json rs = json::parse(wb::test::read_fixture(WB_FIXTURES_DIR "/results/report-sample.json"));
  rs["config"]["document"]["claims"] = json::parse(R"([
    {"seed": "000", "policy": "sync-pair", "text": "keeps the pair on one CPU",
     "cases": ["pipe/processes/same-cpu", "pipe/processes/kernel", "futex/threads/kernel"]},
    {"seed": "000", "text": "no policy named", "cases": ["pipe/processes/llc"]}])");
  const wb::ResultSet set = wb::check_result_set(rs);
  const wb::ResultsPrediction predictions = wb::predict_for_results(set);
  const std::string t = wb::claims_table(set, &predictions);
  EXPECT_EQ(wb::claims_table(set, nullptr).find("model for"), std::string::npos);
  EXPECT_NE(t.find("seed 000 (sync-pair): keeps the pair on one CPU"), std::string::npos) << t;
  EXPECT_NE(t.find("model for pipe/processes/kernel: sync-pair same-cpu 100% (2.10 us); mainline "
                   "llc 100% (5.20 us)"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("model for futex/threads/kernel: sync-pair "), std::string::npos) << t;
  EXPECT_NE(t.find("seed 000: no policy named"), std::string::npos) << t;
  EXPECT_EQ(t.find("model for", t.find("no policy named")), std::string::npos) << t;
}

// A placement claim prints where each named kernel case's wakee ran; a claim about cost marked
// needs_hardware says, in an emulated guest's set, that its timings do not test it.
TEST(Summary, PlacementClaimsAndCostClaimsThatNeedHardware) {
  json rs = json::parse(wb::test::read_fixture(WB_FIXTURES_DIR "/results/report-sample.json"));
  rs["config"]["document"]["claims"] = json::parse(R"([
    {"seed": "wake-affine", "text": "NO_WA_IDLE keeps the pair split", "metric": "placement",
     "cases": ["pipe/processes/kernel", "pipe/processes/llc"]},
    {"seed": "wake-affine", "text": "split costs more", "needs_hardware": true,
     "cases": ["pipe/processes/llc"]}])");
  std::string t = wb::claims_table(wb::check_result_set(rs), nullptr);
  EXPECT_NE(t.find("here (where the wakee ran):\n    pipe/processes/kernel                    llc "
                   "70% same-cpu 30%\n    pipe/processes/llc                       pinned llc"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("needs hardware"), std::string::npos) << t;
  rs["environment"]["emulated"] = true;
  t = wb::claims_table(wb::check_result_set(rs), nullptr);
  EXPECT_NE(t.find("split costs more\n  needs hardware: this set's timings are emulated"),
            std::string::npos)
      << t;
  // The reader checks the claims as the config's parser does: a broken one is one line at load.
  rs["config"]["document"]["claims"][1].erase("text");
  try {
    wb::check_result_set(rs);
    FAIL() << "a claim without text was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "config of the set: claims[1].text: missing");
  }
}

// The golden summary (tests/golden/check.sh): the table of the report fixture, byte for byte.
// WB_GOLDEN_UPDATE=1 rewrites the file instead.
TEST(Summary, GoldenTableOfTheReportFixture) {
  const json rs =
      json::parse(wb::test::read_fixture(WB_FIXTURES_DIR "/results/report-sample.json"));
  const std::string got = summary_table(wb::check_result_set(rs));
  const std::string path = std::string(WB_SOURCE_DIR) + "/tests/golden/summary.txt";
  if (std::getenv("WB_GOLDEN_UPDATE") != nullptr) {
    std::ofstream(path) << got;
    GTEST_SKIP() << "wrote " << path;
  }
  EXPECT_EQ(got, wb::test::read_fixture(path)) << "run's summary table changed (" << path << ")";
}

}  // namespace
