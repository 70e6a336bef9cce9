// compare's verdicts on constructed result sets (schema 3): repetitions that did not sleep are left
// out, sets of one --ab run pair by round, a kernel case's change is split into placement and cost
// with its schedstat counters, and the command's --fail-on and run --until-decided exit and record
// what they say.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "analysis/compare/compare.h"
#include "analysis/results/resultset_io.h"
#include "common/schema/histogram.h"
#include "tests/support.h"

namespace wb {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// One repetition: its median (every statistic the same), marked or not, and for a kernel case its
// round trips by class: {class, round trips, RTT}.
struct Rep {
  double median;
  bool marked = false;
  std::vector<std::tuple<std::string, int64_t, int64_t>> classes;
};

json repetition(const Rep& r) {
  json j = {{"median", r.median},
            {"mean", r.median},
            {"marked", r.marked},
            {"blocked", {{"waker", r.marked ? 0.01 : 1.0}, {"wakee", r.marked ? 0.01 : 1.0}}},
            {"preempted", {{"waker", 0.0}, {"wakee", 0.0}}}};
  if (r.classes.empty()) return j;
  j["classes"] = json::object();
  for (const auto& [cls, n, ns] : r.classes) {
    Histogram h;
    h.add(ns, n);
    j["classes"][cls] = {
        {"round_trips", n}, {"mean_ns", ns}, {"median_ns", ns}, {"hist", h.to_json()}};
  }
  return j;
}

json case_doc(const std::string& placement, const std::vector<Rep>& reps) {
  json c = {{"name", "pipe/threads/" + placement},
            {"mechanism", "pipe"},
            {"mode", "threads"},
            {"placement", placement},
            {"params", {{"payload", 1}}},
            {"status", "ok"},
            {"round_trips", 1000},
            {"warmup", 0},
            {"rtt_ns", {{"median", reps.front().median}}},
            {"repetitions", json::array()}};
  int marked = 0;
  for (const Rep& r : reps) {
    c["repetitions"].push_back(repetition(r));
    marked += r.marked;
  }
  c["marked_repetitions"] = marked;
  return c;
}

ResultSet set_of(const std::vector<json>& cases, const std::string& path, json extra = {}) {
  json doc = {{"schema", "wakebench-results"}, {"schema_version", 3}, {"cases", cases}};
  for (auto& [k, v] : extra.items()) doc[k] = v;
  return parse_result_set(doc.dump(), path);
}

std::vector<Rep> around(std::mt19937_64& rng, int n, double center, double sd) {
  std::normal_distribution<double> noise(1.0, sd);
  std::vector<Rep> reps;
  for (int i = 0; i < n; ++i) reps.push_back({center * noise(rng)});
  return reps;
}

TEST(CompareVerdict, ARepetitionThatDidNotSleepIsLeftOutAndCounted) {
  std::mt19937_64 rng(1);
  std::vector<Rep> a = around(rng, 12, 30000, 0.03), b = around(rng, 12, 30000, 0.03);
  // Four repetitions of B timed syscalls, not wakeups: 500 ns. Unmarked, they drag B's values down
  // and the verdict is not SAME; marked, they are left out and the pair is SAME.
  for (int i : {1, 4, 7, 10}) b[i] = {500, false};
  const auto verdict = [&] {
    const Comparison cmp = compare_result_sets(
        {set_of({case_doc("llc", a)}, "a.json"), set_of({case_doc("llc", b)}, "b.json")}, {});
    return cmp;
  };
  const Comparison unmarked = verdict();
  ASSERT_TRUE(unmarked.rows[0].cells[1].decision);
  EXPECT_NE(unmarked.rows[0].cells[1].decision->verdict, CompareVerdict::kSame);
  EXPECT_EQ(unmarked.rows[0].cells[1].repetitions.size(), 12u);
  for (int i : {1, 4, 7, 10}) b[i].marked = true;
  const Comparison marked = verdict();
  const CompareCell& c = marked.rows[0].cells[1];
  EXPECT_EQ(c.repetitions.size(), 8u);
  EXPECT_EQ(c.marked, 4u);
  ASSERT_TRUE(c.decision);
  EXPECT_EQ(c.decision->verdict, CompareVerdict::kSame);
  std::string notes;
  for (const std::string& w : marked.warnings) notes += w + "\n";
  EXPECT_NE(notes.find("b: 4 of 12 repetitions in 1 case(s) did not sleep"), std::string::npos)
      << notes;
  EXPECT_NE(notes.find("0 of 12 in a, 4 of 12 in b"), std::string::npos) << notes;
}

// 14 of 15 repetitions of one side did not sleep (seed 003's binder-like llc/w2s2 shape): the case
// still gets a verdict, UNKNOWN, and the reason names both sides' counts.
TEST(CompareVerdict, TooFewRepetitionsLeftIsUnknownWithTheReason) {
  std::mt19937_64 rng(5);
  std::vector<Rep> a = around(rng, 15, 30000, 0.03), b = around(rng, 15, 30000, 0.03);
  for (int i = 1; i < 15; ++i) b[i].marked = true;
  const Comparison cmp = compare_result_sets(
      {set_of({case_doc("llc", a)}, "a.json"), set_of({case_doc("llc", b)}, "b.json")}, {});
  const CompareCell& c = cmp.rows[0].cells[1];
  ASSERT_TRUE(c.decision);
  EXPECT_EQ(c.decision->verdict, CompareVerdict::kUnknown);
  EXPECT_EQ(c.decision->why,
            "too few repetitions to test (at least 2 a side): base 15 of 15, this set 1 of 15 (14 "
            "did not sleep)");
  EXPECT_EQ(cmp.counts(1).at(CompareVerdict::kUnknown), 1);
  // With two left it is tested as before: the reason is no longer this one.
  b[1].marked = false;
  const Comparison two = compare_result_sets(
      {set_of({case_doc("llc", a)}, "a.json"), set_of({case_doc("llc", b)}, "b.json")}, {});
  ASSERT_TRUE(two.rows[0].cells[1].decision);
  EXPECT_EQ(two.rows[0].cells[1].decision->why.find("too few repetitions to test"),
            std::string::npos);
}

// Sets that share no case compare nothing: refused in one line (--fail-on would otherwise pass).
TEST(CompareVerdict, SetsThatShareNoCaseAreRefused) {
  std::mt19937_64 rng(6);
  const std::vector<Rep> a = around(rng, 5, 30000, 0.03);
  try {
    compare_result_sets(
        {set_of({case_doc("llc", a)}, "a.json"), set_of({case_doc("same-cpu", a)}, "b.json")}, {});
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "compare: b.json shares no case with the baseline a.json (case names, params and "
              "placements differ)");
  }
  EXPECT_NO_THROW(
      compare_result_sets({set_of({case_doc("llc", a)}, "a.json"),
                           set_of({case_doc("same-cpu", a), case_doc("llc", a)}, "b.json")},
                          {}));
}

TEST(CompareVerdict, SetsOfOneAbRunPairByRound) {
  // Rounds that differ by 30 % between them and a 4 % change within each round: paired, the
  // change is DIFFERENT; the same values as two independent runs are not.
  std::mt19937_64 rng(2);
  std::normal_distribution<double> round(1.0, 0.3), within(1.0, 0.005);
  std::vector<Rep> a, b;
  for (int r = 0; r < 12; ++r) {
    const double f = 30000 * std::max(0.3, round(rng));
    a.push_back({f * within(rng)});
    b.push_back({f * 1.04 * within(rng)});
  }
  const auto with_rounds = [](json c) {
    for (std::size_t r = 0; r < c["repetitions"].size(); ++r)
      c["repetitions"][r]["ab"] = {{"round", r}, {"read_back", {{"sysctl:kernel.x", "1"}}}};
    return c;
  };
  const auto ab = [](int k) {
    return json{{"ab",
                 {{"id", "run1"},
                  {"setting", k},
                  {"settings", 2},
                  {"label", "x"},
                  {"values", {{"sysctl:kernel.x", std::to_string(k)}}},
                  {"order_seed", 7}}}};
  };
  const Comparison paired =
      compare_result_sets({set_of({with_rounds(case_doc("llc", a))}, "a.json", ab(0)),
                           set_of({with_rounds(case_doc("llc", b))}, "b.json", ab(1))},
                          {});
  const CompareCell& p = paired.rows[0].cells[1];
  EXPECT_TRUE(p.paired());
  ASSERT_TRUE(p.decision);
  EXPECT_EQ(p.decision->verdict, CompareVerdict::kDifferent);
  EXPECT_TRUE(p.slower());
  const Comparison apart = compare_result_sets(
      {set_of({case_doc("llc", a)}, "a.json"), set_of({case_doc("llc", b)}, "b.json")}, {});
  EXPECT_FALSE(apart.rows[0].cells[1].paired());
  EXPECT_NE(apart.rows[0].cells[1].decision->verdict, CompareVerdict::kDifferent);
}

// A kernel case that moved from 70 % stacked to 30 %, each placement costing the same: the
// change is placement, the shares are DIFFERENT; the schedstat counters show per round trip.
TEST(CompareVerdict, AKernelCaseThatMovedIsExplainedByPlacement) {
  const auto reps = [](int64_t stacked) {
    std::vector<Rep> out;
    for (int i = 0; i < 10; ++i) {
      const int64_t same = 5000 + 10 * i, llc = 40000 + 50 * i;
      const double mean = (stacked * same + (100 - stacked) * llc) / 100.0;
      out.push_back({mean, false, {{"same-cpu", stacked, same}, {"llc", 100 - stacked, llc}}});
    }
    return out;
  };
  json a = case_doc("kernel", reps(70)), b = case_doc("kernel", reps(30));
  const auto schedstat = [](int remote) {
    return json{
        {"schedstats_enabled", true},
        {"cpus",
         {{"0", {{"domains", {{{"domain", 0}, {"name", "MC"}, {"ttwu_wake_remote", remote}}}}}},
          {"1", {{"domains", {{{"domain", 0}, {"name", "MC"}, {"ttwu_wake_remote", remote}}}}}}}}};
  };
  a["schedstat"] = schedstat(3000);
  b["schedstat"] = schedstat(7000);
  const Comparison cmp = compare_result_sets({set_of({a}, "a.json"), set_of({b}, "b.json")}, {});
  ASSERT_EQ(cmp.why.size(), 1u);
  const WhyChanged& w = cmp.why[0];
  ASSERT_TRUE(w.parts);
  EXPECT_NEAR(w.parts->placement + w.parts->cost, w.parts->mean_b - w.parts->mean_a, 1e-6);
  EXPECT_GT(w.parts->placement, 0.9 * (w.parts->mean_b - w.parts->mean_a));
  ASSERT_EQ(w.shares.size(), 2u);
  for (const ClassShareVerdict& s : w.shares)
    EXPECT_EQ(s.decision.verdict, CompareVerdict::kDifferent) << s.cls;
  ASSERT_EQ(w.schedstat.rows.size(), 1u);
  EXPECT_EQ(w.schedstat.rows[0].domain, "domain0 (MC)");
  EXPECT_NEAR(*w.schedstat.rows[0].base, 6000.0 / 10000, 1e-9);  // 2 CPUs, 10 x 1000 round trips
  EXPECT_NEAR(*w.schedstat.rows[0].other, 14000.0 / 10000, 1e-9);
  const std::string text = format_comparison(cmp, CompareFormat::kText);
  EXPECT_NE(text.find("why kernel-placed cases changed"), std::string::npos) << text;
  EXPECT_NE(text.find("= placement +"), std::string::npos) << text;
  // The same shares on both sides: no placement part, the share verdicts are not DIFFERENT.
  b = case_doc("kernel", reps(70));
  b["schedstat"] = {{"schedstats_enabled", false}};
  const Comparison same = compare_result_sets({set_of({a}, "a.json"), set_of({b}, "b.json")}, {});
  EXPECT_NEAR(same.why[0].parts->placement, 0, 1e-6);
  for (const ClassShareVerdict& s : same.why[0].shares)
    EXPECT_NE(s.decision.verdict, CompareVerdict::kDifferent) << s.cls;
  EXPECT_NE(same.why[0].schedstat.other_off.find("sysctl -w kernel.sched_schedstats=1"),
            std::string::npos);
  // A set whose windows an older wakebench added into a list is said so, not read as no counters.
  b["schedstat"] = {{"schedstats_enabled", true}, {"cpus", json::array({nullptr})}};
  const Comparison old = compare_result_sets({set_of({a}, "a.json"), set_of({b}, "b.json")}, {});
  EXPECT_NE(old.why[0].schedstat.other_off.find("schedstat.cpus is a list"), std::string::npos)
      << old.why[0].schedstat.other_off;
}

// Repetitions that ran all stacked or all split: each repetition's share is 0 or 1. From 70 % to
// 95 % stacked the shares' median shift is 0, yet the share moved: never SAME (a rank interval
// said SAME here).
TEST(CompareVerdict, AllOrNothingSharesThatMovedAreNotSame) {
  const auto reps = [](int stacked) {
    std::vector<Rep> out;
    for (int i = 0; i < 20; ++i) {
      const bool s = i < stacked;
      out.push_back(
          {s ? 5000.0 : 40000.0, false, {{s ? "same-cpu" : "llc", 1000, s ? 5000 : 40000}}});
    }
    return out;
  };
  const Comparison cmp = compare_result_sets({set_of({case_doc("kernel", reps(14))}, "a.json"),
                                              set_of({case_doc("kernel", reps(19))}, "b.json")},
                                             {});
  ASSERT_EQ(cmp.why.size(), 1u);
  ASSERT_EQ(cmp.why[0].shares.size(), 2u);
  for (const ClassShareVerdict& v : cmp.why[0].shares)
    EXPECT_NE(v.decision.verdict, CompareVerdict::kSame) << v.cls;
  EXPECT_NEAR(cmp.why[0].class_median_ns.at("llc").first, 40000, 1e-9);
}

// Every case 15 % slower: the verdicts stand, and a note says the whole machine may have moved;
// with the cases moving both ways, no such note.
TEST(CompareVerdict, MostCasesMovingOneWayAreNoted) {
  std::mt19937_64 rng(4);
  const std::vector<std::string> places = {"same-cpu", "llc", "cluster", "smt-sibling", "kernel"};
  const auto sets = [&](const std::vector<double>& factors) {
    std::vector<json> a, b;
    for (std::size_t i = 0; i < places.size(); ++i) {
      a.push_back(case_doc(places[i], around(rng, 10, 30000, 0.02)));
      b.push_back(case_doc(places[i], around(rng, 10, 30000 * factors[i], 0.02)));
    }
    return std::vector<ResultSet>{set_of(a, "a.json"), set_of(b, "b.json")};
  };
  const auto noted = [](const Comparison& cmp) {
    for (const std::string& w : cmp.warnings)
      if (w.find("a shift of the whole machine") != std::string::npos) return true;
    return false;
  };
  const Comparison all = compare_result_sets(sets({1.15, 1.15, 1.15, 1.15, 1.15}), {});
  EXPECT_EQ(all.counts(1).at(CompareVerdict::kDifferent), 5);
  EXPECT_TRUE(noted(all));
  EXPECT_NE(format_comparison(all, CompareFormat::kText).find("most cases moved one way"),
            std::string::npos);
  const Comparison mixed = compare_result_sets(sets({1.15, 0.85, 1.15, 0.85, 1.15}), {});
  EXPECT_EQ(mixed.counts(1).at(CompareVerdict::kDifferent), 5);
  EXPECT_FALSE(noted(mixed));
}

class CompareCommand : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::fresh_test_dir("wb-verdict"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const json& doc) {
    std::ofstream(dir_ / name) << doc.dump();
    return (dir_ / name).string();
  }
  int run(const std::string& args) {
    const std::string cmd = std::string(WB_BINARY) + " " + args + " >" + (dir_ / "out").string() +
                            " 2>" + (dir_ / "err").string();
    const int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
  }
  std::string err() const { return test::slurp(dir_ / "err"); }
  fs::path dir_;
};

TEST_F(CompareCommand, FailOnSlowerExitsOneOnlyWhenACaseIsSlower) {
  std::mt19937_64 rng(3);
  const auto set_file = [&](const std::string& name, double center) {
    const json doc = {{"schema", "wakebench-results"},
                      {"schema_version", 3},
                      {"cases", {case_doc("llc", around(rng, 10, center, 0.02))}}};
    return write(name, doc);
  };
  const std::string a = set_file("a.json", 30000), slower = set_file("slower.json", 36000),
                    faster = set_file("faster.json", 24000);
  EXPECT_EQ(run("compare " + a + " " + slower + " --fail-on slower"), 1) << err();
  EXPECT_EQ(run("compare " + a + " " + faster + " --fail-on slower"), 0) << err();
  EXPECT_EQ(run("compare " + a + " " + faster + " --fail-on different"), 1) << err();
  EXPECT_EQ(run("compare " + a + " " + slower), 0) << err();
  EXPECT_EQ(run("compare " + a + " " + slower + " --fail-on sometimes"), 2);
}

// A gate never passes a side on which nothing ran: with every case of NEW failed, skipped,
// missing, or no case at all, --fail-on exits 1 and says why (it exited 0 with "0 DIFFERENT,
// 0 SAME, 0 UNKNOWN"); without --fail-on the comparison is shown, exit 0. One case missing of
// two is enough.
TEST_F(CompareCommand, FailOnFailsWhenABaselineCaseHasNoVerdict) {
  std::mt19937_64 rng(5);
  const json base_case = case_doc("llc", around(rng, 10, 30000, 0.02));
  json other = case_doc("same-cpu", around(rng, 10, 5000, 0.02));
  const auto set_file = [&](const std::string& name, const json& cases) {
    return write(name, {{"schema", "wakebench-results"}, {"schema_version", 3}, {"cases", cases}});
  };
  const std::string a = set_file("a.json", {base_case, other});
  json failed = base_case, skipped = base_case;
  for (json* c : {&failed, &skipped}) {
    for (const char* k : {"rtt_ns", "repetitions", "marked_repetitions", "round_trips", "warmup"})
      c->erase(k);
    (*c)["status"] = c == &failed ? "failed" : "skipped";
    (*c)["reason"] = "partner exited";
  }
  const std::map<std::string, std::string> sides = {
      {set_file("failed.json", {failed, other}), "1 case(s) measured in the baseline"},
      {set_file("skipped.json", {skipped, other}), "1 case(s) measured in the baseline"},
      {set_file("missing.json", json::array({other})), "1 case(s) measured in the baseline"},
      {set_file("empty.json", json::array()), "no case was compared"}};
  for (const auto& [b, why] : sides) {
    SCOPED_TRACE(b);
    EXPECT_EQ(run("compare " + a + " " + b + " --fail-on not-same"), 1) << err();
    EXPECT_NE(err().find("wakebench: --fail-on not-same: " + why), std::string::npos) << err();
    EXPECT_EQ(run("compare " + a + " " + b), 0) << err();
  }
  EXPECT_EQ(run("compare " + a + " " + set_file("same.json", {base_case, other}) +
                " --fail-on different"),
            0)
      << err();
}

// A real run against a baseline whose RTTs were divided by 100: the run is slower by far more than
// any load on the machine makes two runs differ (the baseline's own run may have been slowed by
// other tests), DIFFERENT at the first look, where it stops. The sequential verdicts are recorded.
TEST_F(CompareCommand, UntilDecidedStopsAtTheLookThatDecides) {
  const std::string cfg = write(
      "cfg.json",
      json{{"schema_version", 1},
           {"name", "ud"},
           {"defaults", {{"round_trips", 300}, {"warmup", 30}, {"repetitions", 6}}},
           {"cases",
            {{{"mechanisms", {"pipe"}}, {"modes", {"threads"}}, {"placements", {"same-cpu"}}}}}});
  const std::string base = (dir_ / "base.json").string();
  ASSERT_EQ(run("run --config " + cfg + " --out " + base), 0) << err();
  json doc = json::parse(std::ifstream(base));
  for (auto& c : doc["cases"])
    for (auto& r : c["repetitions"])
      for (const char* k : {"median", "mean", "min", "p90", "p99", "p999", "max"})
        if (r.contains(k) && r[k].is_number()) r[k] = r[k].get<double>() / 100;
  for (auto& c : doc["cases"]) c["rtt_ns"]["median"] = c["rtt_ns"]["median"].get<double>() / 100;
  const std::string scaled = write("scaled.json", doc);
  const std::string out = (dir_ / "new.json").string();
  ASSERT_EQ(run("run --config " + cfg + " --out " + out + " --until-decided " + scaled +
                " --looks 3 --budget 60"),
            0)
      << err();
  const json ud = json::parse(std::ifstream(out))["until_decided"];
  ASSERT_EQ(ud["cases"].size(), 1u) << ud.dump();
  const json& v = ud["cases"].begin().value();
  EXPECT_EQ(v["verdict"], "DIFFERENT") << ud.dump();
  EXPECT_EQ(v["look"], 1);
  EXPECT_EQ(ud["looks"], 1);
  EXPECT_NE(err().find("look 1 of 3"), std::string::npos) << err();
  EXPECT_EQ(run("run --config " + cfg + " --until-decided " + scaled + " --ab sysctl:kernel.x=1,2"),
            2);
  EXPECT_NE(err().find("--until-decided: not with --ab"), std::string::npos) << err();
  EXPECT_EQ(run("run --config " + cfg + " --until-decided " + cfg), 2);
  EXPECT_NE(err().find(cfg), std::string::npos) << err();
}

}  // namespace
}  // namespace wb
