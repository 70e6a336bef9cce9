// The sched features the wakeup model takes (docs/policy-model.md#sched-features): per feature a
// wakeup whose CPU changes when the feature is off, and one where it must not; the steady state
// and a result set's predictions with a set's features; the note of every feature the model
// leaves out. Release well under a second (ASan ~10x).
#include "analysis/model/model_features.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/predict/predict.h"
#include "analysis/predict/predict_results.h"
#include "analysis/predict/replay_io.h"
#include "analysis/results/resultset_io.h"
#include "common/system/topology.h"
#include "tests/support.h"

namespace wb {
namespace {

using nlohmann::json;

// Two sockets of 8 CPUs, one LLC and NUMA node each (0-7, 8-15), distance 21: wake_affine()
// decides at the NUMA level, and select_idle_sibling() then searches the chosen CPU's LLC.
const std::string kBoxDn = test::fixture_path("topologies/model/box-dn-2s-8c-nosmt-slit21.xml");

std::string read_file(const std::string& path) { return test::read_fixture(path); }

const SchedTopology& box_dn() {
  static const SchedTopology s(Topology::from_xml(kBoxDn));
  return s;
}

// The waker alone on CPU 0 wakes its partner, last on `prev`; `busy` CPUs run one task each.
WakeInput wake(int prev, bool sync, std::vector<int> busy = {}) {
  WakeInput in;
  in.waker = 0;
  in.prev = prev;
  in.sync = sync;
  in.recent_used_cpu = prev;
  in.nr_running[0] = 1;
  for (int c : busy) in.nr_running[c] += 1;
  return in;
}

// The CPU mainline picks for `in` with the feature list `features` ("" = the defaults).
int cpu_with(WakeInput in, const std::string& features) {
  in.features = parse_model_features(features, "test");
  return predict_wakeup(box_dn(), in, policy_by_id("mainline")).cpu;
}

// ---- one wakeup per feature -------------------------------------------------------------------

// A sync wake across the sockets: WA_IDLE's "waker alone on its CPU" pulls the wakee into the
// waker's LLC (the first idle CPU after 0); without it wake_affine_weight() keeps prev.
TEST(ModelFeatures, WaIdleOffKeepsASyncWakeeInItsOwnLlc) {
  EXPECT_EQ(cpu_with(wake(8, true), ""), 1);
  EXPECT_EQ(cpu_with(wake(8, true), "NO_WA_IDLE"), 8);
  // In one LLC select_idle_sibling() finds the idle prev from either target: no change.
  EXPECT_EQ(cpu_with(wake(1, true), ""), 1);
  EXPECT_EQ(cpu_with(wake(1, true), "NO_WA_IDLE"), 1);
}

// A non-sync wake of a task whose prev is busy: WA_IDLE has no answer, wake_affine_weight() finds
// the waker's side lighter (1024 x 100 < 1024 x 108) and pulls; without WA_WEIGHT, prev's LLC.
TEST(ModelFeatures, WaWeightOffLeavesABusyPrevsWakeeInItsLlc) {
  EXPECT_EQ(cpu_with(wake(8, false, {8}), ""), 1);
  EXPECT_EQ(cpu_with(wake(8, false, {8}), "NO_WA_WEIGHT"), 9);
  // A sync wake with prev idle is WA_IDLE's: WA_WEIGHT is never asked.
  EXPECT_EQ(cpu_with(wake(8, true), "NO_WA_WEIGHT"), 1);
}

// The same wake: equal loads tie without the bias, and a tie keeps prev.
TEST(ModelFeatures, WaBiasOffTurnsATieIntoPrev) {
  EXPECT_EQ(cpu_with(wake(8, false, {8}), "NO_WA_BIAS"), 9);
  // prev twice as loaded: the waker's side wins with or without the bias.
  EXPECT_EQ(cpu_with(wake(8, false, {8, 8}), ""), 1);
  EXPECT_EQ(cpu_with(wake(8, false, {8, 8}), "NO_WA_BIAS"), 1);
}

// Six of the LLC's eight CPUs busy: nr_idle_scan is 2, the scan gives up at CPU 3 and the wakee
// lands on the busy target; without SIS_UTIL the scan goes on to idle CPU 6.
TEST(ModelFeatures, SisUtilOffScansPastTheBudget) {
  const WakeInput loaded = wake(1, true, {1, 2, 3, 4, 5});
  EXPECT_EQ(default_nr_idle_scan(box_dn(), loaded, 0), 2);
  EXPECT_EQ(cpu_with(loaded, ""), 0);
  EXPECT_EQ(cpu_with(loaded, "NO_SIS_UTIL"), 6);
  // An idle LLC's budget covers it: the first idle CPU either way.
  EXPECT_EQ(cpu_with(wake(1, true, {1}), ""), 2);
  EXPECT_EQ(cpu_with(wake(1, true, {1}), "NO_SIS_UTIL"), 2);
}

// A wakee still switching out on the other socket is queued there by IPI; without TTWU_QUEUE the
// waker waits for the switch-out and selects (WA_IDLE pulls it).
TEST(ModelFeatures, TtwuQueueOffSelectsForAWakeeStillOnItsCpu) {
  WakeInput far = wake(8, true);
  far.wakee_on_cpu = true;
  EXPECT_EQ(cpu_with(far, ""), 8);
  EXPECT_EQ(cpu_with(far, "NO_TTWU_QUEUE"), 1);
  // In the same LLC with prev busy ttwu_queue_cond() is false: a selection either way.
  WakeInput near = wake(1, true, {1});
  near.wakee_on_cpu = true;
  EXPECT_EQ(cpu_with(near, ""), 2);
  EXPECT_EQ(cpu_with(near, "NO_TTWU_QUEUE"), 2);
}

// ---- the steady state ------------------------------------------------------------------------

SteadyResult steady(const std::string& features, bool slow_switch_out = false) {
  SteadyOptions opt;
  opt.start_a = 0;
  opt.start_b = 8;
  opt.allowed = {0, 8};
  opt.slow_switch_out = slow_switch_out;
  opt.features = parse_model_features(features, "test");
  return simulate_steady_state(box_dn(), opt, policy_by_id("mainline"));
}

// A pipe pair confined to CPUs 0 and 8 stacks on one CPU (WA_IDLE pulls, nothing idle in the
// waker's LLC) and stays split across the nodes without WA_IDLE.
TEST(ModelFeatures, SteadyStateFollowsTheFeatures) {
  EXPECT_EQ(steady("").classes, (std::map<PlacementClass, double>{{PlacementClass::kSameCpu, 1}}));
  EXPECT_EQ(steady("NO_WA_IDLE").classes,
            (std::map<PlacementClass, double>{{PlacementClass::kCrossNuma, 1}}));
}

// A slow switch-out keeps the pair where it started only through the wakelist queueing.
TEST(ModelFeatures, SlowSwitchOutAlternativesNeedTtwuQueue) {
  auto held = [](const SteadyResult& r) {
    for (const auto& a : r.alternatives)
      if (a.cause.kind == AltCause::Kind::kHeldAtStart ||
          a.cause.kind == AltCause::Kind::kBalancerPull)
        return true;
    return false;
  };
  EXPECT_TRUE(held(steady("", true)));
  EXPECT_FALSE(held(steady("NO_TTWU_QUEUE", true)));
}

// ---- a set's features ------------------------------------------------------------------------

const FeatureNote* note(const SetFeatures& f, const std::string& name) {
  for (const FeatureNote& n : f.notes)
    if (n.name == name) return &n;
  return nullptr;
}

TEST(SetFeatures, RecordedThenTheAbSettingOverThem) {
  const std::map<std::string, bool> recorded = {{"DELAY_DEQUEUE", false}, {"WA_IDLE", true},
                                                {"SIS_UTIL", false},      {"SYNC_PAIR", true},
                                                {"NEW_THING", true},      {"PLACE_LAG", true}};
  const SettingValues ab = {{"feature:WA_IDLE", "off"}, {"sysctl:kernel.sched_x", "1"}};
  const SetFeatures f = set_features(&recorded, &ab);
  ModelFeatures want;
  want.wa_idle = false;
  want.sis_util = false;
  EXPECT_EQ(f.model, want);
  EXPECT_EQ(f.from, "environment.sched_features with this A/B setting's features");
  EXPECT_EQ(f.states(FeatureNote::Kind::kModelled), "NO_SIS_UTIL, NO_WA_IDLE");
  ASSERT_NE(note(f, "DELAY_DEQUEUE"), nullptr);
  EXPECT_EQ(note(f, "DELAY_DEQUEUE")->why, "acts on dequeue, not on where the wakee is placed");
  ASSERT_NE(note(f, "SYNC_PAIR"), nullptr);
  EXPECT_EQ(note(f, "SYNC_PAIR")->kind, FeatureNote::Kind::kPolicyGate);
  EXPECT_EQ(f.gated_policy, "sync-pair");  // the gate on; a gate off runs no policy
  const SettingValues gate_off = {{"feature:SYNC_PAIR", "off"}};
  EXPECT_EQ(set_features(&recorded, &gate_off).gated_policy, "");
  ASSERT_NE(note(f, "NEW_THING"), nullptr);
  EXPECT_EQ(note(f, "NEW_THING")->kind, FeatureNote::Kind::kNotModelled);
  EXPECT_EQ(note(f, "PLACE_LAG"), nullptr);  // at its default
  const SettingValues bad = {{"feature:WA_IDLE", "maybe"}};
  EXPECT_THROW(set_features(&recorded, &bad), std::invalid_argument);
}

TEST(SetFeatures, NothingRecordedIsTheDefaults) {
  const SetFeatures none = set_features(nullptr, nullptr);
  EXPECT_EQ(none.model, ModelFeatures{});
  EXPECT_TRUE(none.notes.empty());
  EXPECT_EQ(feature_lines(none), std::vector<std::string>{});
  // A set whose features could not be read is read as recording none.
  json doc =
      json::parse(read_file(test::fixture_path("decisions/smt2-3core-mainline/results.json")));
  doc["environment"]["sched_features"] = {{"unavailable", "debugfs not mounted"}};
  const SetFeatures unavailable = set_features(check_result_set(doc));
  EXPECT_TRUE(unavailable.notes.empty());
  EXPECT_EQ(unavailable.from, none.from);
}

// A 6.12.118 kernel at its defaults (a lab guest's recorded features) gives no note: the table's
// defaults are that kernel's.
TEST(SetFeatures, ALinux612SetAtItsDefaultsHasNoNote) {
  const ResultSet rs = check_result_set(
      json::parse(read_file(test::fixture_path("decisions/smt2-3core-mainline/results.json"))));
  ASSERT_TRUE(rs.machine.sched_features);
  ASSERT_GT(rs.machine.sched_features->size(), 20u);
  const SetFeatures f = set_features(rs);
  EXPECT_EQ(f.from, "environment.sched_features");
  EXPECT_TRUE(f.notes.empty()) << f.notes.front().state();
  for (const auto& [name, on] : *rs.machine.sched_features)
    EXPECT_NE(find_sched_feature(name), nullptr);
}

// Each feature the issue names outside select_task_rq_fair() reads "not modelled" with its reason
// when switched from its default, never silently.
TEST(SetFeatures, EveryFeatureOutsideThePlacementSaysWhy) {
  for (const char* name :
       {"DELAY_DEQUEUE", "NEXT_BUDDY", "PLACE_LAG", "RUN_TO_PARITY", "PREEMPT_SHORT"}) {
    const SchedFeatureInfo* i = find_sched_feature(name);
    ASSERT_NE(i, nullptr) << name;
    EXPECT_EQ(i->model, nullptr) << name;
    const std::map<std::string, bool> recorded = {{name, !i->default_on}};
    const std::vector<std::string> lines = feature_lines(set_features(&recorded, nullptr));
    ASSERT_EQ(lines.size(), 1u) << name;
    EXPECT_EQ(lines[0], "not modelled: " + std::string(i->default_on ? "NO_" : "") + name + ": " +
                            std::string(i->why));
    EXPECT_LE(lines[0].size(), 98u) << lines[0];
  }
}

TEST(SetFeatures, ParseTakesOnlyTheModelledOnes) {
  ModelFeatures want;
  want.ttwu_queue = false;
  want.wa_bias = false;
  EXPECT_EQ(parse_model_features("NO_TTWU_QUEUE, NO_WA_BIAS,SIS_UTIL", "x"), want);
  EXPECT_EQ(parse_model_features("", "x"), ModelFeatures{});
  try {
    parse_model_features("NO_DELAY_DEQUEUE", "predict --sched-features");
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("predict --sched-features: \"NO_DELAY_DEQUEUE\" is not a "
                                         "feature the model takes (acts on dequeue"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse_model_features("WA_IDEL", "x"), std::invalid_argument);
}

// ---- a result set ----------------------------------------------------------------------------

// The box-C result set on box Dn's XML: its `kernel-2cpus` case runs on CPUs 0 and 8, one per
// socket, with the features `recorded` and an A/B setting's `ab` values.
json dn_results(const json& recorded, const json& ab_values = nullptr) {
  json rs = json::parse(read_file(test::fixture_path("predict/results-box-c.json")));
  rs["topology"]["xml"] = read_file(kBoxDn);
  if (!recorded.is_null()) rs["environment"] = {{"sched_features", recorded}};
  if (!ab_values.is_null())
    rs["ab"] = {{"id", "20261203T000000Z-1"}, {"setting", 1},        {"settings", 2},
                {"label", "WA_IDLE=off"},     {"values", ab_values}, {"order_seed", 7}};
  return rs;
}

std::string mainline_classes(const ResultsPrediction& p, const std::string& name) {
  for (const CasePrediction& e : p.cases)
    if (e.label == name) return classes_json(e.policies[0].steady.classes).dump();
  return "no case " + name;
}

TEST(SetFeatures, PredictionsUseTheSetsFeaturesAndSayWhatIsLeftOut) {
  const std::string kCase = "pipe/threads/kernel-2cpus";
  const ResultsPrediction plain = predict_for_results(dn_results(nullptr));
  EXPECT_EQ(mainline_classes(plain, kCase), R"({"same-cpu":1.0})");
  EXPECT_EQ(render_results_text(plain).find("sched features"), std::string::npos);
  EXPECT_FALSE(to_json(plain).contains("sched_features"));

  const ResultsPrediction off = predict_for_results(
      dn_results({{"WA_IDLE", true}, {"DELAY_DEQUEUE", false}}, {{"feature:WA_IDLE", "off"}}));
  EXPECT_EQ(mainline_classes(off, kCase), R"({"cross-numa":1.0})");
  const std::string text = render_results_text(off);
  for (const char* line : {"  sched features NO_WA_IDLE: modelled (environment.sched_features "
                           "with this A/B setting's features)\n",
                           "  not modelled: NO_DELAY_DEQUEUE: acts on dequeue, not on where the "
                           "wakee is placed\n"})
    EXPECT_NE(text.find(line), std::string::npos) << text;
  const json j = to_json(off)["sched_features"];
  EXPECT_EQ(j["model"]["WA_IDLE"], false);
  EXPECT_EQ(j["off_default"].size(), 2u);
}

// An emulated set (a TCG guest) gets the slow switch-out alternatives only with TTWU_QUEUE.
TEST(SetFeatures, AnEmulatedSetWithoutTtwuQueueIsNotHeldAtItsStart) {
  auto held = [](const json& recorded) {
    json rs = dn_results(recorded);
    rs["environment"]["emulated"] = true;
    int n = 0;
    for (const CasePrediction& e : predict_for_results(rs).cases)
      for (const PolicyPrediction& p : e.policies)
        for (const SteadyAlternative& a : p.steady.alternatives)
          n += a.cause.kind == AltCause::Kind::kHeldAtStart;
    return n;
  };
  EXPECT_GT(held({{"TTWU_QUEUE", true}}), 0);
  EXPECT_EQ(held({{"TTWU_QUEUE", false}}), 0);
}

// The lab's gated kernel runs the policy whose gate the set (its A/B setting) turned on: replay
// and the predictions' replay digests take that policy's model, in the guest's own summary too.
TEST(SetFeatures, TheGatedKernelRunsThePolicyItsSettingTurnedOn) {
  json rs = dn_results({{"SYNC_PAIR", false}, {"SYNC_CORE", false}},
                       {{"feature:SYNC_PAIR", "off"}, {"feature:SYNC_CORE", "on"}});
  rs["environment"]["lab_kernel"] = {{"policy", "gated"}};
  EXPECT_EQ(kernel_policy(check_result_set(rs)), "sync-core");
  rs["ab"]["values"]["feature:SYNC_CORE"] = "off";
  EXPECT_EQ(kernel_policy(check_result_set(rs)), "mainline");
  rs["environment"]["lab_kernel"] = {{"policy", "sync-2017"}};
  EXPECT_EQ(kernel_policy(check_result_set(rs)), "sync-2017");
  // Inside the guest (no lab_kernel yet): the gate alone names the policy, as on the host.
  rs["environment"].erase("lab_kernel");
  EXPECT_EQ(kernel_policy(check_result_set(rs)), "mainline");
  rs["ab"]["values"]["feature:SYNC_CORE"] = "on";
  EXPECT_EQ(kernel_policy(check_result_set(rs)), "sync-core");
}

}  // namespace
}  // namespace wb
