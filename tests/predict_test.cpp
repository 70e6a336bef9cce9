// The predictor: scenario parsing, the ping-pong steady state (docs/policy-model.md#steady-state)
// on the model boxes, predictions for a result set, and the `wakebench predict` CLI end to end.
#include "analysis/predict/predict.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "analysis/predict/predict_results.h"
#include "common/schema/registry.h"
#include "common/schema/result_set.h"
#include "common/system/topology.h"
#include "tests/support.h"

namespace wb {
namespace {

using nlohmann::json;

const std::string kPredictFixtures = WB_FIXTURES_DIR;
const std::string kPredict = kPredictFixtures + "/predict";
const std::string kBoxC = kPredictFixtures + "/topologies/model/box-c-8c-smt2-stride8-1llc.xml";
const std::string kBoxDnXml = kPredictFixtures + "/topologies/model/box-dn-2s-8c-nosmt-slit21.xml";

// ---- scenario parsing -----------------------------------------------------------------------

TEST(Scenario, DefaultsOfSection12) {
  Scenario s = parse_scenario(json{{"waker", 2}, {"prev", 5}}, "s.json");
  EXPECT_FALSE(s.wake.sync);
  EXPECT_FALSE(s.wake.current_cpu);
  EXPECT_TRUE(s.wake.reciprocal);
  EXPECT_EQ(s.wake.nr_running, (std::map<int, int>{{2, 1}}));
  EXPECT_TRUE(s.wake.delayed.empty());
  EXPECT_EQ(s.wake.recent_used_cpu, 5);
  EXPECT_TRUE(s.wake.allowed.empty());
  EXPECT_EQ(s.wake.waker_flips, 0);
  EXPECT_FALSE(s.wake.has_idle_cores.has_value());
  EXPECT_FALSE(s.wake.nr_idle_scan.has_value());
  EXPECT_FALSE(s.wake.waker_kthread);
  EXPECT_TRUE(s.wake.in_task);
  EXPECT_FALSE(s.wake.wakee_queued);
  EXPECT_FALSE(s.llc_level.has_value());
}

TEST(Scenario, AllFieldsParsed) {
  json j = {{"waker", 78},
            {"prev", 79},
            {"sync", true},
            {"current_cpu", false},
            {"reciprocal", false},
            {"nr_running", {{"78", 2}, {"3", 1}}},
            {"delayed", {{"78", 1}}},
            {"recent_used_cpu", -1},
            {"allowed", "78-79"},
            {"waker_flips", 4},
            {"wakee_flips", 2},
            {"has_idle_cores", true},
            {"nr_idle_scan", 3},
            {"waker_kthread", true},
            {"in_task", false},
            {"wakee_queued", true},
            {"llc_level", "L2"}};
  Scenario s = parse_scenario(j, "s.json");
  EXPECT_EQ(s.wake.allowed, (std::vector<int>{78, 79}));
  EXPECT_EQ(s.wake.nr_running.at(78), 2);
  EXPECT_EQ(s.wake.delayed.at(78), 1);
  EXPECT_EQ(s.wake.recent_used_cpu, -1);
  EXPECT_EQ(*s.wake.nr_idle_scan, 3);
  EXPECT_TRUE(*s.wake.has_idle_cores);
  EXPECT_FALSE(s.wake.in_task);
  EXPECT_EQ(*s.llc_level, LlcSource::kL2);
  EXPECT_EQ(s.given, j);
}

void expect_error(const json& j, const std::string& needle) {
  try {
    parse_scenario(j, "s.json");
    ADD_FAILURE() << "no error for " << j.dump();
  } catch (const std::invalid_argument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("s.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(Scenario, ErrorsNameFileAndField) {
  expect_error(json{{"waker", 2}, {"prev", 5}, {"bogus", 1}}, "unknown field \"bogus\"");
  expect_error(json{{"prev", 5}}, "missing required field \"waker\"");
  expect_error(json{{"waker", 2}}, "missing required field \"prev\"");
  expect_error(json{{"waker", 2}, {"prev", 5}, {"sync", 1}}, "\"sync\"");
  expect_error(json{{"waker", "2"}, {"prev", 5}}, "\"waker\"");
  expect_error(json{{"waker", 2}, {"prev", 5}, {"nr_running", {{"x", 1}}}}, "\"nr_running\"");
  // Found by fuzz_scenario: 12147483648 wrapped to a negative int.
  expect_error(json{{"waker", 2}, {"prev", 5}, {"nr_running", {{"5", 12147483648LL}}}},
               "\"nr_running\": CPU 5 needs an integer count from 0 to 1000000");
  expect_error(json{{"waker", 2}, {"prev", 5}, {"delayed", {{"5", -1}}}}, "\"delayed\"");
  expect_error(json{{"waker", 2}, {"prev", 5}, {"allowed", "3-x"}}, "\"allowed\"");
  expect_error(json{{"waker", 2}, {"prev", 5}, {"llc_level", "L4"}}, "\"llc_level\"");
  expect_error(json::array(), "object");
}

TEST(Scenario, ValidationAgainstTopology) {
  SchedTopology c(Topology::from_xml(kBoxC));
  auto check = [&](const json& j, const std::string& needle) {
    Scenario s = parse_scenario(j, "s.json");
    try {
      validate_scenario(s, c, "s.json");
      ADD_FAILURE() << "no error for " << j.dump();
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  check(json{{"waker", 16}, {"prev", 5}}, "\"waker\"");
  check(json{{"waker", 2}, {"prev", 99}}, "\"prev\"");
  check(json{{"waker", 2}, {"prev", 5}, {"nr_running", {{"5", 1}}}}, "\"nr_running\"");
  check(json{{"waker", 2}, {"prev", 5}, {"delayed", {{"2", 2}}}}, "\"delayed\"");
  check(json{{"waker", 2}, {"prev", 5}, {"allowed", "30"}}, "\"allowed\"");
}

// ---- steady state (section 10) --------------------------------------------------------------

struct SteadyRow {
  std::string box;
  int a, b;
  bool sync;
  // policy -> (CPUs of the settled pair, its single class)
  std::map<std::string, std::pair<std::vector<int>, std::string>> expect;
};

std::map<std::string, std::pair<std::vector<int>, std::string>> all_but_p6(std::vector<int> cpus,
                                                                           const std::string& cls,
                                                                           int waker) {
  std::map<std::string, std::pair<std::vector<int>, std::string>> m;
  for (const char* p : {"mainline", "sync-pair", "sync-core", "sync-core-v2", "sync-2017"}) {
    m[p] = {cpus, cls};
  }
  m["current-cpu"] = {{waker}, "same-cpu"};
  return m;
}

std::vector<SteadyRow> section10_rows() {
  using E = std::pair<std::vector<int>, std::string>;
  auto same = [](int c) { return E{{c}, "same-cpu"}; };
  std::vector<SteadyRow> rows;
  rows.push_back({"box-a-80c-nosmt-1llc.xml",
                  10,
                  40,
                  true,
                  {{"mainline", {{10, 40}, "llc"}},
                   {"sync-pair", same(40)},
                   {"sync-core", {{10, 40}, "llc"}},
                   {"sync-core-v2", {{10, 40}, "llc"}},
                   {"sync-2017", same(10)},
                   {"current-cpu", same(10)}}});
  rows.push_back({"box-a-80c-nosmt-1llc.xml", 10, 40, false, all_but_p6({10, 40}, "llc", 10)});
  rows.push_back({"box-a2-80c-nosmt-l2pairs.xml",
                  10,
                  40,
                  true,
                  {{"mainline", {{10, 11}, "llc"}},
                   {"sync-pair", same(11)},
                   {"sync-core", {{10, 11}, "llc"}},
                   {"sync-core-v2", {{10, 11}, "llc"}},
                   {"sync-2017", same(10)},
                   {"current-cpu", same(10)}}});
  rows.push_back(
      {"box-a2-80c-nosmt-l2pairs.xml", 10, 40, false, all_but_p6({10, 40}, "cross-llc", 10)});
  auto b = all_but_p6({17, 42}, "llc", 17);
  b["sync-2017"] = same(17);
  rows.push_back({"box-b-20c-smt8-contig-1llc.xml", 17, 42, true, b});
  rows.push_back(
      {"box-b-20c-smt8-contig-1llc.xml", 17, 42, false, all_but_p6({17, 42}, "llc", 17)});
  // One LLC per core: the first wake finds the waker's LLC hint still set (the core idled before
  // the case), scans for an idle core, finds none and takes the core's first idle thread, 16;
  // sync-core's sibling-first hook decides before that scan.
  rows.push_back({"box-b2-20c-smt8-contig-llc-per-core.xml",
                  17,
                  42,
                  true,
                  {{"mainline", {{16, 17}, "smt-sibling"}},
                   {"sync-pair", {{16, 17}, "smt-sibling"}},
                   {"sync-core", {{17, 18}, "smt-sibling"}},
                   {"sync-core-v2", {{16, 17}, "smt-sibling"}},
                   {"sync-2017", same(17)},
                   {"current-cpu", same(17)}}});
  rows.push_back({"box-b2-20c-smt8-contig-llc-per-core.xml", 17, 42, false,
                  all_but_p6({17, 42}, "cross-llc", 17)});
  auto c = all_but_p6({2, 5}, "llc", 2);
  c["sync-2017"] = same(2);
  rows.push_back({"box-c-8c-smt2-stride8-1llc.xml", 2, 5, true, c});
  rows.push_back({"box-c-8c-smt2-stride8-1llc.xml", 2, 5, false, all_but_p6({2, 5}, "llc", 2)});
  rows.push_back({"box-d-2s-8c-smt2-stride16-slit21.xml",
                  2,
                  9,
                  true,
                  {{"mainline", {{2, 3}, "llc"}},
                   {"sync-pair", {{2, 3}, "llc"}},
                   {"sync-core", {{2, 3}, "llc"}},
                   {"sync-core-v2", {{2, 18}, "smt-sibling"}},
                   {"sync-2017", same(2)},
                   {"current-cpu", same(2)}}});
  rows.push_back(
      {"box-d-2s-8c-smt2-stride16-slit21.xml", 2, 9, false, all_but_p6({2, 9}, "cross-numa", 2)});
  rows.push_back({"box-dn-2s-8c-nosmt-slit21.xml",
                  2,
                  9,
                  true,
                  {{"mainline", {{2, 3}, "llc"}},
                   {"sync-pair", same(3)},
                   {"sync-core", {{2, 3}, "llc"}},
                   {"sync-core-v2", {{2, 3}, "llc"}},
                   {"sync-2017", same(2)},
                   {"current-cpu", same(2)}}});
  rows.push_back(
      {"box-dn-2s-8c-nosmt-slit21.xml", 2, 9, false, all_but_p6({2, 9}, "cross-numa", 2)});
  return rows;
}

class Section10 : public ::testing::TestWithParam<SteadyRow> {};

TEST_P(Section10, SettlesAsTheTableSays) {
  const SteadyRow& row = GetParam();
  SchedTopology sched(Topology::from_xml(kPredictFixtures + "/topologies/model/" + row.box));
  SteadyOptions opt;
  opt.sync = row.sync;
  opt.start_a = row.a;
  opt.start_b = row.b;
  for (const auto& r : simulate_steady_state(sched, opt)) {
    SCOPED_TRACE(row.box + " " + r.policy + (row.sync ? " sync" : " non-sync"));
    ASSERT_TRUE(r.settled);
    const auto& [cpus, cls] = row.expect.at(r.policy);
    EXPECT_EQ(r.cpus, cpus);
    ASSERT_EQ(r.classes.size(), 1u) << "more than one class in the cycle";
    EXPECT_EQ(class_id(r.classes.begin()->first), cls);
    EXPECT_DOUBLE_EQ(r.classes.begin()->second, 1.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Boxes, Section10, ::testing::ValuesIn(section10_rows()),
                         [](const ::testing::TestParamInfo<SteadyRow>& info) {
                           std::string name = info.param.box.substr(0, info.param.box.find('-', 4));
                           for (auto& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name + (info.param.sync ? "_sync" : "_nonsync");
                         });

// The section-10 takeaway: a hog on the wakee's prev CPU is what makes sync-core-v2 act.
TEST(Steady, HogOnPrevExercisesSyncCoreV2) {
  SchedTopology c(Topology::from_xml(kBoxC));
  SteadyOptions opt;
  opt.start_a = 2;
  opt.start_b = 5;
  opt.busy = {5};
  auto mainline = simulate_steady_state(c, opt, policy_by_id("mainline"));
  auto v2 = simulate_steady_state(c, opt, policy_by_id("sync-core-v2"));
  EXPECT_EQ(mainline.cpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(v2.cpus, (std::vector<int>{2, 10}));
  EXPECT_EQ(v2.classes.begin()->first, PlacementClass::kSmtSibling);
}

TEST(Steady, DefaultStartIsAnLlcPairAndCpusetIsHonoured) {
  SchedTopology c(Topology::from_xml(kBoxC));
  EXPECT_EQ(default_start_pair(c, {}), (std::pair<int, int>{0, 1}));
  EXPECT_EQ(default_start_pair(c, {0, 8}), (std::pair<int, int>{0, 8}));
  EXPECT_EQ(default_start_pair(c, {6}), (std::pair<int, int>{6, 6}));
  SteadyOptions opt;
  opt.allowed = {4, 12};
  for (const auto& r : simulate_steady_state(c, opt)) {
    for (int cpu : r.cpus) EXPECT_TRUE(cpu == 4 || cpu == 12) << r.policy << " " << cpu;
  }
  json j = steady_to_json(c, opt, simulate_steady_state(c, opt));
  EXPECT_EQ(j["allowed"], "4,12");
  EXPECT_EQ(j["policies"].size(), 6u);
  std::set<std::string> members;
  for (const auto& g : j["groups"]) {
    for (const auto& p : g["policies"]) {
      EXPECT_TRUE(members.insert(p.get<std::string>()).second) << p;
    }
  }
  EXPECT_EQ(members.size(), 6u);
}

// One wake that finds the wakee's prev CPU busy for a moment moves a sibling pair onto the idle
// core (has_idle_cores), and mainline then stays there: seen in the lab's smt2 guests, whole
// repetitions on the other core after a move at a wakeup (the trace counts no balancer
// migration). So mainline is uncertain between siblings and llc; sync-2017 re-stacks on the
// waker's CPU from anywhere, so it stays certain.
TEST(Steady, OneDisturbedWakeMovesASiblingPairToTheIdleCore) {
  SchedTopology c(Topology::from_xml(kBoxC));  // siblings c, c+8; one LLC
  SteadyOptions opt;
  opt.start_a = 0;
  opt.start_b = 8;
  auto mainline = simulate_steady_state(c, opt, policy_by_id("mainline"));
  ASSERT_EQ(mainline.cpus, (std::vector<int>{0, 8}));
  ASSERT_EQ(mainline.alternatives.size(), 1u);
  const SteadyAlternative& alt = mainline.alternatives[0];
  EXPECT_EQ(alt.cause.busy, 8);
  EXPECT_EQ(alt.cause.waker, 0);
  EXPECT_EQ(cause_text(alt.cause), "a wake from CPU 0 finds CPU 8 busy");
  EXPECT_EQ(alt.cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(alt.classes, (std::map<PlacementClass, double>{{PlacementClass::kLlc, 1.0}}));
  EXPECT_TRUE(simulate_steady_state(c, opt, policy_by_id("sync-2017")).alternatives.empty());

  const std::vector<SteadyResult> results = simulate_steady_state(c, opt);
  json j = steady_to_json(c, opt, results);
  EXPECT_EQ(j["policies"]["mainline"]["uncertain"]["bounds"],
            json::parse(R"({"llc": [0.0, 1.0], "smt-sibling": [0.0, 1.0]})"));
  EXPECT_FALSE(j["policies"]["sync-2017"].contains("uncertain"));
  const std::string text = render_steady_text(c, opt, results);
  EXPECT_NE(text.find("uncertain: or 0-1 llc 100% once a wake from CPU 0 finds CPU 8 busy"),
            std::string::npos)
      << text;

  // The disturbed wake alone: it lands on the idle core, and only what follows it counts.
  opt.disturb_wake = 0;
  opt.try_disturbances = false;
  auto once = simulate_steady_state(c, opt, policy_by_id("mainline"));
  EXPECT_EQ(once.cpus, (std::vector<int>{0, 1}));
  EXPECT_TRUE(once.alternatives.empty());

  // A pair on two cores: a disturbed wake moves the wakee to another idle core, still llc.
  opt = SteadyOptions{};
  opt.start_a = 0;
  opt.start_b = 1;
  EXPECT_TRUE(simulate_steady_state(c, opt, policy_by_id("mainline")).alternatives.empty());
}

// A cross-LLC start whose cpuset has one CPU in the first LLC and two in the other (the lab's 2llc
// `kernel:0,2-3`): a sync wake from 0 stacks the pair there, one from 2 settles it on 2,3. Which
// task wakes the other first is timing (the lab's 6.12 guest: binder-like's pair settled on the
// second LLC in all 3 repetitions, tcp-loopback and unix-dgram in 1 of 3), so both count.
TEST(Steady, TheFirstWakeGoingTheOtherWayIsAnAlternative) {
  SchedTopology d(Topology::from_xml(kBoxDnXml));
  SteadyOptions opt;
  opt.start_a = 0;
  opt.start_b = 8;
  opt.allowed = {0, 8, 9};
  auto r = simulate_steady_state(d, opt, policy_by_id("mainline"));
  ASSERT_EQ(r.cpus, (std::vector<int>{0}));
  auto rev = std::find_if(
      r.alternatives.begin(), r.alternatives.end(),
      [](const SteadyAlternative& a) { return a.cause.kind == AltCause::Kind::kReversedStart; });
  ASSERT_NE(rev, r.alternatives.end());
  EXPECT_EQ(cause_text(rev->cause), "the first wake goes from CPU 8 to CPU 0");
  EXPECT_EQ(rev->cpus, (std::vector<int>{8, 9}));
}

// A slow switch-out (qemu TCG): the wakes can keep the pair where it started, and the load
// balancer can pull a stacked pair apart for good; neither is an alternative on a real machine.
TEST(Steady, SlowSwitchOutKeepsTheStartAndTheBalancersSplit) {
  SchedTopology d(Topology::from_xml(kBoxDnXml));
  auto find = [](const SteadyResult& r, const std::string& prefix) {
    return std::find_if(
        r.alternatives.begin(), r.alternatives.end(),
        [&](const SteadyAlternative& a) { return cause_text(a.cause).rfind(prefix, 0) == 0; });
  };
  SteadyOptions opt;
  opt.start_a = 0;
  opt.start_b = 8;
  opt.allowed = {0, 8, 9};
  auto fast = simulate_steady_state(d, opt, policy_by_id("mainline"));
  EXPECT_EQ(find(fast, "every wake"), fast.alternatives.end());
  opt.slow_switch_out = true;
  auto slow = simulate_steady_state(d, opt, policy_by_id("mainline"));
  ASSERT_EQ(slow.cpus, (std::vector<int>{0}));  // the steady state itself is unchanged
  auto kept = find(slow, "every wake reaches the partner while it is still switching out");
  ASSERT_NE(kept, slow.alternatives.end());
  EXPECT_EQ(kept->cpus, (std::vector<int>{0, 8}));
  EXPECT_EQ(kept->classes, (std::map<PlacementClass, double>{{PlacementClass::kCrossNuma, 1.0}}));
  // Both on CPU 0 from the start: nothing to keep, but the pair stacked on CPU 0 is pulled to the
  // nearest other allowed CPU, 8 (no other allowed CPU in 0's LLC).
  opt.start_b = 0;
  auto both = simulate_steady_state(d, opt, policy_by_id("mainline"));
  EXPECT_EQ(find(both, "every wake"), both.alternatives.end());
  auto pulled = find(both,
                     "the load balancer pulls one task of the pair stacked on CPU 0 to idle "
                     "CPU 8");
  ASSERT_NE(pulled, both.alternatives.end());
  EXPECT_EQ(pulled->cpus, (std::vector<int>{0, 8}));
  // sync-2017 keeps the pair stacked on CPU 0 with CPU 1 allowed: the balance of each level
  // can pull a task, to CPU 1 in the LLC or to CPU 8 across the nodes.
  opt.allowed = {0, 1, 8};
  auto stacked = simulate_steady_state(d, opt, policy_by_id("sync-2017"));
  ASSERT_EQ(stacked.cpus, (std::vector<int>{0}));
  std::vector<std::vector<int>> pulls;
  for (const auto& a : stacked.alternatives)
    if (cause_text(a.cause).rfind("the load balancer pulls", 0) == 0) pulls.push_back(a.cpus);
  EXPECT_EQ(pulls, (std::vector<std::vector<int>>{{0, 1}, {0, 8}}));
}

// A pair on two CPUs of one LLC with nothing else allowed: a wake that finds the wakee's CPU busy
// stacks it on the waker's, and from there it can stay stacked (the lab's 2llc guest: stacked
// phases of hundreds of wakes, the waker preempted by the wakee at 81% of the stacked wakes).
TEST(Steady, AWakeThatStacksThePairCanLeaveItStacked) {
  SchedTopology dn(Topology::from_xml(kBoxDnXml));
  SteadyOptions opt;
  opt.start_a = 0;
  opt.start_b = 1;
  opt.allowed = {0, 1};
  auto r = simulate_steady_state(dn, opt, policy_by_id("mainline"));
  ASSERT_EQ(r.cpus, (std::vector<int>{0, 1}));
  auto stays = std::find_if(r.alternatives.begin(), r.alternatives.end(), [](const auto& a) {
    return cause_text(a.cause).find("and stacks the pair on CPU 0, where it stays") !=
           std::string::npos;
  });
  ASSERT_NE(stays, r.alternatives.end());
  EXPECT_EQ(stays->cpus, (std::vector<int>{0}));
  EXPECT_EQ(stays->classes, (std::map<PlacementClass, double>{{PlacementClass::kSameCpu, 1.0}}));
  // With an idle CPU left in the LLC, the disturbed wake goes there instead: nothing stacks.
  opt.allowed = {0, 1, 2};
  for (const auto& a : simulate_steady_state(dn, opt, policy_by_id("mainline")).alternatives)
    EXPECT_EQ(cause_text(a.cause).find("stacks the pair"), std::string::npos)
        << cause_text(a.cause);
}

// The lab's smt2-2socket-numa guest, start 0,4 with node 1 allowed: the reversed first wake
// settles on an idle core of node 1; with the LLC's has_idle_cores hint stale (false), the scan
// from CPU 5 takes the sibling first (the guest's mainline unix-dgram pairs ran on 4,5 in 2 of 6
// repetitions).
TEST(Steady, AStaleIdleCoresHintSettlesOnTheSibling) {
  SchedTopology g(Topology::from_xml(kPredictFixtures + "/topologies/lab/smt2-2socket-numa.xml"));
  SteadyOptions opt;
  opt.start_a = 0;
  opt.start_b = 4;
  opt.allowed = {0, 4, 5, 6, 7};
  auto r = simulate_steady_state(g, opt, policy_by_id("mainline"));
  ASSERT_EQ(r.cpus, (std::vector<int>{0}));
  std::map<std::string, std::vector<int>> by_cause;
  for (const auto& a : r.alternatives) by_cause[cause_text(a.cause)] = a.cpus;
  EXPECT_EQ(by_cause["the first wake goes from CPU 4 to CPU 0"], (std::vector<int>{4, 6}));
  // The siblings 4-5, which the lab's guest ran on: first reached by a wake that finds CPU 6
  // busy while the hint is still set (the carried hint, below), so that cause names them.
  EXPECT_EQ(by_cause["the first wake goes from CPU 4 to CPU 0, then a wake from CPU 4 finds CPU 6 "
                     "busy"],
            (std::vector<int>{4, 5}));
  // A hint stale false throughout settles there too.
  opt.has_idle_cores = false;
  opt.start_a = 4;
  opt.start_b = 0;
  EXPECT_EQ(simulate_steady_state(g, opt, policy_by_id("mainline")).cpus, (std::vector<int>{4, 5}));
  // Without SMT there is no hint to be stale.
  SchedTopology dn(Topology::from_xml(kBoxDnXml));
  opt.has_idle_cores.reset();
  for (const auto& a : simulate_steady_state(dn, opt, policy_by_id("mainline")).alternatives)
    EXPECT_EQ(cause_text(a.cause).find("has_idle_cores"), std::string::npos) << cause_text(a.cause);
}

// The lab's smt2-3core guest: three SMT2 cores (siblings c, c + 1) in one LLC.
Topology smt2_3core() {
  return Topology::from_xml(std::string(WB_SOURCE_DIR) + "/configs/lab/topologies/smt2-3core.xml");
}

// On smt2_3core(): the wake from CPU 0 that finds the wakee's prev CPU 4 busy, CPU 2's hog
// running, the has_idle_cores hint of the LLC recorded as set.
WakeInput busy_prev_wake() {
  WakeInput in;
  in.waker = 0;
  in.prev = 4;
  in.sync = true;
  in.nr_running = {{0, 1}, {2, 1}, {4, 1}};
  in.recent_used_cpu = 2;
  in.llc_hints = {{0, true, std::nullopt}};
  return in;
}

// The has_idle_cores hint is state the pair carries (docs/policy-model.md#steady-state): set when
// the waker's CPU idles with its core, cleared only by a scan that finds no idle core. On the
// lab's 3-core SMT2 LLC from CPUs 0,2 with CPU 2 busy, mainline's pair runs on 0 and 4; a wake
// from CPU 0 that finds CPU 4 busy for a moment still reads the hint as set (CPU 4 idled with
// CPU 5 at every earlier wake), scans for an idle core, finds none and takes the first idle
// thread after the waker, its sibling 1, where the pair stays. The kernel's records show such
// wakes (docs/lab-validation.md#replay-state). Read exactly, the hint is false at that wake and
// select_idle_smt() takes prev's sibling 5 instead: no new placement.
TEST(Steady, TheCarriedHintSendsABusyPrevWakeToTheWakersSibling) {
  SchedTopology g(smt2_3core());
  SteadyOptions opt;
  opt.start_a = 0;
  opt.start_b = 2;
  opt.busy = {2};
  const SteadyResult r = simulate_steady_state(g, opt, policy_by_id("mainline"));
  ASSERT_EQ(r.cpus, (std::vector<int>{0, 4}));
  std::map<std::string, std::vector<int>> by_cause;
  for (const auto& a : r.alternatives) by_cause[cause_text(a.cause)] = a.cpus;
  EXPECT_EQ(by_cause["a wake from CPU 0 finds CPU 4 busy"], (std::vector<int>{0, 1}));
  // The one wake, as the record gave it: the hint set -> the idle thread 1; exact -> 5.
  WakeInput in = busy_prev_wake();
  const WakeDecision carried = predict_wakeup(g, in, policy_by_id("mainline"));
  EXPECT_EQ(carried.cpu, 1);
  EXPECT_EQ(carried.idle_cores_cleared, 0);
  in.llc_hints.clear();
  const WakeDecision exact = predict_wakeup(g, in, policy_by_id("mainline"));
  EXPECT_EQ(exact.cpu, 5);
  EXPECT_EQ(exact.idle_cores_cleared, -1);
}

// The steady state's walks give the model nr_running by CPU id (WakeInput::nr_running_by_cpu)
// instead of the map: the same wake decides the same, the hint cleared alike.
TEST(Wakeup, NrRunningByCpuDecidesAsTheMap) {
  SchedTopology g(smt2_3core());
  WakeInput in = busy_prev_wake();
  for (bool hint : {true, false}) {
    if (!hint) in.llc_hints.clear();
    const WakeDecision from_map = predict_wakeup(g, in, policy_by_id("mainline"));
    WakeInput by_cpu = in;
    by_cpu.nr_running.clear();
    const std::vector<int> counts = {1, 0, 1, 0, 1, 0};
    by_cpu.nr_running_by_cpu = &counts;
    const WakeDecision d = predict_wakeup(g, by_cpu, policy_by_id("mainline"));
    EXPECT_EQ(d.cpu, from_map.cpu) << hint;
    EXPECT_EQ(d.rule, from_map.rule) << hint;
    EXPECT_EQ(d.idle_cores_cleared, from_map.idle_cores_cleared) << hint;
    EXPECT_EQ(d.path, from_map.path) << hint;
  }
}

// Each steady state's walks reuse the storage of those simulated before them (a pool per
// thread): the answers on one topology are the same before and after steady states on others,
// larger, with other cpusets and hints.
TEST(Steady, StatesSimulatedBeforeOnOtherTopologiesChangeNothing) {
  SchedTopology c(Topology::from_xml(kBoxC));
  SchedTopology g(Topology::from_xml(kPredictFixtures + "/topologies/lab/smt2-2socket-numa.xml"));
  SchedTopology dn(Topology::from_xml(kBoxDnXml));
  SteadyOptions opt;
  opt.start_a = 2;
  opt.start_b = 5;
  opt.busy = {5};
  std::vector<const WakeupPolicy*> policies;
  for (const WakeupPolicy* p : all_policies()) policies.push_back(p);
  const json before = steady_to_json(c, opt, simulate_steady_states(c, opt, policies));
  const json with_paths = steady_to_json(c, opt, simulate_steady_state(c, opt));
  SteadyOptions other;
  other.allowed = {1, 2, 3, 6, 7};
  simulate_steady_states(g, other, policies);
  simulate_steady_states(dn, {}, policies);
  EXPECT_EQ(steady_to_json(c, opt, simulate_steady_states(c, opt, policies)), before);
  EXPECT_EQ(steady_to_json(c, opt, simulate_steady_state(c, opt)), with_paths);
}

// A CPU whose runqueue holds only SCHED_IDLE tasks (sched_idle_cpu()) is idle to
// select_idle_sibling()'s tests and scans, not to wake_affine() or the idle-core test: a
// SCHED_IDLE waker's CPU is the target a sync wake stacks on, and a scan that finds no idle core
// falls back to such a CPU. Each also without the CPU listed: the decision changes.
TEST(Wakeup, ASchedIdleCpuIsIdleToSelectIdleSibling) {
  SchedTopology g(smt2_3core());
  WakeInput in;  // the waker alone on 0, everything else idle
  in.waker = 0;
  in.prev = 2;
  in.sync = true;
  in.nr_running = {{0, 1}};
  in.sched_idle = {0};
  WakeDecision d = predict_wakeup(g, in, policy_by_id("mainline"));
  EXPECT_EQ(d.cpu, 0);
  EXPECT_EQ(d.rule, DecisionRule::kSisTarget);
  in.sched_idle.clear();
  d = predict_wakeup(g, in, policy_by_id("mainline"));
  EXPECT_EQ(d.cpu, 2);
  EXPECT_EQ(d.rule, DecisionRule::kSisPrev);
  // No idle core (one busy thread in each), 3 SCHED_IDLE only: select_idle_core() keeps it.
  in.prev = 4;
  in.nr_running = {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}};
  in.llc_hints = {{0, true, 4}};  // the hint set, a scan budget left
  in.sched_idle = {3};
  d = predict_wakeup(g, in, policy_by_id("mainline"));
  EXPECT_EQ(d.cpu, 3);
  EXPECT_EQ(d.rule, DecisionRule::kSisIdleCpu);
  in.sched_idle.clear();
  d = predict_wakeup(g, in, policy_by_id("mainline"));
  EXPECT_NE(d.cpu, 3);
}

// A SCHED_IDLE pair: each sync wake finds the waker's CPU, running only the SCHED_IDLE waker,
// idle to select_idle_sibling(), so mainline stacks the pair there; a SCHED_OTHER pair does not.
TEST(Steady, ASchedIdlePairStacksOnTheWakersCpu) {
  SchedTopology g(smt2_3core());
  SteadyOptions opt;
  opt.start_a = 0;
  opt.start_b = 2;
  opt.sched_idle = true;
  const SteadyResult idle = simulate_steady_state(g, opt, policy_by_id("mainline"));
  EXPECT_EQ(idle.classes, (std::map<PlacementClass, double>{{PlacementClass::kSameCpu, 1.0}}));
  opt.sched_idle = false;
  const SteadyResult other = simulate_steady_state(g, opt, policy_by_id("mainline"));
  EXPECT_EQ(other.classes.count(PlacementClass::kSameCpu), 0u);
}

// ---- result sets ----------------------------------------------------------------------------

json fixture_results(const std::string& xml_file = kBoxC) {
  json rs = json::parse(test::read_fixture(kPredict + "/results-box-c.json"));
  rs["topology"]["xml"] = test::read_fixture(xml_file);
  return rs;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The JSON edge of predict_for_results (docs/result-set.md#predictions).
json predict_json(const json& rs) { return to_json(predict_for_results(rs)); }
std::string predict_text(const json& rs) { return render_results_text(predict_for_results(rs)); }

const json& entry(const json& p, const std::string& mech) {
  for (const auto& e : p["cases"]) {
    if (e["mechanism"] == mech) return e;
  }
  throw std::runtime_error("no entry for " + mech);
}

const json& entry_at(const json& p, const std::string& placement) {
  for (const auto& e : p["cases"]) {
    if (e["placement"] == placement) return e;
  }
  throw std::runtime_error("no entry for " + placement);
}

std::string verdict_of(const json& e, const std::string& policy) {
  return e["policies"][policy].value("verdict", std::string("-"));
}

TEST(Results, NamesTheModelsKernelBesideTheSets) {
  json rs = fixture_results();
  rs["environment"]["kernel"] = {{"release", "6.12.118+deb12-cloud-amd64"}};
  EXPECT_EQ(split_lines(predict_text(rs))[2],
            "  model: Linux 6.18-7.1; this set: 6.12.118+deb12-cloud-amd64, a different kernel: "
            "the decisions of");
  EXPECT_EQ(predict_json(rs)["model_kernel"], (json{{"follows", "6.18-7.1"},
                                                    {"set_kernel", "6.12.118+deb12-cloud-amd64"},
                                                    {"same_version", false}}));
  rs["environment"]["kernel"]["release"] = "6.18.44-fc";
  EXPECT_TRUE(predict_json(rs)["model_kernel"]["same_version"].get<bool>());
}

TEST(Results, StackedKernelMatchesTheStackingGroupNotMainline) {
  json p = predict_json(fixture_results());
  const json& pipe = entry(p, "pipe");
  EXPECT_EQ(pipe["wake_flags"], "sync");
  EXPECT_EQ(pipe["start"], json::array({0, 1}));
  // Box C has SMT, so sync-pair is inert: the stacking group is sync-2017 + current-cpu.
  EXPECT_EQ(pipe["consistent_with"], json::array({"sync-2017/current-cpu"}));
  EXPECT_EQ(pipe["verdict"], "MATCH");
  EXPECT_EQ(pipe["groups"][0]["name"], "sync-2017/current-cpu");  // nearest first
  EXPECT_NE(verdict_of(pipe, "mainline"), "MATCH");
  std::set<std::string> names;
  for (const auto& g : pipe["groups"]) names.insert(g["name"].get<std::string>());
  // sync-core-v2 predicts the same llc pair, but one disturbed wake (a hog on the wakee's prev CPU,
  // docs/policy-model.md#steady-state) can move it onto siblings: a group of its own.
  EXPECT_TRUE(names.count("mainline/sync-pair/sync-core"));
  EXPECT_TRUE(names.count("sync-core-v2"));
  EXPECT_EQ(pipe["policies"]["sync-core-v2"]["uncertain"]["alternatives"][0]["classes"],
            (json{{"smt-sibling", 1.0}}));
  EXPECT_EQ(pipe["policies"]["mainline"]["classes"], (json{{"llc", 1.0}}));
  EXPECT_DOUBLE_EQ(pipe["policies"]["mainline"]["predicted_rtt_ns"].get<double>(), 4200);
  EXPECT_DOUBLE_EQ(pipe["policies"]["current-cpu"]["predicted_rtt_ns"].get<double>(), 2400);
  EXPECT_DOUBLE_EQ(pipe["measured"]["rtt_ns"].get<double>(), 2500);
  EXPECT_EQ(pipe["measured"]["histogram"]["same-cpu"], 20000);

  const json& futex = entry(p, "futex");
  EXPECT_EQ(futex["consistent_with"],
            json::array({"mainline/sync-pair/sync-core/sync-core-v2/sync-2017"}));
  EXPECT_EQ(verdict_of(futex, "current-cpu"), "MISS");
  EXPECT_TRUE(entry(p, "spin").contains("skipped"));
}

TEST(Results, PremisesCarryTheMeasuredNumbers) {
  json p = predict_json(fixture_results());
  const json& pair = p["premises"]["sync-pair"];
  ASSERT_FALSE(pair.contains("not_measurable"));
  ASSERT_EQ(pair["checks"].size(), 1u);  // only pipe is sync
  EXPECT_EQ(pair["checks"][0]["mechanism"], "pipe");
  EXPECT_DOUBLE_EQ(pair["checks"][0]["saving_ns"].get<double>(), 1800);
  EXPECT_TRUE(pair["checks"][0]["holds"].get<bool>());
  EXPECT_EQ(p["premises"]["sync-core"]["checks"][0]["a"], "smt-sibling");
  const json& cur = p["premises"]["current-cpu"];
  ASSERT_EQ(cur["checks"].size(), 1u);
  EXPECT_EQ(cur["checks"][0]["mechanism"], "futex");
  EXPECT_EQ(cur["checks"][0]["b"], "kernel");
  EXPECT_DOUBLE_EQ(cur["checks"][0]["saving_ns"].get<double>(), 1700);
  std::string text = predict_text(fixture_results());
  EXPECT_NE(text.find("MATCH          TV 0.00   2.40 us  sync-2017/current-cpu: same-cpu 100%"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("premises"), std::string::npos) << text;
}

TEST(Results, MissingSmtClassIsNotMeasurable) {
  // The same cases on a box without SMT, with the smt-sibling cases dropped.
  json rs = fixture_results(kPredictFixtures + "/topologies/model/box-a-80c-nosmt-1llc.xml");
  json kept = json::array();
  for (const auto& c : rs["cases"]) {
    if (c["placement"] != "smt-sibling") kept.push_back(c);
  }
  rs["cases"] = kept;
  for (auto& c : rs["cases"]) {
    if (c["placement"] == "kernel") c["cpus"] = {{"waker", 0}, {"wakee", 1}};
  }
  json p = predict_json(rs);
  std::string why = p["premises"]["sync-core"].value("not_measurable", std::string());
  EXPECT_NE(why.find("not measurable here: no smt-sibling class"), std::string::npos) << why;
  // Without SMT sync-pair stacks reciprocal sync wakes too: it joins the stacking group.
  EXPECT_EQ(entry(p, "pipe")["consistent_with"], json::array({"sync-pair/sync-2017/current-cpu"}));
  EXPECT_EQ(entry(p, "pipe")["policies"]["sync-core"]["predicted_rtt_ns"].get<double>(), 4200);
}

// A kernel case started on siblings with the whole box allowed: the steady state's alternatives
// (the sibling pair or, after one disturbed wake, two cores) are carried, and the range's coverage
// of the three classes the box allows is about 1 - 0.75^2 (what lies within 0.25 of one edge of
// the triangle), far from NO-PREDICTION: a stacked observation is a MISS, not explained.
TEST(Results, SiblingStartNextToIdleCoresIsUncertainButCanMiss) {
  json rs = fixture_results();
  for (auto& c : rs["cases"])
    if (c["name"] == "pipe/threads/kernel")
      c["cpus"] = {{"waker", 0}, {"wakee", 8}, {"allowed", "0-15"}};
  json p = predict_json(rs);
  const json& e = entry_at(p, "kernel");
  ASSERT_EQ(e["start"], json::array({0, 8}));
  EXPECT_EQ(e["classes"], json::array({"same-cpu", "smt-sibling", "llc"}));
  const json& m = e["policies"]["mainline"];
  EXPECT_EQ(m["uncertain"]["bounds"],
            json::parse(R"({"llc": [0.0, 1.0], "smt-sibling": [0.0, 1.0]})"));
  EXPECT_FALSE(m["uncertain"].contains("range"));
  EXPECT_EQ(m["uncertain"]["alternatives"][0]["cpus"], json::array({0, 1}));
  EXPECT_EQ(m["uncertain"]["alternatives"][0]["cause"]["kind"], "busy-prev");
  EXPECT_NEAR(m["coverage"].get<double>(), 0.4375, 0.06);
  EXPECT_EQ(m["verdict"], "MISS");  // observed: all same-cpu
  EXPECT_FALSE(e["policies"]["sync-2017"].contains("uncertain"));
}

// The same kernel case observed half on the siblings and half on two cores: 50% of the steady
// state and 50% of its alternative. Strictly 0.5 away from every group: no MATCH; mainline's group
// is EXPLAINED, naming the alternative and its weight.
TEST(Results, AMixOfSteadyStateAndAlternativeIsExplainedNeverAMatch) {
  auto observe = [](json histogram) {
    json rs = fixture_results();
    for (auto& c : rs["cases"]) {
      if (c["name"] != "pipe/threads/kernel") continue;
      c["cpus"] = {{"waker", 0}, {"wakee", 8}, {"allowed", "0-15"}};
      c["observed"]["histogram"] = histogram;
    }
    return rs;
  };
  json p = predict_json(observe({{"smt-sibling", 10000}, {"llc", 10000}}));
  const json& e = entry_at(p, "kernel");
  EXPECT_EQ(e["consistent_with"], json::array());
  EXPECT_EQ(e["verdict"], "EXPLAINED");
  const json& m = e["policies"]["mainline"];
  EXPECT_EQ(m["verdict"], "EXPLAINED");
  EXPECT_EQ(m["distance"], json::parse(R"({"strict": 0.5, "best": 0.0, "share": 0.5,
                                           "alternative": 0, "weights": [0.5]})"));
  ASSERT_EQ(m["explained_by"].size(), 1u);
  EXPECT_EQ(m["explained_by"][0]["weight"], 0.5);
  EXPECT_EQ(m["explained_by"][0]["cause"]["text"], "a wake from CPU 0 finds CPU 8 busy");
  EXPECT_EQ(verdict_of(e, "sync-2017"), "MISS");
  const std::string text = predict_text(observe({{"smt-sibling", 10000}, {"llc", 10000}}));
  EXPECT_NE(text.find("EXPLAINED      TV 0.50"), std::string::npos) << text;
  EXPECT_NE(text.find("[A] a wake from CPU 0 finds CPU 8 busy"), std::string::npos) << text;
  for (const auto& line : split_lines(text)) EXPECT_LE(line.size(), 100u) << line;

  // A trace of the alternative (1 in 10000) is a MATCH of the steady state.
  p = predict_json(observe({{"smt-sibling", 9999}, {"llc", 1}}));
  EXPECT_EQ(entry_at(p, "kernel")["consistent_with"],
            json::array({"mainline/sync-pair/sync-core/sync-core-v2"}));

  // Spread evenly over three classes: no mix comes within 0.25 (a third).
  p = predict_json(observe({{"same-cpu", 10000}, {"smt-sibling", 10000}, {"llc", 10000}}));
  const json& none = entry_at(p, "kernel");
  EXPECT_EQ(none["verdict"], "MISS");
  EXPECT_DOUBLE_EQ(none["policies"]["mainline"]["distance"]["best"].get<double>(), 0.333);
}

TEST(Results, KernelCpusetRestrictsThePoliciesAndTraceIsShown) {
  json p = predict_json(fixture_results());
  const json& e = entry_at(p, "kernel:0,8");
  EXPECT_EQ(e["allowed"], "0,8");
  EXPECT_EQ(e["start"], json::array({0, 8}));
  EXPECT_EQ(e["classes"], json::array({"same-cpu", "smt-sibling"}));
  ASSERT_EQ(e["policies"].size(), 6u);
  for (const auto& [id, pol] : e["policies"].items()) {
    for (const auto& c : pol["cpus"]) EXPECT_TRUE(c == 0 || c == 8) << id << " " << pol["cpus"];
    ASSERT_TRUE(pol["first_paths"].is_array()) << id;
    ASSERT_FALSE(pol["first_paths"].empty()) << id;
    for (const auto& path : pol["first_paths"]) {
      EXPECT_TRUE(path.is_string() && !path.get<std::string>().empty()) << id;
    }
    // The pair can only be stacked or on the two siblings.
    for (const auto& [cls, f] : pol["classes"].items()) {
      EXPECT_TRUE(cls == "same-cpu" || cls == "smt-sibling") << id << " " << cls;
    }
  }
  // The default-cpuset case (cpus.allowed "0-15") is not restricted: mainline spreads to llc.
  EXPECT_EQ(entry_at(p, "kernel")["policies"]["mainline"]["classes"], (json{{"llc", 1.0}}));
  const json& t = e["measured"]["trace"];
  EXPECT_EQ(t["wakeups"], 40000);
  EXPECT_EQ(t["paths"]["ttwu_runnable"], 8000);
  EXPECT_EQ(t["paths"]["queued_remote"], 2000);
  EXPECT_EQ(t["classes_by_path"]["selection"]["smt-sibling"], 28000);
  EXPECT_FALSE(entry_at(p, "kernel")["measured"].contains("trace"));
  const std::string text = predict_text(fixture_results());
  EXPECT_NE(
      text.find("traced 40000 wakeups: selection 30000 ttwu_runnable 8000 queued_remote 2000"),
      std::string::npos)
      << text;

  // Without the cpuset the placement string gives the same CPUs.
  json rs = fixture_results();
  for (auto& c : rs["cases"]) c.erase("cpuset");
  EXPECT_EQ(entry_at(predict_json(rs), "kernel:0,8")["allowed"], "0,8");
}

TEST(Results, BadKernelCpusetIsOneLineNamingTheCase) {
  for (const json& bad : {json::array({0, 99}), json("0,8"), json::array()}) {
    json rs = fixture_results();
    for (auto& c : rs["cases"]) {
      if (c["name"] == "pipe/threads/kernel-2cpus") c["cpuset"] = bad;
    }
    try {
      predict_for_results(rs);
      ADD_FAILURE() << "accepted cpuset " << bad;
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("pipe/threads/kernel-2cpus"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(Results, OtherSchemaRefusedInOneLine) {
  json rs = fixture_results();
  rs["schema"] = "something-else";
  try {
    predict_for_results(rs);
    ADD_FAILURE() << "accepted another schema";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("schema"), std::string::npos);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
  rs = fixture_results();
  rs["schema_version"] = kResultSchemaVersion + 1;
  EXPECT_THROW(predict_for_results(rs), std::invalid_argument);
  rs = fixture_results();
  rs["topology"].erase("xml");
  EXPECT_THROW(predict_for_results(rs), std::invalid_argument);
}

// Which policy pairs each case discriminates (analysis/predict/discriminate.h), under the set's
// options: on box C, from siblings 0,1, the stacking policies against the others; in an emulated
// set the slow switch-out alternatives (the pair held at its start, pulled apart by the balancer)
// admit every one of those placements, so nothing is discriminated, unless the case's work keeps
// every wake clear of a switch-out.
TEST(Results, DiscriminatedPairsFollowTheSetsOptions) {
  json rs = fixture_results(kBoxC);
  auto pipe = [](const json& p) {
    for (const json& e : p["cases"])
      if (e["case"] == "pipe/threads/kernel") return e;
    return json();
  };
  const json native = pipe(predict_json(rs));
  json expected = json::array();
  for (const char* p : {"mainline", "sync-pair", "sync-core", "sync-core-v2"})
    for (const char* q : {"sync-2017", "current-cpu"}) expected.push_back(json::array({p, q}));
  EXPECT_EQ(native["discriminates"], expected);
  EXPECT_FALSE(native.contains("discriminates_native"));
  rs["environment"]["emulated"] = true;
  const json emulated = pipe(predict_json(rs));
  EXPECT_EQ(emulated["discriminates"], json::array());
  EXPECT_EQ(emulated["discriminates_native"], expected);
  for (auto& c : rs["cases"])
    if (c["name"] == "pipe/threads/kernel") c["params"]["work_ns"] = kSwitchOutWorkNs;
  const json worked = pipe(predict_json(rs));
  EXPECT_EQ(worked["discriminates"], expected);
  EXPECT_FALSE(worked.contains("discriminates_native"));
  EXPECT_TRUE(slow_switch_out_applies(true, kSwitchOutWorkNs - 1));
  EXPECT_FALSE(slow_switch_out_applies(true, kSwitchOutWorkNs));
  EXPECT_FALSE(slow_switch_out_applies(false, 0));
}

// ---- verdicts that can fail: a 2-CPU box like the one CI runs on ---------------------------

const std::string kKvm2 = kPredict + "/kvm-epyc-2vcpu-nosmt.xml";

// The 2-CPU set with every kernel case's histogram replaced by `histogram`.
json two_cpu_results(const json& histogram = nullptr) {
  json rs = json::parse(test::read_fixture(kPredict + "/results-2cpu.json"));
  rs["topology"]["xml"] = test::read_fixture(kKvm2);
  if (!histogram.is_null())
    for (auto& c : rs["cases"])
      if (c["placement"] == "kernel") c["observed"]["histogram"] = histogram;
  return rs;
}

// Every kernel case stacked on the waker's CPU: the stacking policies match strictly; mainline,
// whose range holds any mix of split and stacked here, is no prediction, never a match (the group
// choice used to rank by the range distance, where mainline ties at 0 and came first).
TEST(Verdicts, AllStackedNamesTheStackingPoliciesNotMainline) {
  const json p = predict_json(two_cpu_results({{"same-cpu", 3000}}));
  const json& pipe = entry(p, "pipe");
  EXPECT_EQ(pipe["consistent_with"], json::array({"sync-pair/sync-2017/current-cpu"}));
  EXPECT_EQ(pipe["groups"][0]["name"], "sync-pair/sync-2017/current-cpu");
  EXPECT_EQ(verdict_of(pipe, "mainline"), "NO-PREDICTION");
  EXPECT_DOUBLE_EQ(pipe["policies"]["mainline"]["distance"]["strict"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(pipe["policies"]["mainline"]["coverage"].get<double>(), 1.0);
  // eventfd carries no WF_SYNC: only current-cpu's handoff stacks it.
  const json& eventfd = entry(p, "eventfd");
  EXPECT_EQ(eventfd["consistent_with"], json::array({"current-cpu"}));
  EXPECT_NE(verdict_of(eventfd, "mainline"), "MATCH");
}

// Every kernel case split over the two CPUs: mainline matches, the stacking policies miss.
TEST(Verdicts, AllSplitNamesMainlineAndTheStackingPoliciesMiss) {
  const json p = predict_json(two_cpu_results({{"llc", 3000}}));
  const json& pipe = entry(p, "pipe");
  EXPECT_EQ(pipe["groups"][0]["policies"][0], "mainline");
  EXPECT_EQ(verdict_of(pipe, "mainline"), "MATCH");
  for (const char* stacking : {"sync-pair", "sync-2017", "current-cpu"})
    EXPECT_EQ(verdict_of(pipe, stacking), "MISS") << stacking;
  EXPECT_EQ(verdict_of(entry(p, "eventfd"), "current-cpu"), "MISS");
}

// The fixture's own mixed placements (what this box does): nothing matches strictly, and
// mainline's range cannot fail here.
TEST(Verdicts, AMixOnTwoCpusIsNoPredictionForMainline) {
  const json p = predict_json(two_cpu_results());
  const json& pipe = entry(p, "pipe");
  EXPECT_EQ(pipe["consistent_with"], json::array());
  EXPECT_EQ(verdict_of(pipe, "mainline"), "NO-PREDICTION");
  EXPECT_EQ(verdict_of(pipe, "sync-2017"), "MISS");
  const std::string text = predict_text(two_cpu_results());
  EXPECT_NE(text.find("NO-PREDICTION"), std::string::npos) << text;
  EXPECT_NE(text.find("LLC from the XML's L3/L2 rule: the set records no sched domains "
                      "(debugfs not mounted)"),
            std::string::npos)
      << text;
  for (const auto& line : split_lines(text)) EXPECT_LE(line.size(), 100u) << line;
}

// A busy CPU (the case's background) is part of the case that ran: the wakee's start CPU busy
// makes mainline's sync wake stack the pair, where the idle box splits it.
TEST(Verdicts, TheCasesBackgroundCpusArePredictedBusy) {
  json rs = two_cpu_results({{"same-cpu", 3000}});
  const json idle = entry(predict_json(rs), "pipe");
  for (auto& c : rs["cases"])
    if (c["name"] == "pipe/threads/kernel") c["background"] = {{"knob", "1"}, {"cpus", {1}}};
  const json busy = entry(predict_json(rs), "pipe");
  EXPECT_EQ(idle["busy"], json::array());
  EXPECT_EQ(busy["busy"], json::array({1}));
  EXPECT_EQ(idle["policies"]["mainline"]["classes"], (json{{"llc", 1.0}}));
  EXPECT_EQ(busy["policies"]["mainline"]["classes"], (json{{"same-cpu", 1.0}}));
  EXPECT_EQ(verdict_of(busy, "mainline"), "MATCH");
  for (auto& c : rs["cases"])
    if (c["name"] == "pipe/threads/kernel") c["background"]["cpus"] = {7};
  EXPECT_THROW(predict_for_results(rs), std::invalid_argument);
}

// The 2-CPU set's kernel pipe case with a background on CPU 1 busy 40 % of every 10 ms, predicted.
json duty_case_prediction(const json& histogram) {
  json rs = two_cpu_results(histogram);
  for (auto& c : rs["cases"])
    if (c["name"] == "pipe/threads/kernel") {
      c["background"] = {{"knob", "1"}, {"cpus", {1}}};
      c["params"]["background"] = "1";
      c["params"]["duty"] = 40;
      c["params"]["period_ms"] = 10;
    }
  const json p = predict_json(rs);
  for (const json& c : p["cases"])
    if (c["case"] == "pipe/threads/kernel") return c;
  return nullptr;
}

// A background busy part of the time (the duty knob) gets the intermittent mix: on two CPUs the
// pair stacks while CPU 1 is busy and splits while it rests, so mainline's same-cpu share follows
// the duty (40 %) where the single state with the background on throughout says 100 %. A set with
// every round trip stacked (what the background on throughout gives) must MISS.
TEST(Verdicts, ADutyCycleBackgroundIsPredictedAsItsMix) {
  const json e = duty_case_prediction({{"same-cpu", 1200}, {"llc", 1800}});
  ASSERT_EQ(e["busy"], json::array({1})) << e;
  const json& classes = e["policies"]["mainline"]["classes"];
  EXPECT_NEAR(classes.value("same-cpu", 0.0), 0.4, 0.02) << classes;
  EXPECT_NEAR(classes.value("llc", 0.0), 0.6, 0.02) << classes;
  EXPECT_EQ(verdict_of(e, "mainline"), "MATCH") << e;
  EXPECT_EQ(verdict_of(duty_case_prediction({{"same-cpu", 3000}}), "mainline"), "MISS");
}

// The recorded sched domains name the LLC: on a POWER9 (SMT4 cores, an L3 per pair of cores in the
// XML) whose kernel shares the LLC only at the SMT level, the core is the LLC, so mainline's sync
// wake from CPU 0 pulls a wakee from CPU 4 (the other core of the L3) onto CPU 0's core.
TEST(Verdicts, TheRecordedSchedDomainsNameTheLlc) {
  json rs =
      fixture_results(kPredictFixtures + "/topologies/power9-smt4-2pkg-2numa-128pu-butte.xml");
  for (auto& c : rs["cases"])
    if (c["name"] == "pipe/threads/kernel")
      c["cpus"] = {{"waker", 0}, {"wakee", 4}, {"allowed", "0-15"}};
  const json xml = predict_json(rs);
  rs["environment"] = {{"sched_domains",
                        {{{"cpu", 0}, {"domain", 0}, {"name", "SMT"}, {"flags", {"SD_SHARE_LLC"}}},
                         {{"cpu", 0}, {"domain", 1}, {"name", "MC"}, {"flags", json::array()}}}}};
  const json core = predict_json(rs);
  EXPECT_NE(xml["llc_from"].get<std::string>().find("the XML's L3/L2 rule"), std::string::npos);
  EXPECT_NE(core["llc"].get<std::string>().find("core"), std::string::npos) << core["llc"];
  EXPECT_EQ(core["llc_from"], "the recorded sched domains of CPU 0 (SMT MC)");
  EXPECT_NE(entry_at(xml, "kernel")["policies"]["mainline"]["classes"],
            entry_at(core, "kernel")["policies"]["mainline"]["classes"]);
  rs["environment"]["sched_domains"][0]["name"] = "XYZ";
  EXPECT_NE(predict_json(rs)["llc_from"].get<std::string>().find("name no level"),
            std::string::npos);
  rs["environment"]["sched_domains"] = {{{"cpu", "0"}, {"domain", "x"}}};
  EXPECT_NE(predict_json(rs)["llc_from"].get<std::string>().find("no CPU's levels"),
            std::string::npos);
}

TEST(Verdicts, StrictMatchWinsOverAnyCoverageAndTheRangeOnlyExplains) {
  RangeFit f;
  f.strict = 0.1;
  f.best = 0.0;
  EXPECT_EQ(judge(f, 1.0), Verdict::kMatch);
  f.strict = 0.5;
  EXPECT_EQ(judge(f, 0.95), Verdict::kNoPrediction);
  EXPECT_EQ(judge(f, 0.5), Verdict::kExplained);
  f.best = 0.3;
  EXPECT_EQ(judge(f, 0.5), Verdict::kMiss);
  for (Verdict v : {Verdict::kMatch, Verdict::kExplained, Verdict::kNoPrediction, Verdict::kMiss})
    EXPECT_EQ(parse_verdict(verdict_word(v)), v);
}

// Groups: the same steady state and the same alternatives in another order, or shares that differ
// only by rounding, are one group (they used to split, and the verdict flipped between them).
TEST(Verdicts, GroupsIgnoreTheAlternativesOrderAndRounding) {
  auto result = [](const std::string& id, double third, std::vector<PlacementClass> alts) {
    SteadyResult r;
    r.policy = id;
    r.classes = {{PlacementClass::kLlc, 1 - third}, {PlacementClass::kSameCpu, third}};
    for (PlacementClass c : alts) r.alternatives.push_back({{}, {{c, 1.0}}, {}});
    return r;
  };
  const auto groups =
      group_policies({result("a", 1.0 / 3, {PlacementClass::kSameCpu, PlacementClass::kSmtSibling}),
                      result("b", 0.33333333333333331 + 1e-15,
                             {PlacementClass::kSmtSibling, PlacementClass::kSameCpu}),
                      result("c", 1.0 / 3, {PlacementClass::kSameCpu})});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].name, "a/b");
  EXPECT_EQ(groups[1].name, "c");
}

// ---- predictions per case (docs/result-set.md#predictions) ---------------------------------

// A pinned or kernel case of a sweep point: `suffix` is the knobs' name suffix, `params` the
// recorded params.
json sweep_case(const std::string& mech, const std::string& placement, const json& params,
                const std::string& suffix, double median) {
  json c = {{"name", mech + "/threads/" + placement + suffix},
            {"mechanism", mech},
            {"mode", "threads"},
            {"placement", placement},
            {"wake_flags", "sync"},
            {"params", params},
            {"status", "ok"},
            {"reason", nullptr},
            {"rtt_ns", {{"median", median}, {"p99", 2 * median}}}};
  if (placement == "same-cpu") c["cpus"] = {{"waker", 0}, {"wakee", 0}};
  if (placement == "llc") c["cpus"] = {{"waker", 0}, {"wakee", 1}};
  if (placement == "kernel") {
    c["cpus"] = {{"waker", 0}, {"wakee", 1}};
    c["cpuset"] = json::array();
    for (int i = 0; i < 16; ++i) c["cpuset"].push_back(i);
    c["observed"] = {{"histogram", {{"llc", 900}, {"same-cpu", 100}}},
                     {"migrations", {{"waker", 0}, {"wakee", 0}}}};
  }
  return c;
}

// A work sweep (pipe) and a W x S sweep (binder-like), each point with its own pinned medians.
json sweep_results() {
  json rs = fixture_results();
  rs["cases"] = json::array();
  for (int work : {0, 500, 10000}) {
    const json params = {{"payload", 1}, {"work_ns", work}, {"background", "none"}, {"pairs", 1}};
    const std::string suffix = work ? "/work=" + std::to_string(work) + "ns" : "";
    rs["cases"].push_back(sweep_case("pipe", "same-cpu", params, suffix, 2000 + work));
    rs["cases"].push_back(sweep_case("pipe", "llc", params, suffix, 5000 + 3 * work));
    rs["cases"].push_back(sweep_case("pipe", "kernel", params, suffix, 4000 + 2 * work));
  }
  for (int w : {1, 2})
    for (int s : {1, 4}) {
      const json params = {{"payload", 1}, {"work_ns", 0}, {"background", "none"},
                           {"pairs", 1},   {"w", w},       {"s", s}};
      const std::string suffix = "/w" + std::to_string(w) + "s" + std::to_string(s);
      rs["cases"].push_back(
          sweep_case("binder-like", "same-cpu", params, suffix, 3000 + 100 * w * s));
      rs["cases"].push_back(sweep_case("binder-like", "llc", params, suffix, 9000 + 1000 * w * s));
      rs["cases"].push_back(
          sweep_case("binder-like", "kernel", params, suffix, 8000 + 500 * w * s));
    }
  return rs;
}

// The pinned median of `placement` at the params point of kernel case `kernel_name`.
double pinned_median(const json& rs, const std::string& kernel_name, const std::string& placement) {
  std::string name = kernel_name;
  name.replace(name.find("/kernel"), 7, "/" + placement);
  for (const auto& c : rs["cases"])
    if (c["name"] == name) return c["rtt_ns"]["median"].get<double>();
  throw std::runtime_error("no case " + name);
}

TEST(Results, EachKernelCaseIsCostedFromThePinnedCasesOfItsOwnParams) {
  const json rs = sweep_results();
  const json p = predict_json(rs);
  std::set<std::string> named;
  for (const auto& e : p["cases"]) {
    const std::string name = e["case"];
    named.insert(name);
    EXPECT_EQ(e["measured"]["rtt_ns"].get<double>(), pinned_median(rs, name, "kernel")) << name;
    for (const auto& [id, pol] : e["policies"].items()) {
      double expected = 0;
      for (const auto& [cls, f] : pol["classes"].items())
        expected += f.get<double>() * pinned_median(rs, name, cls);
      ASSERT_TRUE(pol["predicted_rtt_ns"].is_number()) << name << " " << id;
      EXPECT_NEAR(pol["predicted_rtt_ns"].get<double>(), expected, 0.01) << name << " " << id;
    }
    // mainline spreads to the LLC, sync-2017 stacks: each at its own point's pinned median.
    EXPECT_EQ(e["policies"]["mainline"]["predicted_rtt_ns"].get<double>(),
              pinned_median(rs, name, "llc"))
        << name;
    EXPECT_EQ(e["policies"]["sync-2017"]["predicted_rtt_ns"].get<double>(),
              pinned_median(rs, name, "same-cpu"))
        << name;
  }
  EXPECT_EQ(named, (std::set<std::string>{
                       "pipe/threads/kernel", "pipe/threads/kernel/work=500ns",
                       "pipe/threads/kernel/work=10000ns", "binder-like/threads/kernel/w1s1",
                       "binder-like/threads/kernel/w1s4", "binder-like/threads/kernel/w2s1",
                       "binder-like/threads/kernel/w2s4"}));
  // The premises hold each point apart: the sync-pair saving shrinks as the work grows.
  const std::string text = predict_text(rs);
  EXPECT_NE(text.find("pipe/threads/kernel/work=10000ns  sync  24.0 us"), std::string::npos)
      << text;
  EXPECT_NE(text.find("pipe/threads/work=10000ns same-cpu 12.0 us vs llc 35.0 us"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("binder-like/threads/w2s4 same-cpu 3.80 us vs kernel 12.0 us"),
            std::string::npos)
      << text;
}

// fanout's cases (many tasks, each waking several) are no pair the model describes: its kernel
// case is "not compared" with the registry's reason, and no premise check holds a fanout point.
TEST(Results, AFanOutCaseIsNotComparedAndChecksNoPremise) {
  json rs = sweep_results();
  const json params = {{"payload", 1}, {"work_ns", 0}, {"background", "none"},
                       {"pairs", 1},   {"w", 2},       {"s", 8}};
  for (const char* placement : {"same-cpu", "llc", "kernel"})
    rs["cases"].push_back(sweep_case("fanout", placement, params, "/w2s8", 7000));
  const json p = predict_json(rs);
  const json& e = entry(p, "fanout");
  EXPECT_EQ(e["case"], "fanout/threads/kernel/w2s8");
  ASSERT_TRUE(e.contains("skipped")) << e.dump();
  EXPECT_EQ(e["skipped"], "not compared: " + *registry().mechanism("fanout").not_modelled);
  EXPECT_FALSE(e.contains("policies"));
  for (const auto& [policy, premise] : p["premises"].items())
    for (const auto& check : premise.value("checks", json::array()))
      EXPECT_NE(check["mechanism"], "fanout") << policy;
  const std::string text = predict_text(rs);
  EXPECT_NE(text.find("fanout/threads/kernel/w2s8: not compared: N senders x M receivers"),
            std::string::npos)
      << text;
}

TEST(Results, AMissingPinnedPointIsNotAvailableNeverBorrowed) {
  json rs = sweep_results();
  json kept = json::array();
  for (const auto& c : rs["cases"])
    if (c["name"] != "pipe/threads/llc/work=10000ns") kept.push_back(c);
  rs["cases"] = kept;
  const json p = predict_json(rs);
  for (const auto& e : p["cases"]) {
    if (e["case"] != "pipe/threads/kernel/work=10000ns") continue;
    const json& mainline = e["policies"]["mainline"];
    EXPECT_TRUE(mainline["predicted_rtt_ns"].is_null()) << mainline;
    EXPECT_EQ(mainline["unpriced"], "n/a: no pinned llc case with work=10000ns");
    EXPECT_EQ(e["policies"]["sync-2017"]["predicted_rtt_ns"].get<double>(), 12000);
  }
  const std::string text = predict_text(rs);
  EXPECT_NE(text.find("n/a  mainline/sync-pair/sync-core: llc 100% (n/a: no pinned llc case"),
            std::string::npos)
      << text;
}

// ---- CLI end to end -------------------------------------------------------------------------

struct CliRun {
  int status;
  std::string out, err;
};

CliRun run_cli(const std::string& args) {
  auto tmp = std::filesystem::temp_directory_path() / ("wb_predict_" + std::to_string(::getpid()));
  std::string err_path = tmp.string() + ".err";
  std::string cmd = std::string(WB_BINARY) + " predict " + args + " 2>" + err_path;
  FILE* f = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  int st = ::pclose(f);
  CliRun r{WEXITSTATUS(st), out, test::read_fixture(err_path)};
  std::filesystem::remove(err_path);
  return r;
}

TEST(PredictCli, ScenarioJsonHasTheContractShape) {
  CliRun r =
      run_cli("--topology " + kBoxC + " --scenario " + kPredict + "/c2-busy-prev.json --json");
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["scenario"]["waker"], 2);
  ASSERT_EQ(j["policies"].size(), 6u);
  for (const auto& [id, p] : j["policies"].items()) {
    EXPECT_TRUE(p["cpu"].is_number_integer()) << id;
    EXPECT_TRUE(p["class"].is_string()) << id;
    EXPECT_FALSE(p["path"].get<std::string>().empty()) << id;
  }
  EXPECT_EQ(j["policies"]["mainline"]["cpu"], 3);  // vector C2
  EXPECT_EQ(j["policies"]["sync-core-v2"]["cpu"], 10);
  EXPECT_EQ(j["policies"]["sync-core-v2"]["class"], "smt-sibling");
  CliRun text = run_cli("--topology " + kBoxC + " --scenario " + kPredict + "/c2-busy-prev.json");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("sync-core-v2"), std::string::npos);
}

TEST(PredictCli, SteadyAndResults) {
  CliRun r = run_cli("--topology " + kPredictFixtures +
                     "/topologies/model/box-d-2s-8c-smt2-stride16-slit21.xml --steady --sync "
                     "--start 2,9 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["steady"].size(), 1u);
  EXPECT_EQ(j["steady"][0]["policies"]["sync-core-v2"]["cpus"], json::array({2, 18}));

  auto tmp = std::filesystem::temp_directory_path() /
             ("wb_predict_rs_" + std::to_string(::getpid()) + ".json");
  std::ofstream(tmp) << fixture_results().dump();
  CliRun res = run_cli("--results " + tmp.string() + " --json");
  ASSERT_EQ(res.status, 0) << res.err;
  EXPECT_EQ(entry(json::parse(res.out), "pipe")["consistent_with"],
            json::array({"sync-2017/current-cpu"}));
  CliRun both = run_cli("--results " + tmp.string() + " --topology " + kBoxC);
  EXPECT_EQ(both.status, 2);
  std::filesystem::remove(tmp);
}

TEST(PredictCli, LiveMachineSteadyState) {
  CliRun r = run_cli("--json");
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["steady"].size(), 2u);  // sync and non-sync
  for (const auto& s : j["steady"]) {
    EXPECT_EQ(s["policies"].size(), 6u);
    // current-cpu always stacks the pair on the first waker's CPU.
    EXPECT_EQ(s["policies"]["current-cpu"]["classes"], (json{{"same-cpu", 1.0}}));
  }
}

}  // namespace
}  // namespace wb
