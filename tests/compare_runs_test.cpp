// compare's run level (docs/cli.md#compare-the-verdict, analysis/stats/levels.h) on constructed
// runs: a drift between runs that one run a side calls DIFFERENT is not DIFFERENT with three runs a
// side while a real shift stays DIFFERENT; two runs a side of a drift say how many runs would
// decide; SAME needs the runs' interval within the margin; the output names the level; a side's
// runs are one suite on one machine. Each verdict is also shown on an input that must contradict
// it.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "analysis/compare/compare.h"
#include "analysis/results/resultset_io.h"
#include "tests/support.h"

namespace wb {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// One run's result set: case pipe/threads/llc, `reps` repetitions whose medians are `center`
// times draws around 1 with relative sd `sd` (every run draws its own).
json run_doc(std::mt19937_64& rng, double center, double sd, int reps = 10,
             const std::string& host = "h") {
  std::normal_distribution<double> noise(1.0, sd);
  json c = {{"name", "pipe/threads/llc"},  {"mechanism", "pipe"},
            {"mode", "threads"},           {"placement", "llc"},
            {"params", {{"payload", 1}}},  {"status", "ok"},
            {"round_trips", 1000},         {"warmup", 0},
            {"repetitions", json::array()}};
  for (int i = 0; i < reps; ++i) c["repetitions"].push_back({{"median", center * noise(rng)}});
  c["rtt_ns"] = {{"median", center}};
  return {{"schema", "wakebench-results"},
          {"schema_version", 3},
          {"environment", {{"hostname", host}, {"config_hash", "sha256:1"}}},
          {"cases", {c}}};
}

// Runs of one side, each `base` x its center (relative run effects), read as result sets.
struct Side {
  std::deque<ResultSet> sets;
  CompareSide side;
};
void add_runs(std::mt19937_64& rng, const std::string& stem, double base,
              const std::vector<double>& centers, Side& out, double sd = 0.01) {
  for (std::size_t k = 0; k < centers.size(); ++k) {
    const std::string path = stem + std::to_string(k) + ".json";
    out.sets.push_back(parse_result_set(run_doc(rng, base * centers[k], sd).dump(), path));
    out.side.runs.push_back(&out.sets.back());
  }
}

const CompareCell& judged(const Comparison& cmp) { return cmp.rows.at(0).cells.at(1); }

CompareVerdict verdict_of(const Side& a, const Side& b) {
  const Comparison cmp = compare_sides({a.side, b.side}, {});
  return judged(cmp).decision->verdict;
}

// The first `n` runs of a side.
Side first_runs(const Side& s, std::size_t n) {
  Side out;
  out.side.runs.assign(s.side.runs.begin(), s.side.runs.begin() + static_cast<long>(n));
  return out;
}

TEST(CompareRuns, ADriftBetweenRunsIsNotDifferentWithThreeRunsASide) {
  std::mt19937_64 rng(1);
  // The run moves the whole case by about 8 % (sd), its repetitions by 1 %: one drift, no shift.
  Side a, b;
  add_runs(rng, "a", 30000, {1.00, 1.10, 0.92}, a);
  add_runs(rng, "b", 30000, {1.09, 0.95, 1.01}, b);
  const Comparison one = compare_sides({first_runs(a, 1).side, first_runs(b, 1).side}, {});
  EXPECT_EQ(judged(one).decision->verdict, CompareVerdict::kDifferent);  // 9 %, 1 % noise
  EXPECT_EQ(judged(one).level, CompareLevel::kRepetitions);
  const Comparison three = compare_sides({a.side, b.side}, {});
  const CompareCell& c = judged(three);
  EXPECT_EQ(c.level, CompareLevel::kRuns);
  ASSERT_TRUE(c.levels && c.test);
  EXPECT_EQ(c.test->kind, CellTestKind::kWelchRuns);
  EXPECT_GT(std::sqrt(c.levels->between), 0.05);  // the runs' own spread, measured
  EXPECT_LT(std::sqrt(c.levels->within), 0.02);
  EXPECT_NE(c.decision->verdict, CompareVerdict::kDifferent);
  // Contradicting input: a real shift of 20 % across runs that move 1-2 % stays DIFFERENT.
  Side shifted_a, shifted_b;
  add_runs(rng, "sa", 30000, {1.00, 1.02, 0.99}, shifted_a);
  add_runs(rng, "sb", 30000, {1.20, 1.22, 1.19}, shifted_b);
  const Comparison real = compare_sides({shifted_a.side, shifted_b.side}, {});
  EXPECT_EQ(judged(real).level, CompareLevel::kRuns);
  EXPECT_EQ(judged(real).decision->verdict, CompareVerdict::kDifferent);
  EXPECT_TRUE(judged(real).slower());
}

TEST(CompareRuns, TwoRunsASideOfADriftSayHowManyRunsWouldDecide) {
  std::mt19937_64 rng(2);
  Side a, b;
  add_runs(rng, "a", 30000, {1.00, 1.06}, a);
  add_runs(rng, "b", 30000, {1.10, 1.15}, b);
  EXPECT_EQ(verdict_of(first_runs(a, 1), first_runs(b, 1)), CompareVerdict::kDifferent);
  const Comparison two = compare_sides({a.side, b.side}, {});
  const Decision& d = *judged(two).decision;
  ASSERT_EQ(d.verdict, CompareVerdict::kUnknown) << d.why;
  ASSERT_TRUE(d.needed && d.needed_per_run && d.detectable) << d.why;
  EXPECT_GT(*d.needed, 2u);
  EXPECT_GE(*d.needed_per_run, kMinRepetitionsPerRun);
  EXPECT_GT(*d.detectable, std::log(1.10));  // 2 a side: the t interval is wide
  const std::string text = format_comparison(two, CompareFormat::kText);
  EXPECT_NE(text.find(std::to_string(*d.needed) + " runs a side of " +
                      std::to_string(*d.needed_per_run) + " repetitions would decide it"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sd between runs"), std::string::npos) << text;
  // Contradicting input: two runs a side that agree within 1 % and differ by 30 % decide.
  Side tight_a, tight_b;
  add_runs(rng, "ta", 30000, {1.00, 1.01}, tight_a);
  add_runs(rng, "tb", 30000, {1.30, 1.31}, tight_b);
  EXPECT_EQ(verdict_of(tight_a, tight_b), CompareVerdict::kDifferent);
}

TEST(CompareRuns, SameNeedsTheRunsIntervalWithinTheMargin) {
  std::mt19937_64 rng(3);
  Side a, b;
  add_runs(rng, "a", 30000, {1.000, 1.004, 0.998, 1.002, 0.999, 1.001}, a);
  add_runs(rng, "b", 30000, {1.001, 0.997, 1.003, 1.000, 0.998, 1.002}, b);
  EXPECT_EQ(verdict_of(a, b), CompareVerdict::kSame);
  // Contradicting input: about the same means, runs that move 7 % each: their interval is too
  // wide for SAME.
  Side wide_a, wide_b;
  add_runs(rng, "wa", 30000, {1.00, 1.10, 0.92, 1.07, 0.90, 1.02}, wide_a);
  add_runs(rng, "wb", 30000, {0.95, 1.08, 1.00, 0.91, 1.09, 0.98}, wide_b);
  EXPECT_EQ(verdict_of(wide_a, wide_b), CompareVerdict::kUnknown);
}

TEST(CompareRuns, TheOutputNamesTheLevel) {
  std::mt19937_64 rng(4);
  Side a, b;
  add_runs(rng, "runs0-a", 30000, {1.00, 1.01, 0.99}, a);
  add_runs(rng, "runs0-b", 30000, {1.00, 0.99, 1.01}, b);
  const Comparison runs = compare_sides({a.side, b.side}, {});
  const std::string text = format_comparison(runs, CompareFormat::kText);
  EXPECT_NE(text.find("level: runs (3 runs vs 3 runs): each case's variance between runs"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("runs0-a*: 3 runs: runs0-a0.json, runs0-a1.json, runs0-a2.json"),
            std::string::npos)
      << text;
  for (const std::string& line : {text})
    for (std::size_t at = 0, next; at < line.size(); at = next + 1) {
      next = line.find('\n', at);
      EXPECT_LE(next - at, 100u) << line.substr(at, next - at);
    }
  const json j = json::parse(format_comparison(runs, CompareFormat::kJson));
  EXPECT_EQ(j["rows"][0]["cells"][1]["level"], "runs");
  EXPECT_EQ(j["rows"][0]["cells"][1]["runs"], 3);
  EXPECT_EQ(j["sets"][0]["runs"].size(), 3u);
  EXPECT_TRUE(j["rows"][0]["cells"][1]["run_sd_pct"].is_number());
  EXPECT_NE(format_comparison(runs, CompareFormat::kCsv).find(",runs,3,"), std::string::npos);
  // Contradicting input: one run a side rests on the repetitions, and says run-to-run variation
  // is unknown.
  const Comparison one = compare_sides({first_runs(a, 1).side, first_runs(b, 1).side}, {});
  const std::string one_text = format_comparison(one, CompareFormat::kText);
  EXPECT_NE(one_text.find("level: repetitions (1 run vs 1 run): the variation between runs is "
                          "unknown with one run a side;"),
            std::string::npos)
      << one_text;
  EXPECT_NE(one_text.find("no A/A floor (--noise) stands for it"), std::string::npos) << one_text;
  EXPECT_EQ(
      json::parse(format_comparison(one, CompareFormat::kJson))["rows"][0]["cells"][1]["level"],
      "repetitions");
}

TEST(CompareRuns, ASidesRunsAreOneSuiteOnOneMachine) {
  std::mt19937_64 rng(5);
  Side a, b;
  add_runs(rng, "a", 30000, {1.0, 1.0}, a);
  add_runs(rng, "b", 30000, {1.0}, b);
  EXPECT_NO_THROW(compare_sides({a.side, b.side}, {}));
  const auto refused = [&](const ResultSet& extra, const std::string& what) {
    CompareSide side = a.side;
    side.runs.push_back(&extra);
    try {
      compare_sides({side, b.side}, {});
      ADD_FAILURE() << "not refused: " << what;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  const ResultSet other_host =
      parse_result_set(run_doc(rng, 30000, 0.01, 10, "elsewhere").dump(), "o.json");
  refused(other_host, "compare: side 1: a0.json and o.json come from different machines");
  json doc = run_doc(rng, 30000, 0.01);
  doc["environment"]["config_hash"] = "sha256:2";
  const ResultSet other_config = parse_result_set(doc.dump(), "c.json");
  refused(other_config, "ran different configs (config_hash)");
  doc = run_doc(rng, 30000, 0.01);
  doc["cases"][0]["placement"] = "same-cpu";
  const ResultSet other_cases = parse_result_set(doc.dump(), "x.json");
  refused(other_cases, "hold different cases");
  refused(*a.side.runs[0], "are the same result set");
  EXPECT_THROW(compare_sides({CompareSide{}, b.side}, {}), std::runtime_error);
}

// The command: a lone "--" parts the sides, a folder stands for its runs, and a side with none is
// one line and exit 2.
class CompareRunsCommand : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::fresh_test_dir("wb-runs"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const fs::path& rel, const json& doc) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << doc.dump();
    return (dir_ / rel).string();
  }
  fs::path dir_;
};

TEST_F(CompareRunsCommand, SidesOfRunsByDashesOrFolders) {
  std::mt19937_64 rng(6);
  std::vector<std::string> a, b;
  for (int k = 0; k < 3; ++k) {
    a.push_back(write("A/a" + std::to_string(k) + ".json", run_doc(rng, 30000, 0.01)));
    b.push_back(write("B/b" + std::to_string(k) + ".json", run_doc(rng, 36000, 0.01)));
  }
  const test::Ran dashes = test::run_wakebench(
      {"compare", "--format", "json", a[0], a[1], a[2], "--", b[0], b[1], b[2]}, dir_);
  ASSERT_EQ(dashes.code, 0) << dashes.err;
  const json j = json::parse(dashes.out);
  EXPECT_EQ(j["rows"][0]["cells"][1]["level"], "runs");
  EXPECT_EQ(j["rows"][0]["cells"][1]["verdict"], "DIFFERENT");
  const test::Ran folders =
      test::run_wakebench({"compare", (dir_ / "A").string(), (dir_ / "B").string() + "/"}, dir_);
  ASSERT_EQ(folders.code, 0) << folders.err;
  EXPECT_NE(folders.out.find("B vs A: 1 DIFFERENT (1 slower)"), std::string::npos) << folders.out;
  EXPECT_NE(folders.out.find("level: runs (3 runs vs 3 runs)"), std::string::npos) << folders.out;
  // Contradicting input: without "--" every file is a side of one run, each against the first.
  const test::Ran plain = test::run_wakebench({"compare", a[0], a[1], b[0]}, dir_);
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_NE(plain.out.find("a1 vs a0"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("b0 vs a0"), std::string::npos) << plain.out;
  fs::create_directories(dir_ / "empty");
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"compare", a[0], "--"}, "compare: side 2 has no result set"},
      {{"compare", a[0], "--", "--", b[0]}, "compare: side 2 has no result set"},
      {{"compare", (dir_ / "empty").string(), b[0]}, "holds no result set (*.json)"},
      {{"compare", a[0], a[0], "--", b[0]}, "are the same result set"},
  };
  for (const auto& [args, expect] : bad) {
    const test::Ran r = test::run_wakebench(args, dir_);
    EXPECT_EQ(r.code, 2) << expect;
    EXPECT_EQ(r.out, "") << expect;
    EXPECT_EQ(r.err.rfind("wakebench: compare: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace wb
