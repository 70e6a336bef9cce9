// Decision records (common/schema/wake_decision.h) and their replay (analysis/model/replay.h) on
// the committed synthetic sample tests/fixtures/decisions/smt2-mainline.txt: every line parsed,
// every decision agreed under mainline, an altered one reported, another policy's model
// disagreeing, and malformed lines refused in one line naming the line and the field.
#include "analysis/model/replay.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>

#include "common/schema/wake_decision.h"
#include "common/util/input.h"
#include "tests/support.h"

namespace wb {
namespace {

const std::string kSample = "decisions/smt2-mainline.txt";

const SchedTopology& smt2() {
  static const SchedTopology sched(
      Topology::from_xml(std::string(WB_SOURCE_DIR) + "/configs/lab/topologies/smt2.xml"));
  return sched;
}

std::vector<DecisionRecord> sample() {
  return parse_decisions(test::read_fixture(test::fixture_path(kSample)));
}

TEST(DecisionRecords, EveryDecisionLineOfTheSampleParses) {
  const std::vector<DecisionRecord> d = sample();
  ASSERT_EQ(d.size(), 7u);  // its sched_switch line and comments are passed over
  EXPECT_EQ(d[0].pid, 812);
  EXPECT_EQ(d[0].waker_cpu, 0);
  EXPECT_EQ(d[0].prev, 2);
  EXPECT_EQ(d[0].wake_flags, 0x18u);
  EXPECT_EQ(d[0].idle, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(d[0].allowed, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(d[0].affine, AffineTest::kIdle);
  EXPECT_EQ(d[0].rule, DecisionRule::kSisPrev);
  EXPECT_EQ(d[2].recent_used_cpu, 3);
  EXPECT_EQ(d[3].recent_used_cpu, -1);
  EXPECT_TRUE(d[6].idle.empty());
}

// A run writes each repetition's records after its case's name, the cases interleaved: the
// blocks of one case come back joined, in order.
TEST(DecisionRecords, TheSideFilesBlocksOfOneCaseAreJoined) {
  const auto cases = decision_cases(
      "# header\n# case a\n# run 0\nx\n# case b\n# run 0\ny\n# case a\n# run 1\nz\n");
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].first, "a");
  EXPECT_EQ(cases[0].second, "# run 0\nx\n# run 1\nz\n");
  EXPECT_EQ(cases[1].first, "b");
  EXPECT_EQ(cases[1].second, "# run 0\ny\n");
}

TEST(DecisionRecords, AMalformedLineIsRefusedNamingItAndTheField) {
  const std::string good = test::read_fixture(test::fixture_path(kSample));
  const auto error_of = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    try {
      parse_decisions(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of("prev=2 ", "").rfind("line 5: field \"prev\" missing: \"pipe-812 [000]", 0),
            0u);
  EXPECT_NE(error_of("idle=1-3 ", "idle=1-x ").find("line 5: field \"idle\": invalid CPU list"),
            std::string::npos);
  EXPECT_NE(error_of("cpu=2\n", "cpu=2 extra=1\n").find("line 5: unknown field \"extra\""),
            std::string::npos);
  EXPECT_NE(error_of("affine=WA_IDLE", "affine=WA_BIAS").find("not none, WA_IDLE or WA_WEIGHT"),
            std::string::npos);
  EXPECT_NE(error_of("waker_cpu=0", "waker_cpu=99999").find("not an integer in [0, 8191]"),
            std::string::npos);
  EXPECT_EQ(error_of("pid=812 waker_cpu", "pid=812 pid=813 waker_cpu").find('\n'),
            std::string::npos);
}

// The committed side files of both BPF recorders parse: fentry's of Debian's 6.12.118
// (decisions/smt2-debian-bpf, source=bpf, the wake flags as the kernel passed them) and tp_btf's
// of this VM's vendor 6.18 (decisions/vm2-vendor-tp_btf, source=tp_btf: the flags of the
// mechanism's documented wake for a case task's wake, none for another waker's, and says so).
TEST(DecisionRecords, TheCommittedLinesOfBothBpfRecordersParse) {
  const auto records = [](const std::string& dir) {
    return parse_decisions(test::read_fixture(test::fixture_path(dir + "/results.decisions.txt")));
  };
  const std::vector<DecisionRecord> fentry = records("decisions/smt2-debian-bpf");
  ASSERT_EQ(fentry.size(), 38u);
  for (const DecisionRecord& d : fentry) {
    EXPECT_EQ(d.source, DecisionSource::kBpf);
    EXPECT_EQ(d.wake_flags_from, "");
  }
  const std::vector<DecisionRecord> tp = records("decisions/vm2-vendor-tp_btf");
  ASSERT_EQ(tp.size(), 24u);
  std::map<std::string, int> from;
  for (const DecisionRecord& d : tp) {
    EXPECT_EQ(d.source, DecisionSource::kTpBtf);
    EXPECT_FALSE(d.rule);
    ++from[d.wake_flags_from];
    EXPECT_EQ(d.wake_flags & kWfSync, d.wake_flags_from == "outside" ? 0u : kWfSync);
  }
  EXPECT_EQ(from, (std::map<std::string, int>{
                      {"outside", 3}, {"registry:binder-like", 10}, {"registry:pipe", 11}}));
  EXPECT_EQ(tp[1].pid, 17097);  // the first wake of the pipe pair: 17098 on CPU 1 woke it
  EXPECT_EQ(tp[1].waker_cpu, 1);
  EXPECT_EQ(tp[1].prev, 0);
  EXPECT_EQ(tp[1].wake_flags, 0x18u);
  EXPECT_EQ(decision_source_id(tp[1].source), "tp_btf");
}

TEST(DecisionRecords, ATpBtfLineSaysWhereItsWakeFlagsCameFrom) {
  const std::string line =
      test::read_fixture(test::fixture_path("decisions/vm2-vendor-tp_btf/results.decisions.txt"));
  const auto error_of = [&](const std::string& from, const std::string& to) {
    std::string text = line;
    text.replace(text.find(from), from.size(), to);
    try {
      parse_decisions(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(" wake_flags_from=outside", "").find("field \"wake_flags_from\" missing"),
            std::string::npos);
  EXPECT_NE(error_of("wake_flags_from=outside", "wake_flags_from=guessed")
                .find("not registry:<mechanism>, outside or unknown"),
            std::string::npos);
  EXPECT_NE(error_of("source=tp_btf", "source=kprobe").find("not bpf or tp_btf"),
            std::string::npos);
  EXPECT_EQ(error_of("wake_flags_from=outside", "wake_flags_from=unknown"), "no error");
}

// The lab kernel's event names its rules in runners/lab/trace/wb_decision_trace.h: the same
// list, in the same order, as the model's (docs/policy-model.md#rules), past its "none".
TEST(DecisionRecords, TheKernelEventNamesTheModelsRules) {
  const std::string text =
      test::read_fixture(std::string(WB_SOURCE_DIR) + "/runners/lab/trace/wb_decision_trace.h");
  const auto from = text.find("#define WB_RULE_NAMES");
  ASSERT_NE(from, std::string::npos);
  const std::string header = text.substr(from, text.find("TRACE_EVENT(", from) - from);
  std::vector<std::string> kernel;
  const std::regex entry(R"re(\{ WB_\w+, "(\w+)" \})re");
  for (auto it = std::sregex_iterator(header.begin(), header.end(), entry);
       it != std::sregex_iterator(); ++it)
    if ((*it)[1] != "none") kernel.push_back((*it)[1]);
  std::vector<std::string> model;
  for (DecisionRule r : all_decision_rules()) model.emplace_back(decision_rule_id(r));
  EXPECT_EQ(kernel, model);
  // Every rule the event can print parses in a raw line and is one replay knows.
  const std::string sample = test::read_fixture(test::fixture_path(kSample));
  const std::string first = sample.substr(sample.find("sched_wake_decision:"));
  const std::string line = first.substr(0, first.find('\n'));
  for (DecisionRule rule : all_decision_rules()) {
    const std::string id(decision_rule_id(rule));
    const std::string raw = std::regex_replace(line, std::regex("rule=\\w+"), "rule=" + id);
    const std::vector<DecisionRecord> d = parse_decisions("x-1 [000] d.... 1.0: " + raw);
    ASSERT_EQ(d.size(), 1u) << id;
    EXPECT_EQ(d[0].rule, rule);
    EXPECT_NO_THROW(replay_decisions(d, smt2(), policy_by_id("mainline"))) << id;
  }
  // Its wake_affine() tests, in AffineTest's order.
  const auto affine = text.find("__print_symbolic(__entry->affine,");
  ASSERT_NE(affine, std::string::npos);
  const std::string symbols = text.substr(affine, text.find(")", affine) - affine);
  std::vector<std::string> tests;
  for (auto it = std::sregex_iterator(symbols.begin(), symbols.end(), entry);
       it != std::sregex_iterator(); ++it)
    tests.push_back((*it)[1]);
  EXPECT_EQ(tests, (std::vector<std::string>{std::string(affine_test_id(AffineTest::kNone)),
                                             std::string(affine_test_id(AffineTest::kIdle)),
                                             std::string(affine_test_id(AffineTest::kWeight))}));
}

TEST(Replay, MainlinesModelAgreesWithEveryDecisionOfTheSample) {
  const ReplayResult r = replay_decisions(sample(), smt2(), policy_by_id("mainline"));
  EXPECT_EQ(r.total(), 7);
  EXPECT_EQ(r.agreed(), 7);
  EXPECT_TRUE(r.disagreements.empty());
  EXPECT_EQ(r.by_rule.size(), 7u);
  EXPECT_EQ(r.uncovered().size(), all_decision_rules().size() - 7);
  EXPECT_EQ(r.wide.count, 0);  // one waker, one wakee: never wide
  const std::string text = render_replay_text(r, 10);
  EXPECT_EQ(
      text.rfind("replay under mainline: 7 of 7 decisions agree in CPU and rule (100.00%)", 0), 0u)
      << text;
  EXPECT_NE(text.find("uncovered (no decision was made by them; not agreement): ttwu_runnable"),
            std::string::npos);
}

// One decision altered (the kernel's CPU, then its rule): replay reports exactly that one.
TEST(Replay, AnAlteredDecisionIsReported) {
  for (const auto& alter : {+[](DecisionRecord& d) { d.cpu = 1; },
                            +[](DecisionRecord& d) { d.rule = DecisionRule::kSisTarget; }}) {
    std::vector<DecisionRecord> d = sample();
    alter(d[2]);
    d[5].wake_wide = true;  // what the kernel computed: counted, never given to the model
    const ReplayResult r = replay_decisions(d, smt2(), policy_by_id("mainline"));
    EXPECT_EQ(r.wide.count, 1);
    EXPECT_EQ(r.wide.agree, 1);
    EXPECT_EQ(r.agreed(), 6);
    ASSERT_EQ(r.disagreements.size(), 1u);
    EXPECT_EQ(r.disagreements[0].index, 2u);
    EXPECT_EQ(decision_rule_id(r.disagreements[0].model.rule), "sis_recent_used_cpu");
    const std::string text = render_replay_text(r, 10);
    EXPECT_NE(text.find("first 1 of 1 disagreements:\n  #3 pid 812: waker 0 prev 0 flags 0x18"),
              std::string::npos)
        << text;
    for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1)
      EXPECT_LE(nl - at, 100u) << text.substr(at, nl - at);
  }
}

// The state checks: each unpinned task's first rule, and the has_idle_cores hint held to the
// recorded idle CPUs (smt2: cores {0,1} and {2,3}).
TEST(Replay, TheHintIsHeldToTheRecordedIdleCpus) {
  std::vector<DecisionRecord> d = sample();
  ReplayResult r = replay_decisions(d, smt2(), policy_by_id("mainline"));
  EXPECT_EQ(r.first_rules,
            (std::map<std::string, int64_t>{{"sis_prev", 1}, {"wf_current_cpu", 1}}));
  EXPECT_EQ(r.hint_read, 7);
  EXPECT_EQ(r.hint_stale_true + r.hint_stale_false, 0);
  d[2].has_idle_cores = true;   // idle 1,3: no whole core idle
  d[4].has_idle_cores = false;  // idle 2-3: core {2,3} idle
  r = replay_decisions(d, smt2(), policy_by_id("mainline"));
  EXPECT_EQ(r.hint_stale_true, 1);
  EXPECT_EQ(r.hint_stale_false, 1);
}

// sync-pair's hook tests p->last_wakee == current, the wakee's own last wakee, which the record
// gives as wakee_last_wakee (kernels since 2026-12-03); the waker's last_wakee is another fact.
// A first wake of the lab's 4core guest under sync-pair: the waker last woke someone else, the
// wakee last woke this waker, and the kernel stacked the pair.
TEST(Replay, SyncPairsHookReadsTheWakeesLastWakee) {
  const SchedTopology four(
      Topology::from_xml(std::string(WB_SOURCE_DIR) + "/configs/lab/topologies/4core.xml"));
  const std::string line =
      "pid=185 waker_cpu=1 prev=0 wake_flags=0x18 waker_flips=7 wakee_flips=8 last_wakee=0 "
      "wakee_last_wakee=1 on_rq=0 on_cpu=0 kthread=0 in_task=1 allowed=0-3 nr_idle_scan=3 "
      "prev_nr_idle_scan=3 recent_used_cpu=0 has_idle_cores=0 prev_has_idle_cores=0 "
      "waker_nr_running=1 waker_delayed=0 prev_nr_running=0 idle=0,2-3 wake_wide=0 "
      "want_affine=1 affine=WA_IDLE affine_cpu=1 rule=hook_after_wake_affine cpu=1";
  std::vector<DecisionRecord> d = {parse_decision_fields(line)};
  ASSERT_EQ(d[0].wakee_last_wakee, true);
  EXPECT_EQ(replay_decisions(d, four, policy_by_id("sync-pair")).agreed(), 1);
  d[0].wakee_last_wakee = false;  // the wakee last woke another task: no stacking
  EXPECT_EQ(replay_decisions(d, four, policy_by_id("sync-pair")).agreed(), 0);
  d[0].wakee_last_wakee.reset();  // an older record: the waker's last_wakee (0) stands in
  EXPECT_EQ(replay_decisions(d, four, policy_by_id("sync-pair")).agreed(), 0);
}

// A sync wake under load (no idle CPU, two tasks on the waker's CPU): wake_affine_weight()
// decides between the waker's CPU and prev from the loads. Without recorded loads the model takes
// section 7 item 4's (prev); recorded loads that favour the waker's CPU move it there, and loads
// that favour prev keep it on prev. A record of the build-like load in the lab's smt2 guest
// (Debian 6.12.118) with loads made up to land on each side.
TEST(Replay, RecordedLoadsDecideWakeAffineWeight) {
  const std::string line =
      "source=bpf pid=611 waker_cpu=0 prev=1 wake_flags=0x18 waker_flips=9 wakee_flips=9 "
      "last_wakee=1 wakee_last_wakee=1 on_rq=0 on_cpu=0 kthread=0 allowed=0-3 nr_idle_scan=0 "
      "prev_nr_idle_scan=0 recent_used_cpu=0 has_idle_cores=0 prev_has_idle_cores=0 "
      "waker_nr_running=2 waker_delayed=0 prev_nr_running=1 idle= idle_moved=0 cpu=0";
  std::vector<DecisionRecord> d = {parse_decision_fields(line)};
  EXPECT_EQ(replay_decisions(d, smt2(), policy_by_id("mainline")).agreed(), 0);
  // this: (1024 - 512 + 300) * 100 * 1024 < prev: (1500 - 300) * 108 * 1024: affine, the waker's.
  d[0].loads = DecisionRecord::Loads{1024, 1500, 512, 300, 1024, 1024};
  EXPECT_EQ(replay_decisions(d, smt2(), policy_by_id("mainline")).agreed(), 1);
  d[0].loads->prev_cpu = 600;  // prev: 300 * 108 * 1024, below this: prev stays
  const ReplayResult kept = replay_decisions(d, smt2(), policy_by_id("mainline"));
  EXPECT_EQ(kept.agreed(), 0);
  ASSERT_EQ(kept.disagreements.size(), 1u);
  EXPECT_EQ(kept.disagreements[0].model.cpu, 1);
}

// The lab kernels' event carries the same loads since 2026-12-06: after `loads=1` what
// wake_affine_weight() read, after `loads=0` six zeros (read and dropped; a non-zero one is a
// format this reader does not know); lines from before have none of the seven fields.
TEST(DecisionRecords, TheEventsLoadsAreReadOnlyWhereWakeAffineWeightRan) {
  const std::string head =
      "pid=611 waker_cpu=0 prev=1 wake_flags=0x18 waker_flips=9 wakee_flips=9 last_wakee=1 "
      "wakee_last_wakee=1 on_rq=0 on_cpu=0 kthread=0 in_task=1 allowed=0-3 nr_idle_scan=0 "
      "prev_nr_idle_scan=0 recent_used_cpu=0 has_idle_cores=0 prev_has_idle_cores=0 "
      "waker_nr_running=2 waker_delayed=0 prev_nr_running=1 ";
  const std::string tail =
      " idle= wake_wide=0 want_affine=1 affine=WA_WEIGHT affine_cpu=0 rule=sis_target_fallback "
      "cpu=0";
  const auto loads = [&](const std::string& flag, const std::string& values) {
    return parse_decision_fields(head + flag + " " + values + tail).loads;
  };
  const std::string zeros =
      "waker_cpu_load=0 prev_cpu_load=0 waker_h_load=0 wakee_h_load=0 waker_capacity=0 "
      "prev_capacity=0";
  const std::string read =
      "waker_cpu_load=1024 prev_cpu_load=1500 waker_h_load=512 wakee_h_load=300 "
      "waker_capacity=1024 prev_capacity=1024";
  EXPECT_EQ(loads("loads=1", read), (DecisionRecord::Loads{1024, 1500, 512, 300, 1024, 1024}));
  EXPECT_EQ(loads("loads=0", zeros), std::nullopt);
  EXPECT_EQ(parse_decision_fields(head.substr(0, head.size() - 1) + tail).loads, std::nullopt);
  EXPECT_THROW(loads("loads=0", read), std::invalid_argument);
  EXPECT_THROW(loads("loads=1", zeros), std::invalid_argument);  // a capacity of 0
  // The model then weighs them as it does a BPF record's: the waker's CPU.
  std::vector<DecisionRecord> d = {parse_decision_fields(head + "loads=1 " + read + tail)};
  EXPECT_EQ(replay_decisions(d, smt2(), policy_by_id("mainline")).agreed(), 1);
  d[0].loads.reset();
  EXPECT_EQ(replay_decisions(d, smt2(), policy_by_id("mainline")).agreed(), 0);
}

// A task woken in its own context (sched_waking run by its wakee: try_to_wake_up()'s
// p == current, e.g. a duty-cycle background's timer firing before it slept) places nothing and
// has no record: it is counted apart, not as a wakeup without a record. The same line run by
// another task is a wakeup.
TEST(DecisionRecords, SelfWakesAreCountedApartFromTheWakeups) {
  const std::string self =
      "wakebench-351 [002] d.h.. 16.243114: sched_waking: comm=wakebench pid=351 prio=120 "
      "target_cpu=002\n";
  const std::string other =
      "<idle>-0 [002] d.h.. 16.243114: sched_waking: comm=wakebench pid=351 prio=120 "
      "target_cpu=002\n";
  const DecisionTrace t = parse_decision_trace(self + other);
  EXPECT_EQ(t.wakings, 1);
  EXPECT_EQ(t.self_wakes, 1);
  EXPECT_EQ(parse_decision_trace(other + other).self_wakes, 0);
  const CaseReplays r =
      replay_cases({{"c", self + other}}, smt2(), policy_by_id("mainline"), ModelFeatures{});
  EXPECT_EQ(r.total.unrecorded(), 1);
  EXPECT_NE(render_replay_text(r.total, 1)
                .find("\n  1 self-wakes left out (a task woken in its "
                      "own context: nothing placed)\n"),
            std::string::npos)
      << render_replay_text(r.total, 1);
}

// `run` replays each repetition's records as it ends: a case's blocks add up to its records
// replayed at once (each task's first rule, its last CPU and the records' positions carry on).
TEST(Replay, ACasesBlocksAddUpToItsRecordsAtOnce) {
  std::string text = test::read_fixture(test::fixture_path(kSample));
  std::size_t at = 0;  // the sixth record's CPU, altered (2 <-> 3)
  for (int k = 0; k < 6; ++k) at = text.find(" rule=", at + 1);
  at = text.find(" cpu=", at) + 5;
  text[at] = text[at] == '2' ? '3' : '2';
  std::size_t cut = 0;  // the blocks: three records, then four
  for (int k = 0; k < 4; ++k) cut = text.find(" pipe-", cut + 1);
  const std::string a = text.substr(0, cut), b = text.substr(cut);
  const CaseReplays whole = replay_cases({{"c", text}}, smt2(), policy_by_id("mainline"));
  RunReplayer blocks(smt2(), policy_by_id("mainline"));
  blocks.add("c", a);
  blocks.add("c", b);
  const auto first_rules = [](const ReplayResult& r) {
    int64_t n = 0;
    for (const auto& [rule, k] : r.first_rules) n += k;
    return n;
  };
  for (const CaseReplays& r : {whole, blocks.replays()}) {
    ASSERT_EQ(r.cases.size(), 1u);
    EXPECT_EQ(r.total.total(), 7);
    EXPECT_EQ(r.total.agreed(), 6);
    ASSERT_EQ(r.total.disagreements.size(), 1u);
    EXPECT_EQ(r.total.disagreements[0].index, 5u);
    EXPECT_EQ(r.total.disagreements[0].case_name, "c");
    EXPECT_EQ(first_rules(r.total), first_rules(whole.total));
    EXPECT_EQ(r.total.baseline_last, whole.total.baseline_last);
  }
  // The second block replayed apart, as a fresh case: its record and task count from the start.
  const CaseReplays apart = replay_cases({{"c", b}}, smt2(), policy_by_id("mainline"));
  ASSERT_EQ(apart.total.disagreements.size(), 1u);
  EXPECT_EQ(apart.total.disagreements[0].index, 2u);
  EXPECT_GT(first_rules(replay_cases({{"c", a}}, smt2(), policy_by_id("mainline")).total) +
                first_rules(apart.total),
            first_rules(whole.total));
  // A block the model refuses names its case; a later block of the same case is not needed.
  RunReplayer refused(smt2(), policy_by_id("mainline"));
  std::string outside = a;
  outside.replace(outside.find("waker_cpu=0"), 11, "waker_cpu=9");
  try {
    refused.add("pipe/threads/kernel", outside);
    ADD_FAILURE() << "a waker CPU outside the topology was replayed";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("case pipe/threads/kernel: decision 1 (pid 812): ", 0),
              0u)
        << e.what();
  }
}

// Mainline's decisions replayed as another policy: its hooks decide the sync wakes otherwise.
TEST(Replay, AnotherPolicysModelDisagreesWithMainlinesDecisions) {
  const ReplayResult r = replay_decisions(sample(), smt2(), policy_by_id("sync-2017"));
  EXPECT_LT(r.agreed(), r.total());
  ASSERT_FALSE(r.disagreements.empty());
  EXPECT_EQ(decision_rule_id(r.disagreements[0].model.rule), "hook_before_domain_walk");
}

// A rule the model does not know is refused as its line is read, before replay sees a record.
TEST(DecisionRecords, AnUnknownRuleIsRefusedWhereItsLineIsRead) {
  std::string text = test::read_fixture(test::fixture_path(kSample));
  text.replace(text.find("rule=sis_prev"), 13, "rule=sis_somewhere");
  try {
    parse_decisions(text);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("line 5: field \"rule\" is \"sis_somewhere\", not a rule "
                                          "of docs/policy-model.md#rules, or none: \"pipe-812",
                                          0),
              0u)
        << e.what();
  }
}

// A patch's own return prints rule=none: read as unlabelled, never agreeing with a model (whose
// rule is always one of the list), counted apart; mark=1 (a lab mutation's marker) is read, older
// lines lack it, and any other value is refused.
TEST(DecisionRecords, AnUnlabelledReturnNeverAgreesAndAMarkIsRead) {
  const std::string text = test::read_fixture(test::fixture_path(kSample));
  std::string none = text;
  none.replace(none.find("rule=sis_prev"), 13, "rule=none");
  const std::vector<DecisionRecord> d = parse_decisions(none);
  EXPECT_TRUE(d[0].unlabelled);
  EXPECT_FALSE(d[0].rule.has_value());
  const ReplayResult r = replay_decisions(d, smt2(), policy_by_id("mainline"));
  EXPECT_EQ(r.unlabelled, 1);
  EXPECT_EQ(r.inferred, 0);
  EXPECT_EQ(r.agreed(),
            replay_decisions(parse_decisions(text), smt2(), policy_by_id("mainline")).agreed() - 1);
  EXPECT_NE(render_replay_text(r, 0).find("1 records returned from a return the event does not"),
            std::string::npos);
  std::string marked = text;
  marked.insert(marked.find(" cpu=2\n") + 6, " mark=1");
  EXPECT_TRUE(parse_decisions(marked)[0].mark);
  EXPECT_FALSE(parse_decisions(text)[0].mark);
  std::string bad = text;
  bad.insert(bad.find(" cpu=2\n") + 6, " mark=2");
  EXPECT_THROW(parse_decisions(bad), std::invalid_argument);
}

// A task name is any bytes, and a trace's lines reach the terminal (in errors; a side file's case
// names in replay's output): an escape sequence, a C1 control or a carriage return in any line is
// refused, the line escaped in the one-line error.
TEST(DecisionRecords, AControlCharacterInALineIsRefusedEscaped) {
  const std::string good = test::read_fixture(test::fixture_path(kSample));
  for (const std::string bad : {"pipe\x1b[2J-812",
                                "pipe\xc2\x9b"
                                "31m-812",
                                "pi\rpe-812"}) {
    std::string text = good;
    text.replace(text.find("pipe-812"), 8, bad);
    try {
      parse_decisions(text);
      ADD_FAILURE() << "no error: " << json_text(bad);
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("line 5: has a control character: \"pi", 0), 0u) << json_text(what);
      const std::string escaped = json_text(bad);  // quoted
      EXPECT_NE(what.find(escaped.substr(1, escaped.size() - 2)), std::string::npos) << escaped;
      EXPECT_EQ(what.find_first_of("\x1b\r"), std::string::npos) << json_text(what);
      EXPECT_EQ(what.find("\xc2\x9b"), std::string::npos) << json_text(what);
    }
  }
  EXPECT_THROW(parse_decisions("# \x1b]0;owned\x07\n" + good), std::invalid_argument);
}

// A side file's cases are named as a result set's are; its lines are numbered in the file.
TEST(DecisionRecords, ASideFilesCaseNamesAndLinesAreChecked) {
  EXPECT_EQ(decision_cases("# head\n# case a/b\nx\n# case c\ny\n# case a/b\nz\n"),
            (std::vector<std::pair<std::string, std::string>>{{"a/b", "x\nz\n"}, {"c", "y\n"}}));
  const auto error_of = [](const std::string& text) {
    try {
      decision_cases(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of("# head\n# case pipe\x1b[2J\nx\n"),
            "line 2: has a control character: \"# case pipe\\u001b[2J\"");
  EXPECT_EQ(error_of("# head\n# case a\nx\x1b[2J\n"),
            "line 3: has a control character: \"x\\u001b[2J\"");
  EXPECT_EQ(error_of("# head\n# case a b\n"),
            "line 2: case \"a b\" has a character outside [A-Za-z0-9._:,=/+-]");
}

}  // namespace
}  // namespace wb
