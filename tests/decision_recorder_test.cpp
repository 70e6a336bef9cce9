// The BPF decision recorder (common/system/decision_recorder.h): its records as trace lines that
// the decision parser reads back, merged into a trace by time, and on the live kernel where it
// attaches (skipped with the reason where it cannot: this VM's kernel refuses fentry programs).
#include "common/system/decision_recorder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "common/schema/wakeup_trace.h"
#include "common/system/wake_decision_record.h"
#include "tests/support.h"

namespace wb {
namespace {

// A record as the BPF program sends it: 4 CPUs (one mask word), pid 812 woken by 811 on CPU 1.
wb_decision_record sample_record() {
  wb_decision_record r{};
  r.ts_ns = 12'345'678'901'234;
  r.pid = 812;
  r.waker_pid = 811;
  r.waker_cpu = 1;
  r.prev = 0;
  r.cpu = 2;
  r.wake_flags = 0x18;
  r.flags = WB_DR_LAST_WAKEE | WB_DR_HAS_IDLE_CORES | WB_DR_DELAYED_KNOWN;
  r.waker_flips = 3;
  r.wakee_flips = 1;
  r.recent_used_cpu = 0;
  r.nr_idle_scan = 4;
  r.prev_nr_idle_scan = -1;
  r.waker_nr_running = 1;
  r.prev_nr_running = 0;
  std::strcpy(r.waker_comm, "wb_tests");
  r.masks[0] = 0xf;  // allowed 0-3
  r.masks[1] = 0xd;  // idle 0,2-3
  return r;
}

TEST(DecisionRecorder, ARecordIsATraceLineTheParserReadsBack) {
  const std::string line = decision_line(sample_record(), 1);
  EXPECT_EQ(line.substr(0, line.find(": sched_wake_decision: ")),
            "wb_tests-811 [001] ..... 12345.678901");
  const std::vector<DecisionRecord> back = parse_decisions(line + "\n");
  ASSERT_EQ(back.size(), 1u);
  const DecisionRecord& d = back[0];
  EXPECT_EQ(d.source, DecisionSource::kBpf);
  EXPECT_EQ(d.pid, 812);
  EXPECT_EQ(d.wake_flags, 0x18u);
  EXPECT_TRUE(d.last_wakee);
  EXPECT_EQ(d.wakee_last_wakee, false);
  EXPECT_TRUE(d.has_idle_cores);
  EXPECT_FALSE(d.prev_has_idle_cores);
  EXPECT_EQ(d.prev_nr_idle_scan, -1);
  EXPECT_EQ(d.allowed, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(d.idle, (std::vector<int>{0, 2, 3}));
  EXPECT_FALSE(d.rule);  // not observable: replay takes the model's
  EXPECT_FALSE(d.affine);
  EXPECT_EQ(d.cpu, 2);
  EXPECT_FALSE(d.idle_moved);
}

// wake_affine_weight()'s loads come with the record where the recorder read them, and are left
// out where it could not (a task outside the root task group).
TEST(DecisionRecorder, TheLoadsComeBackWhereTheyWereRead) {
  wb_decision_record r = sample_record();
  EXPECT_FALSE(parse_decisions(decision_line(r, 1) + "\n").at(0).loads);
  r.flags |= WB_DR_LOADS_KNOWN;
  r.waker_cpu_load = 1024;
  r.prev_cpu_load = 1500;
  r.waker_h_load = 512;
  r.wakee_h_load = 300;
  r.waker_capacity = 1024;
  r.prev_capacity = 980;
  const std::string line = decision_line(r, 1);
  EXPECT_NE(line.find(" prev_nr_running=0 waker_cpu_load=1024 prev_cpu_load=1500 waker_h_load=512 "
                      "wakee_h_load=300 waker_capacity=1024 prev_capacity=980 idle="),
            std::string::npos)
      << line;
  EXPECT_EQ(parse_decisions(line + "\n").at(0).loads,
            (DecisionRecord::Loads{1024, 1500, 512, 300, 1024, 980}));
}

TEST(DecisionRecorder, WhatItCannotReadIsLeftOutNotInvented) {
  wb_decision_record r = sample_record();
  r.flags &= ~WB_DR_DELAYED_KNOWN;
  r.flags |= WB_DR_IDLE_MOVED;
  const std::string line = decision_line(r, 1);
  EXPECT_EQ(line.find("waker_delayed="), std::string::npos) << line;
  EXPECT_EQ(line.find("rule="), std::string::npos) << line;
  EXPECT_NE(line.find(" idle_moved=1 "), std::string::npos) << line;
  EXPECT_TRUE(parse_decisions(line + "\n").at(0).idle_moved);
  // A kernel reason in a bpf record is a format this reader does not know.
  EXPECT_THROW(parse_decisions(line + " rule=sis_prev\n"), std::invalid_argument);
  // And the lab event's line without its reasons is refused, as before.
  std::string event = line;
  event.erase(event.find("source=bpf "), 11);
  EXPECT_THROW(parse_decisions(event + "\n"), std::invalid_argument);
}

// A tp_btf record (read at sched_waking: WF_TTWU alone) takes the wake flags of its case's
// mechanism's documented wake when a case task woke, none otherwise, and its line says which.
TEST(DecisionRecorder, ATpBtfRecordSaysWhereItsWakeFlagsCameFrom) {
  wb_decision_record r = sample_record();
  r.wake_flags = 0x8;
  r.flags |= WB_DR_AT_WAKING | WB_DR_WAKER_OURS;
  const std::string line = decision_line(r, 1, case_wake("pipe"));
  EXPECT_NE(line.find("sched_wake_decision: source=tp_btf pid=812 waker_cpu=1 prev=0 "
                      "wake_flags=0x18 wake_flags_from=registry:pipe waker_flips=3 "),
            std::string::npos)
      << line;
  const DecisionRecord d = parse_decisions(line + "\n").at(0);
  EXPECT_EQ(d.source, DecisionSource::kTpBtf);
  EXPECT_EQ(d.wake_flags, 0x18u);
  EXPECT_EQ(decision_of(r, 1, case_wake("futex-swap")).wake_flags, 0x48u);  // WF_CURRENT_CPU
  EXPECT_EQ(decision_of(r, 1, case_wake("eventfd")).wake_flags_from, "registry:eventfd");
  EXPECT_EQ(decision_of(r, 1, case_wake("eventfd")).wake_flags, 0x8u);
  EXPECT_EQ(decision_of(r, 1).wake_flags_from, "unknown");
  r.flags &= ~WB_DR_WAKER_OURS;  // woken by a task outside the case: no flag assumed
  EXPECT_EQ(decision_of(r, 1, case_wake("pipe")).wake_flags, 0x8u);
  EXPECT_EQ(decision_of(r, 1, case_wake("pipe")).wake_flags_from, "outside");
  EXPECT_EQ(decision_of(sample_record(), 1, case_wake("pipe")).wake_flags, 0x18u);  // fentry's
}

TEST(DecisionRecorder, ItsLinesMergeIntoTheTraceByTime) {
  const std::string text =
      "# tracer: nop\n"
      "wb_tests-811 [001] d..2. 12345.678900: sched_waking: comm=wb_tests pid=812 prio=120 "
      "target_cpu=000\n"
      "wb_tests-811 [001] d..2. 12345.678950: sched_wakeup: comm=wb_tests pid=812 prio=120 "
      "target_cpu=002\n";
  const std::string merged = merge_trace_lines(text, {decision_line(sample_record(), 1)});
  const auto at = [&](const char* what) { return merged.find(what); };
  EXPECT_LT(at("sched_waking"), at("sched_wake_decision"));
  EXPECT_LT(at("sched_wake_decision"), at("sched_wakeup"));
  EXPECT_EQ(merged.rfind("# tracer: nop\n", 0), 0u);
  EXPECT_EQ(merge_trace_lines(text, {}), text);
}

// This process's comm, as the recorder filters on it.
std::string own_comm() {
  char comm[17] = {};
  std::FILE* f = std::fopen("/proc/self/comm", "r");
  if (f && std::fgets(comm, sizeof comm, f)) comm[std::strcspn(comm, "\n")] = 0;
  if (f) std::fclose(f);
  return comm;
}

// Two threads of this process ping-pong 200 times through a pipe: 400 wakeups, each a
// try_to_wake_up() of one of them. The recorder's lines since `rec` was cleared.
std::vector<std::string> ping_pong(DecisionRecorder& rec) {
  rec.clear();
  int a[2], b[2];
  if (pipe(a) != 0 || pipe(b) != 0) return {};
  std::thread partner([&] {
    char c;
    for (int i = 0; i < 200; ++i)
      if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1) break;
  });
  char c = 0;
  for (int i = 0; i < 200; ++i)
    if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1) break;
  partner.join();
  for (int fd : {a[0], a[1], b[0], b[1]}) close(fd);
  int64_t lost = 0;
  std::vector<std::string> lines = rec.drain(&lost);
  EXPECT_EQ(lost, 0);
  return lines;
}

// A recorder on the live kernel for this process's tasks, or null with `why` it cannot be.
std::unique_ptr<DecisionRecorder> live_recorder(RecorderChoice choice, std::string& why) {
  try {
    return std::make_unique<DecisionRecorder>(own_comm(), choice);
  } catch (const std::runtime_error& e) {
    why = e.what();
    return nullptr;
  }
}

// On the live kernel: every wakeup of one of the two threads is a select_task_rq_fair() call the
// fentry recorder sees (skipped with the reason where the kernel refuses it, as this VM's does).
TEST(DecisionRecorderLive, RecordsThisProcessesWakeups) {
  std::string why;
  const std::unique_ptr<DecisionRecorder> rec = live_recorder(RecorderChoice::kFentry, why);
  if (!rec) GTEST_SKIP() << why;
  const std::vector<std::string> lines = ping_pong(*rec);
  EXPECT_GT(lines.size(), 100u);  // most of 400 wakeups (a wakee still running needs no select)
  EXPECT_EQ(parse_decisions(wb::test::lines_text(lines)).size(), lines.size());
}

// The tp_btf recorder on the live kernel (skipped with the reason where it cannot load: not
// root, no BTF, built without BPF): a record per wakeup (each sched_waking), in time order, each
// with the CPU the wake set; the threads are no case tasks of a run, so no wake flag is added and
// the records say so.
TEST(DecisionRecorderLive, TpBtfRecordsEveryWakeupWithItsCpu) {
  std::string why;
  const std::unique_ptr<DecisionRecorder> rec = live_recorder(RecorderChoice::kTpBtf, why);
  if (!rec) GTEST_SKIP() << why;
  EXPECT_EQ(rec->source(), DecisionSource::kTpBtf);
  rec->set_case_wake(case_wake("pipe"));
  const std::vector<std::string> lines = ping_pong(*rec);
  EXPECT_GT(lines.size(), 100u);  // a reader that finds its byte waiting is not woken
  EXPECT_LE(lines.size(), 410u);
  const std::string text = wb::test::lines_text(lines);
  const std::vector<DecisionRecord> d = parse_decisions(text);
  ASSERT_EQ(d.size(), lines.size());
  const int cpus = static_cast<int>(std::thread::hardware_concurrency());
  for (const DecisionRecord& r : d) {
    EXPECT_EQ(r.source, DecisionSource::kTpBtf);
    EXPECT_EQ(r.wake_flags_from, "outside");  // this process is the run itself here
    EXPECT_GE(r.cpu, 0);
    EXPECT_LT(r.cpu, std::max(cpus, 1024));
  }
  EXPECT_EQ(merge_trace_lines("", lines), text);  // in time order
}

// auto: fentry where it attaches, else tp_btf with the reason fentry could not.
TEST(DecisionRecorderLive, AutoFallsBackToTpBtfSayingWhy) {
  std::string why;
  const std::unique_ptr<DecisionRecorder> rec = live_recorder(RecorderChoice::kAuto, why);
  if (!rec) GTEST_SKIP() << why;
  if (rec->source() == DecisionSource::kBpf) {
    EXPECT_EQ(rec->fallback_reason(), "");
  } else {
    EXPECT_NE(rec->fallback_reason().find("BPF fentry on select_task_rq_fair"), std::string::npos)
        << rec->fallback_reason();
  }
}

}  // namespace
}  // namespace wb
