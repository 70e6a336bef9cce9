// The BPF decision recorders of `run --trace-decisions` on a stock kernel (a kernel without the lab
// kernels' sched_wake_decision event): common/system/wake_decision.bpf.c, for the wakeups of this
// process's own tasks (named like it, and it or a descendant), either fentry and fexit of
// select_task_rq_fair() (`source=bpf`) or, where the kernel refuses fentry, tp_btf on sched_waking,
// sched_migrate_task and sched_wakeup (`source=tp_btf`: no wake flags are seen there, so each
// record takes its case's mechanism's documented ones and says so). Their records come out as
// trace lines in the tracefs "mono" clock (common/schema/wake_decision.h), so they merge into a
// WakeupTraceSession's text and replay reads them like the event's.
// Built where the build found clang, bpftool and libbpf (CMake says which was missing); loads only
// as root, detaches and frees everything in its destructor, and pins nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/schema/wake_decision.h"

struct wb_decision_record;

namespace wb {

// Which program set records (`run --decision-recorder`): fentry on select_task_rq_fair, tp_btf on
// sched_waking, or auto: fentry where the kernel lets it load and attach, else tp_btf.
enum class RecorderChoice { kAuto, kFentry, kTpBtf };
std::string_view recorder_choice_id(RecorderChoice c);  // "auto", "fentry", "tp_btf"
std::optional<RecorderChoice> parse_recorder_choice(std::string_view id);

// What a tp_btf record takes for the wake flags its program cannot see: those of the case's
// mechanism's documented wake (registry/registry.json; WF_SYNC for pipe, ...), for wakes by a case
// task. `mechanism` "": none known (the record says "unknown" and adds none).
struct CaseWake {
  unsigned flags = 0;
  std::string mechanism;
};
// The registered mechanism's documented wake; throws std::logic_error for an unregistered one.
CaseWake case_wake(const std::string& mechanism);

// A record as it came from the kernel, and the line it becomes: "COMM-PID [CPU] ..... S.US:
// sched_wake_decision: source=bpf ..." (the waker's comm, pid and CPU; the time of the entry, or
// of sched_waking). A tp_btf record takes `wake`'s flags (when its waker is a case task). Pure.
DecisionRecord decision_of(const wb_decision_record& r, int mask_words, const CaseWake& wake = {});
std::string decision_line(const wb_decision_record& r, int mask_words, const CaseWake& wake = {});

class DecisionRecorder {
 public:
  // Loads and attaches for tasks named `comm` that are this process or its descendants. Throws
  // std::runtime_error with one line saying why it cannot: "the BPF recorder was built without
  // bpftool", "... needs root", "BPF fentry on select_task_rq_fair refused (EPERM)" (lockdown, or a
  // vendor kernel that forbids function tracing; with kAuto, also why tp_btf could not), more CPUs
  // than a record holds.
  explicit DecisionRecorder(const std::string& comm, RecorderChoice choice = RecorderChoice::kAuto);
  ~DecisionRecorder();
  DecisionRecorder(const DecisionRecorder&) = delete;
  DecisionRecorder& operator=(const DecisionRecorder&) = delete;

  // The recorder attached: kBpf (fentry) or kTpBtf.
  DecisionSource source() const;
  // With kAuto on tp_btf: why fentry could not ("BPF fentry on select_task_rq_fair refused
  // (EPERM)"); "" otherwise.
  const std::string& fallback_reason() const;
  // The wake flags the tp_btf records drained from now on take (the next case's).
  void set_case_wake(const CaseWake& wake);

  // Drops the records so far (those of the previous repetition's end, another case's tasks).
  void clear();
  // The records since clear(), as trace lines in order, with the records lost (the ring full)
  // added to *lost.
  std::vector<std::string> drain(int64_t* lost);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wb
