// The BPF decision recorder of `run --trace-decisions` on a stock kernel (a kernel without the lab
// kernels' sched_wake_decision event): common/system/wake_decision.bpf.c, fentry and fexit of
// select_task_rq_fair(), for the wakeups of this process's own tasks (named like it, and it or a
// descendant). Its records come out as trace lines in the tracefs "mono" clock, `source=bpf`
// first (common/schema/wake_decision.h), so they merge into a WakeupTraceSession's text and replay
// reads them like the event's.
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

// A record as it came from the kernel, and the line it becomes: "COMM-PID [CPU] ..... S.US:
// sched_wake_decision: source=bpf ..." (the waker's comm, pid and CPU; the entry's time). Pure.
DecisionRecord decision_of(const wb_decision_record& r, int mask_words);
std::string decision_line(const wb_decision_record& r, int mask_words);

class DecisionRecorder {
 public:
  // Loads and attaches for tasks named `comm` that are this process or its descendants. Throws
  // std::runtime_error with one line saying why it cannot: "the BPF recorder was built without
  // bpftool", "... needs root", "BPF fentry on select_task_rq_fair refused (EPERM)" (lockdown, or a
  // vendor kernel that forbids function tracing), more CPUs than a record holds.
  explicit DecisionRecorder(const std::string& comm);
  ~DecisionRecorder();
  DecisionRecorder(const DecisionRecorder&) = delete;
  DecisionRecorder& operator=(const DecisionRecorder&) = delete;

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
