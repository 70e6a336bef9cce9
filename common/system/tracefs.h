// `wakebench run --trace-wakeups`, the recording: the kernel's sched trace events whose text
// attribute_wakeups (common/schema/wakeup_trace.h) reads.
//
// Recording (WakeupTraceSession): a private tracefs instance, instances/wakebench-<pid>, with
// sched_waking, sched_wakeup, sched_switch, sched_migrate_task and sched_process_fork enabled,
// the "mono" trace clock (one clock for every CPU, so the merged `trace` file is in true order),
// and each event filtered on the comm of the task it is about (event_filters(): the woken or
// migrated task, either side of a switch, the parent or child of a fork), which the case's
// threads and forked processes inherit from the supervisor. The filter is on the event's own
// fields, not on the running task (set_event_pid would be): a migration the load balancer makes
// from another CPU's softirq or stopper thread, or a wakeup from an interrupt, is recorded too.
// The attribution keeps the supervisor's descendants among the tasks of that comm. The ring
// buffer does not overwrite (options/overwrite 0): when it fills, the newest events are dropped
// and counted (per_cpu/cpuN/stats), so the attributed wakeups are a contiguous prefix. The
// instance is removed by the destructor (normal end, failure, or Ctrl-C, since the run unwinds).
// With a run's journal (common/system/journal.h) the instance is journalled before it is made, so
// one left by a wakebench that was SIGKILLed is removed by the next run or `wakebench restore`;
// any other left (a wakebench-<pid> whose process is gone) by the next session.
//
// `run --trace-decisions` also records the lab kernels' decision event (kDecisionEvent,
// runners/lab/KERNELS.md), filtered on the wakee's comm like sched_waking. On a kernel without it
// (a stock kernel) a BPF decision recorder (common/system/decision_recorder.h: fentry, else tp_btf
// where the kernel refuses fentry, or the one `run --decision-recorder` names) records the
// decisions instead, its lines merged into the text by time; where none can attach, the session
// records the wakeups alone and decisions_unavailable() says why in one line.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/system/decision_recorder.h"

namespace wb {

class RunJournal;

// Turns tracing off in the instance folder `dir` and removes it (retried while the kernel answers
// EBUSY). Returns 0 or the errno of the last rmdir (ENOENT: not there).
int remove_trace_instance(const std::string& dir);

// The lab kernels' decision event, below the tracefs root's events/.
inline constexpr const char* kDecisionEvent = "wakebench/sched_wake_decision";

// Per event ("sched/sched_waking", ...), the tracefs filter that keeps the events about tasks
// named `comm` (see Recording above), with the decision event when `decisions`. Throws
// std::runtime_error when `comm` holds a character a filter string cannot.
std::vector<std::pair<std::string, std::string>> event_filters(const std::string& comm,
                                                               bool decisions = false);

// A private tracefs instance for one `wakebench run`. The constructor checks everything the
// recording needs and throws std::runtime_error with one line saying why it cannot (not root,
// tracefs not mountable, an event missing, ...); it mounts tracefs at /sys/kernel/tracing when no
// tracefs is mounted (left mounted).
class WakeupTraceSession {
 public:
  // With `decisions`: kDecisionEvent where the kernel has it, else the BPF recorder `recorder`
  // chooses, else none.
  explicit WakeupTraceSession(RunJournal* journal = nullptr, bool decisions = false,
                              RecorderChoice recorder = RecorderChoice::kAuto);
  ~WakeupTraceSession();
  WakeupTraceSession(const WakeupTraceSession&) = delete;
  WakeupTraceSession& operator=(const WakeupTraceSession&) = delete;

  // Clears the buffer, gives each CPU of `cpus` `buffer_kb` KiB (the others a small buffer) and
  // turns tracing on. The events of every task named like this process are recorded; the
  // attribution picks the case's among them by its supervisor's pid.
  void start(const std::vector<int>& cpus, int64_t buffer_kb);
  // Turns tracing off; returns the trace text and adds the events the buffers dropped or
  // overwrote to *lost.
  std::string stop(int64_t* lost);
  const std::string& instance_dir() const { return dir_; }
  // Why decisions asked for are not recorded ("" when they are, or were not asked for).
  const std::string& decisions_unavailable() const { return decisions_unavailable_; }
  // The BPF recorder's note: which one records, and why not fentry when auto fell back to tp_btf
  // ("" with the lab event, or none).
  std::string recorder_note() const;
  // The wake flags the tp_btf recorder's records of the next repetitions take (their case's).
  void set_case_wake(const CaseWake& wake);

  // KiB per CPU that one run of `round_trips` round trips needs (bounded: see .cpp).
  static int64_t buffer_kb_for(int64_t round_trips, int cpus_traced, bool decisions = false);

 private:
  void write(const std::string& file, const std::string& value) const;
  bool has_event(const std::string& event) const;
  void open_recorder(RecorderChoice choice);
  std::string root_, dir_;
  RunJournal* journal_;
  bool decisions_ = false;  // the decision event is enabled
  std::unique_ptr<DecisionRecorder> recorder_;
  std::string decisions_unavailable_;
  bool on_ = false;
  std::map<int, int64_t> sizes_;  // CPU -> KiB as last set
};

}  // namespace wb
