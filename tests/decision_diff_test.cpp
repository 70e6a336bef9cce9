// The decisions that differ (analysis/decision_diff.h) on committed records: the synthetic smt2
// sample (tests/fixtures/decisions/smt2-mainline.txt) and the lab's mainline set
// (decisions/smt2-3core-mainline). A record altered in its inputs or in the CPU the kernel chose
// must move the counts; the kernel is named only past the minimum count and the share; the cost
// is the pinned medians' difference; `replay --diff` on the set prints the same.
#include "analysis/decision_diff.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/support.h"

namespace wb {
namespace {

const SchedTopology& smt2() {
  static const SchedTopology sched(
      Topology::from_xml(std::string(WB_SOURCE_DIR) + "/configs/lab/topologies/smt2.xml"));
  return sched;
}

std::vector<DecisionRecord> sample() {
  return parse_decisions(test::read_fixture(test::fixture_path("decisions/smt2-mainline.txt")));
}

std::vector<const WakeupPolicy*> pair(const char* a, const char* b) {
  return {&policy_by_id(a), &policy_by_id(b)};
}

// mainline against sync-2017 (which pulls a sync wakee onto the waker's CPU): the sample's sync
// wakeups split where mainline leaves the waker's CPU, and the kernel (mainline) followed
// mainline on each.
TEST(DecisionDiff, SyncWakeupsSplitMainlineFromSync2017AndTheKernelFollowedMainline) {
  const std::vector<DecisionRecord> d = sample();
  const PairSplit p = split_decisions(d, smt2(), pair("mainline", "sync-2017")).pairs[0];
  EXPECT_EQ(p.records, static_cast<int64_t>(d.size()));
  ASSERT_GT(p.split, 0);
  EXPECT_EQ(p.kernel_a, p.split);
  EXPECT_EQ(p.kernel_b, 0);
  EXPECT_EQ(p.by_state.at(SplitState::kSync), p.split);
  for (const auto& [classes, n] : p.by_classes) EXPECT_EQ(classes.second, "same-cpu");
  EXPECT_EQ(p.named(), "");  // far fewer than kMinSplitToName
  // A policy against itself never splits.
  EXPECT_EQ(split_decisions(d, smt2(), pair("mainline", "mainline")).pairs[0].split, 0);
}

// One record altered: its wake made non-sync (sync-2017 then decides as mainline: one split
// fewer), or its recorded CPU moved to sync-2017's choice (the kernel followed the other once).
TEST(DecisionDiff, AnAlteredRecordIsCounted) {
  const std::vector<DecisionRecord> d = sample();
  const PairSplit before = split_decisions(d, smt2(), pair("mainline", "sync-2017")).pairs[0];
  ASSERT_FALSE(before.first.empty());
  const std::size_t at = before.first[0].index;
  std::vector<DecisionRecord> not_sync = d;
  not_sync[at].wake_flags &= ~kWfSync;
  EXPECT_EQ(split_decisions(not_sync, smt2(), pair("mainline", "sync-2017")).pairs[0].split,
            before.split - 1);
  std::vector<DecisionRecord> moved = d;
  moved[at].cpu = before.first[0].b.cpu;
  const PairSplit after = split_decisions(moved, smt2(), pair("mainline", "sync-2017")).pairs[0];
  EXPECT_EQ(after.split, before.split);
  EXPECT_EQ(after.kernel_a, before.kernel_a - 1);
  EXPECT_EQ(after.kernel_b, 1);
}

// Named past kMinSplitToName split records when the kernel followed one model on >= 99% and the
// other on <= 1%: 150 copies of a split record name mainline, or sync-2017 when the kernel chose
// its CPU; 99 copies, or 3 of 150 the other way, name neither.
TEST(DecisionDiff, AKernelIsNamedOnlyPastTheCountAndTheShare) {
  const std::vector<DecisionRecord> d = sample();
  const PairSplit one = split_decisions(d, smt2(), pair("mainline", "sync-2017")).pairs[0];
  ASSERT_FALSE(one.first.empty());
  const SplitRecord& s = one.first[0];
  const auto named = [&](std::size_t copies, std::size_t to_b) {
    std::vector<DecisionRecord> many(copies, d[s.index]);
    for (std::size_t i = 0; i < to_b; ++i) many[i].cpu = s.b.cpu;
    return split_decisions(many, smt2(), pair("mainline", "sync-2017")).pairs[0].named();
  };
  EXPECT_EQ(named(150, 0), "mainline");
  EXPECT_EQ(named(150, 150), "sync-2017");
  EXPECT_EQ(named(150, 1), "mainline");
  EXPECT_EQ(named(150, 3), "");
  EXPECT_EQ(named(99, 0), "");
}

// The first-order cost is pinned[b's class] - pinned[a's class] per split wakeup; unpriced when
// a class has no median.
TEST(DecisionDiff, TheCostIsThePinnedMediansDifference) {
  const std::vector<DecisionRecord> d = sample();
  const std::map<std::string, double> pinned = {
      {"same-cpu", 5000}, {"smt-sibling", 20000}, {"llc", 30000}};
  const PairSplit p =
      split_decisions(d, smt2(), pair("mainline", "sync-2017"), {}, pinned).pairs[0];
  ASSERT_GT(p.split, 0);
  double want = 0;
  for (const auto& [c, n] : p.by_classes)
    want += (pinned.at(c.second) - pinned.at(c.first)) * static_cast<double>(n);
  ASSERT_TRUE(p.cost_ns().has_value());
  EXPECT_DOUBLE_EQ(*p.cost_ns(), want / static_cast<double>(p.split));
  EXPECT_FALSE(split_decisions(d, smt2(), pair("mainline", "sync-2017"), {}, {{"llc", 1}})
                   .pairs[0]
                   .cost_ns()
                   .has_value());
}

// What-if: each policy's mix over the recorded states; the kernel's own is the recorded CPUs'.
// On mainline's records mainline's mix is the kernel's (it reproduces every record), sync-2017's
// moves the split records to same-cpu; an altered recorded CPU moves only the kernel's.
TEST(DecisionDiff, EachPolicysMixOverTheRecordedStates) {
  const std::vector<DecisionRecord> d = sample();
  const Splits s = split_decisions(d, smt2(), pair("mainline", "sync-2017"));
  ASSERT_EQ(s.mixes.size(), 3u);
  EXPECT_EQ(s.mixes[0].policy, "kernel");
  EXPECT_EQ(s.mixes[1].classes, s.mixes[0].classes);
  const PairSplit& p = s.pairs[0];
  int64_t to_same = 0;
  for (const auto& [c, n] : p.by_classes)
    if (c.first != "same-cpu") to_same += n;
  const auto count = [](const PolicyMix& m, const char* c) {
    return m.classes.count(c) ? m.classes.at(c) : 0;
  };
  EXPECT_EQ(count(s.mixes[2], "same-cpu"), count(s.mixes[1], "same-cpu") + to_same);
  std::vector<DecisionRecord> moved = d;
  moved[p.first[0].index].cpu = p.first[0].b.cpu;
  const Splits m = split_decisions(moved, smt2(), pair("mainline", "sync-2017"));
  EXPECT_NE(m.mixes[0].classes, s.mixes[0].classes);
  EXPECT_EQ(m.mixes[1].classes, s.mixes[1].classes);
  const std::map<std::string, double> pinned = {
      {"same-cpu", 5000}, {"llc", 30000}, {"smt-sibling", 20000}};
  const Splits priced = split_decisions(d, smt2(), pair("mainline", "sync-2017"), {}, pinned);
  ASSERT_TRUE(priced.mixes[2].rtt_ns().has_value());
  EXPECT_LT(*priced.mixes[2].rtt_ns(), *priced.mixes[1].rtt_ns());
}

// `replay SET --diff all` on the lab set: every pair once, the verdict line first, within 100
// columns; the kernel (mainline) followed mainline on every split record; JSON the same counts.
// --diff with one policy, or with --policy, is refused in one line.
TEST(DecisionDiff, ReplayDiffOnTheLabSet) {
  const auto dir = test::fresh_test_dir("decision-diff");
  const std::string set = test::fixture_path("decisions/smt2-3core-mainline/results.json");
  const test::Ran text = test::run_wakebench({"replay", set, "--diff", "all"}, dir);
  ASSERT_EQ(text.code, 0) << text.err;
  const std::size_t n = all_policies().size();
  std::size_t verdicts = 0;
  std::istringstream lines(text.out);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), 100u) << line;
    if (line.rfind("  ", 0) != 0 && line.find(" vs ") != std::string::npos) ++verdicts;
  }
  EXPECT_EQ(verdicts, n * (n - 1) / 2);
  EXPECT_EQ(text.out.rfind("where the wakee goes", 0), 0u) << text.out;
  EXPECT_NE(text.out.find("\n  kernel "), std::string::npos) << text.out;
  const test::Ran json = test::run_wakebench({"replay", set, "--diff", "all", "--json"}, dir);
  ASSERT_EQ(json.code, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["mixes"][0]["policy"], "kernel");
  EXPECT_EQ(doc["mixes"][1]["classes"], doc["mixes"][0]["classes"]);  // mainline reproduces all
  for (const auto& p : doc["pairs"])
    if (p["a"] == "mainline") {
      EXPECT_EQ(p["kernel_a"], p["split"]) << p.dump();
    }
  const test::Ran one = test::run_wakebench({"replay", set, "--diff", "mainline"}, dir);
  EXPECT_EQ(one.code, 2);
  EXPECT_NE(one.err.find("replay --diff: give two or more policies, or all"), std::string::npos);
  const test::Ran both =
      test::run_wakebench({"replay", set, "--diff", "all", "--policy", "mainline"}, dir);
  EXPECT_EQ(both.code, 2);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wb
