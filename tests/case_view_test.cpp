// The typed view of a case (analysis/results/case_view.h) reads back what
// common/schema/result_set.cpp's case_json writes: placement kind, class, cpuset, params (per-side
// knobs, W x S), statistics.
#include "analysis/results/case_view.h"

#include <gtest/gtest.h>

#include <string>

#include "common/schema/result_set.h"
#include "common/schema/wakeup_trace.h"
#include "tests/support.h"

namespace wb {
namespace {

using nlohmann::json;

const Topology& box_c() {
  static const Topology t =
      test::fixture_topology("model/box-c-8c-smt2-stride8-1llc.xml");  // 8 cores, SMT2
  return t;
}

CaseRecord record(const std::string& placement, bool kernel, std::vector<CpuPair> pairs,
                  std::vector<int> cpuset, const Params& params) {
  CaseRecord r;
  r.spec.mechanism = "binder-like";
  r.spec.mode = Mode::kProcesses;
  r.spec.placement = placement;
  r.spec.kind = kernel ? PlacementKind::kKernel : PlacementKind::kPinned;
  r.spec.cpu_pairs = std::move(pairs);
  r.spec.cpuset = std::move(cpuset);
  r.spec.params = params;
  r.spec.name = "binder-like/processes/" + placement + name_suffix(params);
  r.wake_flags = WakeFlags::kSync;
  PairSamples s;
  for (int i = 0; i < 9; ++i) {
    s.rtt_ns.push_back(1000 + 100 * i);
    s.wakeup_ns.push_back(400 + i);
    s.waker_cpu.push_back(r.spec.cpu_pairs[0].first);
    s.wakee_cpu.push_back(r.spec.cpu_pairs[0].second);
  }
  s.begin_ns = 0;
  s.end_ns = 9000;
  r.repetitions = {{s}, {s}};
  return r;
}

TEST(CaseView, ReadsBackWhatCaseJsonWrites) {
  Params p;
  p.w = 2;
  p.s = 4;
  p.work_ns = 2000;
  p.sched = {SchedPolicy{SchedPolicy::kFifo, 10}, std::nullopt};
  p.nice = {std::nullopt, -5};
  const json cases =
      json::array({case_json(record("llc", false, {{0, 1}}, {}, p), box_c()),
                   case_json(record("kernel:smt-sibling", true, {{0, 8}}, {0, 8}, p), box_c()),
                   case_json(record("cpu:1,2", false, {{1, 2}}, {}, Params{}), box_c())});
  const std::vector<CaseView> v = parse_cases(cases);
  ASSERT_EQ(v.size(), 3u);

  EXPECT_EQ(v[0].kind, PlacementKind::kPinned);
  EXPECT_EQ(v[0].cls, PlacementClass::kLlc);
  EXPECT_EQ(v[0].mode, Mode::kProcesses);
  EXPECT_EQ(v[0].params, p);  // every knob, per side, survives the round trip
  EXPECT_EQ(v[0].suffix,
            "/w2s4/work=2000ns/sched=waker:fifo:10,wakee:inherit/nice=waker:inherit,wakee:-5");
  EXPECT_EQ(v[0].row(), "llc" + v[0].suffix);
  EXPECT_EQ(v[0].cpus, (CpuPair{0, 1}));
  EXPECT_EQ(v[0].rtt.get("median"), 1400);
  EXPECT_EQ(v[0].repetitions.size(), 2u);
  EXPECT_TRUE(v[0].tps.has_value());
  EXPECT_EQ(v[0].wake_flags, WakeFlags::kSync);
  EXPECT_TRUE(v[0].counters.recorded);
  EXPECT_FALSE(v[0].observed.recorded);

  EXPECT_EQ(v[1].kind, PlacementKind::kKernel);
  EXPECT_EQ(v[1].cls, PlacementClass::kSmtSibling);
  EXPECT_EQ(v[1].cpuset, (std::vector<int>{0, 8}));
  EXPECT_TRUE(v[1].observed.recorded);
  EXPECT_TRUE(v[1].same_point(v[0]));
  EXPECT_LT(placement_rank(v[0]), placement_rank(v[1]));

  EXPECT_EQ(v[2].kind, PlacementKind::kMatrix);
  EXPECT_FALSE(v[2].cls.has_value());
  EXPECT_EQ(v[2].cpus, (CpuPair{1, 2}));
  EXPECT_FALSE(v[2].same_point(v[0]));
  EXPECT_EQ(params_text(v[0].params),
            "w2s4 work=2000ns sched=waker:fifo:10,wakee:inherit nice=waker:inherit,wakee:-5");
  EXPECT_EQ(params_text(v[2].params), "the default knobs");
}

TEST(CaseView, KernelClassResolvesToTheClassesFirstPairWhenNoCpusetIsRecorded) {
  json c = case_json(record("kernel:smt-sibling", true, {{0, 8}}, {0, 8}, Params{}), box_c());
  c.erase("cpuset");
  c["cpus"] = nullptr;
  const CaseView v = parse_cases(json::array({c})).front();
  EXPECT_TRUE(v.cpuset.empty());
  const KernelSetup k = kernel_setup(v, box_c());
  ASSERT_EQ(k.allowed.size(), 2u);
  ASSERT_TRUE(k.start.has_value());
  EXPECT_EQ(classify(box_c(), k.start->first, k.start->second), PlacementClass::kSmtSibling);
  // A recorded cpuset wins, and a CPU the topology lacks is refused naming the case.
  c["cpuset"] = {0, 99};
  EXPECT_THROW(kernel_setup(parse_cases(json::array({c})).front(), box_c()), std::invalid_argument);
}

TEST(CaseView, BadCasesAreOneLineNamingTheCase) {
  const json good = case_json(record("llc", false, {{0, 1}}, {}, Params{}), box_c());
  const auto error = [](const json& c) {
    try {
      parse_cases(json::array({c}));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  json bad = good;
  bad["params"]["payload"] = "big";
  EXPECT_EQ(error(bad).rfind("cases[0] (binder-like/processes/llc): params.payload:", 0), 0u)
      << error(bad);
  bad = good;
  bad["mode"] = "fibers";
  EXPECT_NE(error(bad).find("unknown mode \"fibers\""), std::string::npos) << error(bad);
  bad = good;
  bad["placement"] = "nearby";
  EXPECT_NE(error(bad).find("unknown placement \"nearby\""), std::string::npos) << error(bad);
  bad = good;
  bad["rtt_ns"] = nullptr;
  EXPECT_NE(error(bad).find("status ok but no numeric rtt_ns.median"), std::string::npos);
  bad = good;
  bad.erase("status");
  EXPECT_EQ(error(bad), "cases[0]: missing \"status\"");
  bad = good;
  bad["status"] = "done";
  EXPECT_EQ(error(bad), "cases[0] (binder-like/processes/llc): unknown status \"done\"");
  bad = good;
  bad["wake_flags"] = "sink";
  EXPECT_EQ(error(bad),
            "cases[0] (binder-like/processes/llc): wake_flags \"sink\" is not sync, none or "
            "current-cpu");
  EXPECT_EQ(error(good), "accepted");
}

// A traced kernel case's `trace` as trace_json writes it reads back typed; a block of the wrong
// shape is one line naming the field.
TEST(CaseView, TraceBlockIsTyped) {
  WakeupTraceSummary s;
  s.wakeups = 40;
  s.paths = {{kPathSelection, 30}, {kPathTtwuRunnable, 8}, {kPathQueuedRemote, 2}};
  s.classes_by_path = {{kPathSelection, {{"smt-sibling", 28}, {"same-cpu", 2}}}};
  s.moved = 5;
  s.foreign_wakeups = 3;
  s.stacked_wakes = 7;
  s.stacked_waker_preempted = 6;
  s.migrations_other = 1;
  s.lost = 4;
  CaseRecord r = record("kernel:smt-sibling", true, {{0, 8}}, {0, 8}, Params{});
  r.trace = trace_json(s, {"same-cpu", "smt-sibling"});
  const json traced = case_json(r, box_c());
  const std::optional<TraceView> t = parse_cases(json::array({traced})).front().trace;
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->counted());
  EXPECT_EQ(t->wakeups, 40);
  EXPECT_EQ(t->paths, s.paths);
  ASSERT_TRUE(t->classes_by_path.has_value());
  EXPECT_EQ(t->classes_by_path->at(kPathSelection).at("smt-sibling"), 28);
  EXPECT_EQ(t->classes_by_path->at(kPathQueuedRemote).at("same-cpu"), 0);  // written as 0
  EXPECT_EQ(t->moved, 5);
  EXPECT_EQ(t->foreign_wakeups, 3);
  EXPECT_EQ(t->stacked_wakes, 7);
  EXPECT_EQ(t->stacked_waker_preempted, 6);
  EXPECT_EQ(t->migrations_other, 1);
  EXPECT_EQ(t->dropped, 4);

  json c = traced;
  c["trace"] = {{"unavailable", "tracefs not mounted"}};
  const auto u = parse_cases(json::array({c})).front().trace;
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->unavailable, "tracefs not mounted");
  EXPECT_FALSE(u->counted());
  c["trace"] = nullptr;
  EXPECT_FALSE(parse_cases(json::array({c})).front().trace.has_value());
  c["trace"] = {{"wakeups", 4}, {"paths", {{"selection", 4}}}};  // a set that predates the rest
  const auto old = parse_cases(json::array({c})).front().trace;
  ASSERT_TRUE(old.has_value());
  EXPECT_FALSE(old->classes_by_path.has_value());
  EXPECT_EQ(old->moved, 0);

  const auto error = [&](const char* ptr, const json& v) {
    json bad = traced;
    bad[json::json_pointer(ptr)] = v;
    try {
      parse_cases(json::array({bad}));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string at = "cases[0] (binder-like/processes/kernel:smt-sibling): ";
  EXPECT_EQ(error("/trace/paths", json::array({30, 8, 2})), at + "trace.paths is not an object");
  EXPECT_EQ(error("/trace/paths/selection", -1), at + "trace.paths.selection is -1, not a count");
  EXPECT_EQ(error("/trace/classes_by_path/selection/llc", "x"),
            at + "trace.classes_by_path.selection.llc is \"x\", not a count");
  EXPECT_EQ(error("/trace/stacked", 7), at + "trace.stacked is not an object");
  EXPECT_EQ(error("/trace/wakeups", 1.5), at + "trace.wakeups is 1.5, not a count");
  EXPECT_EQ(error("/trace", "yes"), at + "trace is not an object or null");
  json no_paths = traced;
  no_paths["trace"].erase("paths");
  EXPECT_EQ(error("/trace", no_paths["trace"]), at + "trace: missing \"paths\"");
}

TEST(CaseView, VaryingParamsAreTheKeysThatDifferOrAreMissing) {
  const json a = {{"payload", 1}, {"work_ns", 0}}, b = {{"payload", 1}, {"work_ns", 500}},
             c = {{"payload", 1}};
  EXPECT_EQ(varying_params({&a, &b}), (std::vector<std::string>{"work_ns"}));
  EXPECT_EQ(varying_params({&a, &c}), (std::vector<std::string>{"work_ns"}));
  EXPECT_TRUE(varying_params({&a, &a}).empty());
}

}  // namespace
}  // namespace wb
