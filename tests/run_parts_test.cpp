// The pure parts of `wakebench run` (runners/run/): the plan from the command line, the schedule
// its seed fixes, the progress and look lines, the options' checks, and what a set records of its
// tracing, A/B setting and until-decided looks.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "common/schema/run_order.h"
#include "runners/run/ab.h"
#include "runners/run/options.h"
#include "runners/run/plan.h"
#include "runners/run/progress.h"
#include "runners/run/repetition.h"
#include "runners/run/schedule.h"
#include "runners/run/tracing.h"
#include "runners/run/until_decided.h"

namespace wb {
namespace {

const char* kConfig = R"({"schema_version": 1, "name": "t",
  "defaults": {"round_trips": 100, "warmup": 10, "repetitions": 3},
  "cases": [{"mechanisms": ["pipe"], "modes": ["threads"],
             "placements": ["same-cpu", "llc", "smt-sibling", "kernel"]}]})";

RunInputs inputs() {
  return RunInputs{"t.json",
                   parse_config(kConfig, "t.json"),
                   Topology::from_synthetic("pack:1 l3:1 core:2 pu:1"),
                   RunOptions{},
                   {},
                   {},
                   "CPUs 2-3 offline"};
}

const RunMoment kMoment{{"wakebench", "run"}, "20250102T030405Z", 4242, 77};

RunPlan plan_of(const RunArgs& args, const std::vector<std::string>& ab = {}) {
  return make_plan(args, inputs(), parse_ab_plan(ab), kMoment);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(RunPlan, HoldsTheConfigsCasesWithTheCommandLinesOverrides) {
  RunArgs args;
  args.repetitions = 2;
  args.round_trips = 50;
  const RunPlan plan = plan_of(args);
  ASSERT_EQ(plan.cases.size(), 4u);
  for (const PlannedCase& c : plan.cases) {
    EXPECT_EQ(c.spec.repetitions, 2) << c.spec.name;
    EXPECT_EQ(c.spec.round_trips, 50) << c.spec.name;
    ASSERT_NE(c.mech, nullptr);
    EXPECT_EQ(c.mech->id(), "pipe");
  }
  // No SMT siblings on this topology: that case is skipped, and has no repetitions to schedule.
  const auto smt = std::find_if(plan.cases.begin(), plan.cases.end(), [](const PlannedCase& c) {
    return c.spec.placement == "smt-sibling";
  });
  ASSERT_NE(smt, plan.cases.end());
  EXPECT_EQ(smt->spec.skip_reason.rfind("unavailable: ", 0), 0u) << smt->spec.skip_reason;
  EXPECT_TRUE(smt->spec.skip_reason.ends_with(" (CPUs 2-3 offline)")) << smt->spec.skip_reason;
  std::vector<int> expected(4, 2);
  expected[static_cast<size_t>(smt - plan.cases.begin())] = 0;
  EXPECT_EQ(plan.repetitions(), expected);
}

TEST(RunPlan, TheFilterSelectsCasesAndRefusesWhatMatchesNone) {
  RunArgs args;
  args.filter = "-kernel";
  const RunPlan plan = plan_of(args);
  EXPECT_EQ(plan.cases.size(), 3u);
  for (const PlannedCase& c : plan.cases) EXPECT_FALSE(c.spec.by_kernel()) << c.spec.name;
  args.filter = "nothing-is-called-this";
  EXPECT_EQ(error_of([&] { plan_of(args); }),
            "--benchmark_filter nothing-is-called-this: matches no case of t.json");
  args.filter = "(";
  EXPECT_EQ(error_of([&] { plan_of(args); }).rfind("--benchmark_filter (: invalid regular", 0), 0u);
  for (const char* all : {"", "all", "."}) EXPECT_TRUE(name_filter(all)("anything"));
}

TEST(RunPlan, SeedTargetsAndTracingComeFromTheArgsOrTheMoment) {
  RunArgs args;
  RunPlan plan = plan_of(args);
  EXPECT_EQ(plan.seed, 77u);
  ASSERT_EQ(plan.targets.size(), 1u);
  EXPECT_EQ(plan.targets[0].path, "");
  EXPECT_EQ(plan.targets[0].stem.rfind("results/", 0), 0u);
  EXPECT_TRUE(plan.targets[0].stem.ends_with("-20250102T030405Z")) << plan.targets[0].stem;
  EXPECT_EQ(plan.ab_id, "");
  EXPECT_EQ(plan.tracing, Tracing::kNone);
  args.seed = 5;
  args.out = "out/x.json";
  args.trace_wakeups = true;
  plan = plan_of(args);
  EXPECT_EQ(plan.seed, 5u);
  EXPECT_EQ(plan.targets, (std::vector<OutputTarget>{{"out/x.json", plan.targets[0].stem}}));
  EXPECT_EQ(plan.tracing, Tracing::kWakeups);
  args.trace_decisions = true;
  EXPECT_EQ(tracing_choice(args), Tracing::kDecisions);
  EXPECT_EQ(plan_of(args).tracing, Tracing::kDecisions);
  // A kernel that records no decisions: the run traces the wakeups alone.
  RunInputs in = inputs();
  in.decisions_unavailable = "no lab decision event and BPF fentry refused (EPERM)";
  EXPECT_EQ(make_plan(args, std::move(in), parse_ab_plan({}), kMoment).tracing, Tracing::kWakeups);
}

TEST(RunPlan, AnAbRunHasASetPerSettingAndOneId) {
  RunArgs args;
  args.out = "out/x.json";
  const RunPlan plan = plan_of(args, {"feature:TTWU_QUEUE=on,off"});
  EXPECT_EQ(plan.targets, (std::vector<OutputTarget>{{"out/x-ab0.json", "out/x-ab0"},
                                                     {"out/x-ab1.json", "out/x-ab1"}}));
  EXPECT_EQ(plan.ab_id, "20250102T030405Z-4242");
  const std::optional<AbSet> set1 = ab_set(plan, 1);
  ASSERT_TRUE(set1);
  EXPECT_EQ(set1->id, plan.ab_id);
  EXPECT_EQ(set1->setting, 1);
  EXPECT_EQ(set1->settings, 2);
  EXPECT_EQ(set1->label, "TTWU_QUEUE=off");
  EXPECT_EQ(set1->order_seed, 77u);
  EXPECT_FALSE(ab_set(plan_of(RunArgs{}), 0));
  EXPECT_EQ(output_targets(RunArgs{}, "results/h-t", 2),
            (std::vector<OutputTarget>{{"", "results/h-t-ab0"}, {"", "results/h-t-ab1"}}));
}

TEST(RunSchedule, TheSeedFixesTheOrderAndSkippedCasesHaveNoStep) {
  RunArgs args;
  args.seed = 11;
  const RunPlan plan = plan_of(args);
  const std::vector<AbStep> steps = run_schedule(plan);
  const std::vector<AbStep> again = run_schedule(plan_of(args));
  ASSERT_EQ(steps.size(), 9u);  // 3 cases that run, 3 repetitions each
  std::vector<size_t> order, order_again;
  for (const AbStep& s : steps) order.push_back(s.case_index);
  for (const AbStep& s : again) order_again.push_back(s.case_index);
  EXPECT_EQ(order, order_again);
  EXPECT_EQ(order, interleaved_order(plan.repetitions(), 11));
  const std::vector<int> reps = plan.repetitions();
  for (const AbStep& s : steps) {
    EXPECT_GT(reps[s.case_index], 0);
    EXPECT_EQ(s.setting, 0);
  }
}

CaseRecord record_of(const std::string& name, int64_t rtt_ns, int reps_done) {
  CaseRecord r;
  r.spec.name = name;
  r.spec.round_trips = 100;
  r.spec.repetitions = 2;
  for (int i = 0; i < reps_done; ++i) {
    PairSamples p;
    p.rtt_ns.assign(100, rtt_ns);
    r.repetitions.push_back({p});
  }
  return r;
}

TEST(RunProgress, OneLinePerCaseWithTheEta) {
  CaseRecord a = record_of("pipe/threads/llc", 5000, 0),
             b = record_of("pipe/threads/same-cpu", 0, 0);
  CaseRecord skipped = record_of("pipe/threads/smt-sibling", 0, 0);
  skipped.spec.skip_reason = "unavailable: no SMT";
  Progress progress({&skipped, &a, &b});
  skipped.status = CaseStatus::kSkipped;
  skipped.reason = skipped.spec.skip_reason;
  EXPECT_EQ(progress.case_done(skipped, "", 1),
            "[1/3] pipe/threads/smt-sibling                 skipped: unavailable: no SMT\n");
  a = record_of("pipe/threads/llc", 5000, 2);
  progress.repetition_done(a.spec);
  progress.repetition_done(a.spec);
  // 200 of 400 round trips in 30 s: 30 s left.
  EXPECT_EQ(progress.case_done(a, " ab1", 30),
            "[2/3] pipe/threads/llc ab1                     ok  median   5.00 us  p99   5.00 us"
            "  ETA 0:30\n");
  b.status = CaseStatus::kFailed;
  b.reason = "timed out";
  EXPECT_EQ(progress.case_done(b, "", 40),
            "[3/3] pipe/threads/same-cpu                    failed: timed out\n");
}

TEST(RunProgress, DurationsAndLookLines) {
  EXPECT_EQ(fmt_duration(0), "0:00");
  EXPECT_EQ(fmt_duration(75.9), "1:15");
  EXPECT_EQ(fmt_duration(3725), "62:05");
  EXPECT_EQ(look_line({2, 10, 0.0123, 1, 2, 3, 3}, 61, 300, 45),
            "wakebench: look 2 of 10 (level 0.0123): 1 DIFFERENT, 2 SAME, 3 UNKNOWN; 3 go on; "
            "1:01 of 5:00 spent; next look in about 0:45\n");
  EXPECT_EQ(look_line({10, 10, 0.05, 6, 0, 0, 0}, 61, 300, -1),
            "wakebench: look 10 of 10 (level 0.0500): 6 DIFFERENT, 0 SAME, 0 UNKNOWN; 0 go on; "
            "1:01 of 5:00 spent\n");
}

TEST(RunOptionsCheck, OptionsThatGoOnlyWithAnotherAndExtras) {
  RunArgs args;
  EXPECT_EQ(error_of([&] { check_options(args); }), "");
  args.ab_root = "/tmp";
  EXPECT_EQ(error_of([&] { check_options(args); }), "--ab-root: only with --ab");
  args = RunArgs{};
  args.ab_any_setting = true;
  EXPECT_EQ(error_of([&] { check_options(args); }), "--ab-any-setting: only with --ab");
  args = RunArgs{};
  args.decision_recorder = "tp_btf";
  EXPECT_EQ(error_of([&] { check_options(args); }),
            "--decision-recorder: only with --trace-decisions");
  args.trace_decisions = true;
  EXPECT_EQ(error_of([&] { check_options(args); }), "");
  args = RunArgs{};
  args.until_decided = "base.json";
  args.ab = {"feature:TTWU_QUEUE=on,off"};
  EXPECT_EQ(error_of([&] { check_options(args); }),
            "--until-decided: not with --ab (an A/B run compares its own sets)");
  args = RunArgs{};
  args.extras = {"--benchmark_min_time=1s"};
  EXPECT_EQ(error_of([&] { check_options(args); }),
            "--benchmark_min_time=1s: a repetition is a fixed number of round trips here; use "
            "--round-trips N");
  args.extras = {"--benchmark_format=json"};
  EXPECT_EQ(error_of([&] { check_options(args); }),
            "unrecognized Google Benchmark flag --benchmark_format=json (run takes "
            "--benchmark_filter and --benchmark_repetitions)");
  args.extras = {"--bogus"};
  EXPECT_EQ(error_of([&] { check_options(args); }),
            "unknown option --bogus (see wakebench run --help)");
}

TEST(RunOptionsCheck, EventList) {
  const std::vector<std::string> defaults = {"cycles", "instructions"};
  EXPECT_EQ(event_list("", defaults), defaults);
  EXPECT_TRUE(event_list("none", defaults).empty());
  EXPECT_EQ(event_list("a,,b", defaults), (std::vector<std::string>{"a", "b"}));
}

TEST(RunRecords, TraceSchedstatAndUntilDecided) {
  EXPECT_EQ(case_trace(std::nullopt, ""), nlohmann::ordered_json({{"unavailable", "not traced"}}));
  EXPECT_EQ(case_trace(WakeupTraceSummary{}, "no tracefs"),
            nlohmann::ordered_json({{"unavailable", "no tracefs"}}));
  const SequentialRun seq(4, 0.05);
  const UntilDecidedRecord r = until_decided_record({ResultSet{"base.json"}, 4, 60}, seq, 0, 1.5);
  EXPECT_EQ(r.base, "base.json");
  EXPECT_EQ(r.looks, 0);
  EXPECT_EQ(r.max_looks, 4);
  EXPECT_EQ(r.budget_s, 60);
  EXPECT_EQ(r.elapsed_s, 1.5);
  EXPECT_EQ(r.alpha, 0.05);
  EXPECT_EQ(r.counts, (std::vector<std::pair<std::string, int64_t>>{
                          {"DIFFERENT", 0}, {"SAME", 0}, {"UNKNOWN", 0}}));
}

// After a traced repetition the next starts only once the trace work is as far behind as it took,
// and 50 ms more (docs/cli.md#trace-settle); a clock that went back counts as no work.
TEST(RunRecords, ATracedRepetitionIsFollowedByAPauseBeyondItsTraceWork) {
  using std::chrono::milliseconds;
  EXPECT_EQ(trace_settle(milliseconds(0)), milliseconds(50));
  EXPECT_EQ(trace_settle(milliseconds(30)), milliseconds(80));
  EXPECT_EQ(trace_settle(milliseconds(400)), milliseconds(450));
  EXPECT_EQ(trace_settle(milliseconds(-5)), milliseconds(50));
}

}  // namespace
}  // namespace wb
