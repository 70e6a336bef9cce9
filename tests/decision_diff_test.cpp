// The decisions that differ (analysis/predict/decision_diff.h) on committed records: the synthetic
// smt2 sample (tests/fixtures/decisions/smt2-mainline.txt) and the lab's mainline set
// (decisions/smt2-3core-mainline). A record altered in its inputs or in the CPU the kernel chose
// must move the counts; the kernel is named only past the minimum count and the share; the cost
// is the pinned medians' difference; `replay --diff` on the set prints the same.
#include "analysis/predict/decision_diff.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "analysis/model/replay.h"
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
// columns; the kernel (mainline) followed mainline on every split record; JSON the same counts
// and the closed-loop mixes.
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
  // The closed loop: mainline's, led by its own choices, is the kernel's in every case; sync-core's
  // moves the pair in a case whose prev was busy (bg=2) and stays moved.
  EXPECT_EQ(doc["closed_mixes"][0]["policy"], "mainline");
  EXPECT_EQ(doc["closed_no_waker"], 0);
  for (const auto& c : doc["cases"])
    EXPECT_EQ(c["closed_mixes"][0]["classes"], c["mixes"][0]["classes"]) << c["case"];
  EXPECT_GT(doc["closed_mixes"][2]["classes"]["smt-sibling"].get<int>(),
            doc["mixes"][3]["classes"]["smt-sibling"].get<int>());  // sync-core, both ways
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

// The decisions a kernel changed (kernel_changes): mainline's own sample changes nothing under
// mainline's model; each altered record is found once, at the point where its path parts from the
// model's: its CPU, its rule (an unlabelled return), its wake_wide().
TEST(KernelChanges, EachAlteredRecordIsFoundAtItsPoint) {
  const std::vector<DecisionRecord> d = sample();
  const WakeupPolicy& mainline = policy_by_id("mainline");
  EXPECT_EQ(kernel_changes(d, smt2(), mainline).pair.split, 0);
  const auto found = [&](std::vector<DecisionRecord> v) {
    const KernelChanges c = kernel_changes(v, smt2(), mainline);
    EXPECT_EQ(c.pair.split, 1);
    EXPECT_EQ(c.first.size(), 1u);
    return c;
  };
  std::vector<DecisionRecord> moved = d;
  moved[0].cpu = 3;  // sis_prev chose 2
  const KernelChanges m = found(moved);
  EXPECT_EQ(m.by_point.at(ChangePoint::kCpu), 1);
  EXPECT_EQ(m.moved, 1);
  EXPECT_EQ(m.pair.by_rule.at(DecisionRule::kSisPrev), 1);  // the model's rule
  EXPECT_EQ(m.first[0].index, 0u);
  std::vector<DecisionRecord> unlabelled = d;
  unlabelled[0].rule.reset();
  unlabelled[0].unlabelled = true;
  const KernelChanges u = found(unlabelled);
  EXPECT_EQ(u.by_point.at(ChangePoint::kRule), 1);
  EXPECT_EQ(u.moved, 0);  // the same CPU, by a return no model has
  std::vector<DecisionRecord> wide = d;
  wide[1].wake_wide = true;
  EXPECT_EQ(found(wide).by_point.at(ChangePoint::kWakeWide), 1);
}

// A mutation's marks are held to what was found: the marked altered record is found; a mark on a
// record the model reproduces is a marked record not found (the check that must fail when the
// marker fires where nothing changed).
TEST(KernelChanges, MarkedRecordsAreCountedAgainstTheChangesFound) {
  std::vector<DecisionRecord> d = sample();
  d[0].cpu = 3;
  d[0].mark = true;
  KernelChanges c = kernel_changes(d, smt2(), policy_by_id("mainline"));
  EXPECT_EQ(c.marked, 1);
  EXPECT_EQ(c.marked_changed, 1);
  d[2].mark = true;
  c = kernel_changes(d, smt2(), policy_by_id("mainline"));
  EXPECT_EQ(c.marked, 2);
  EXPECT_EQ(c.marked_changed, 1);
}

// A kernel that follows sync-2017's model: held to mainline's, its changed records are the ones
// where the two models part (every one found, none outside); held to its own, nothing changed.
// With the kernel's CPUs left as mainline's, the expected records are found unchanged.
TEST(KernelChanges, AKnownPatchsChangesAreItsModelsSplits) {
  std::vector<DecisionRecord> d = sample();
  const WakeupPolicy& mainline = policy_by_id("mainline");
  const WakeupPolicy& sync2017 = policy_by_id("sync-2017");
  const KernelChanges as_mainline = kernel_changes(d, smt2(), mainline, {}, {}, &sync2017);
  ASSERT_GT(as_mainline.expected_split, 0);
  EXPECT_EQ(as_mainline.expected_changed, 0);
  for (DecisionRecord& r : d) {
    const WakeDecision w = predict_wakeup(smt2(), wake_input_of(r, smt2()), sync2017);
    r.cpu = w.cpu;
    r.rule = w.rule;
    r.wake_wide = w.wake_wide;
    r.want_affine = w.want_affine;
  }
  const KernelChanges c = kernel_changes(d, smt2(), mainline, {}, {}, &sync2017);
  EXPECT_EQ(c.expected_split, as_mainline.expected_split);
  EXPECT_EQ(c.expected_changed, c.expected_split);
  EXPECT_EQ(c.pair.split, c.expected_split);
  EXPECT_EQ(kernel_changes(d, smt2(), sync2017).pair.split, 0);
}

// `replay SET --changed mainline` on the lab set: the verdict first, within 100 columns, nothing
// changed (mainline's own kernel); JSON the same counts; --expect alone, --prices alone and
// --prices on a trace are refused in one line.
TEST(KernelChanges, ReplayChangedOnTheLabSet) {
  const auto dir = test::fresh_test_dir("kernel-changes");
  const std::string set = test::fixture_path("decisions/smt2-3core-mainline/results.json");
  const test::Ran text =
      test::run_wakebench({"replay", set, "--changed", "mainline", "--expect", "sync-core"}, dir);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_EQ(text.out.rfind("the kernel against mainline's model: ", 0), 0u) << text.out;
  std::istringstream lines(text.out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;
  EXPECT_NE(text.out.find("sync-core's model parts from mainline's on "), std::string::npos);
  const test::Ran json =
      test::run_wakebench({"replay", set, "--changed", "mainline", "--json"}, dir);
  ASSERT_EQ(json.code, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["a"], "mainline");
  EXPECT_EQ(doc["b"], "kernel");
  EXPECT_GT(doc["records"].get<int64_t>(), 0);
  int64_t sum = 0;
  for (const auto& c : doc["cases"]) sum += c["split"].get<int64_t>();
  EXPECT_EQ(sum, doc["split"].get<int64_t>());
  const test::Ran alone = test::run_wakebench({"replay", set, "--expect", "sync-core"}, dir);
  EXPECT_EQ(alone.code, 2);
  EXPECT_NE(alone.err.find("--expect goes with --changed"), std::string::npos) << alone.err;
  const test::Ran unpriced = test::run_wakebench({"replay", set, "--prices", set}, dir);
  EXPECT_EQ(unpriced.code, 2);
  EXPECT_NE(unpriced.err.find("--prices goes with --diff or --changed"), std::string::npos);
  const std::string trace = test::fixture_path("decisions/smt2-mainline.txt");
  const test::Ran priced_trace =
      test::run_wakebench({"replay", trace, "--topology",
                           std::string(WB_SOURCE_DIR) + "/configs/lab/topologies/smt2.xml",
                           "--changed", "mainline", "--prices", set},
                          dir);
  EXPECT_EQ(priced_trace.code, 2);
  EXPECT_NE(priced_trace.err.find("--prices prices a result set's cases"), std::string::npos)
      << priced_trace.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wb
