// `wakebench run --trace-wakeups`: which path of try_to_wake_up placed each wakeup of a kernel-
// placement case (docs/policy-model.md#bypasses), from the kernel's sched trace events as
// WakeupTraceSession (common/system/tracefs.h) records them.
//
// Attribution (attribute_wakeups, pure): every sched_waking of a case task whose waker (the
// running task of that line) is another case task, matched with the wakee's next sched_wakeup.
// Case tasks are the supervisor's descendants (sched_process_fork), the supervisor excluded. For
// each wakeup: waker CPU (the CPU of the sched_waking line), prev CPU (its target_cpu field, which
// is task_cpu(p) before selection), target CPU (sched_wakeup's target_cpu) and path:
//   ttwu_runnable  the wakee was still queued when woken: it had not been switched out since it
//                  last ran, or its last switch-out had state R/R+ (preempted), and no migration
//                  and no blocking switch-out of it came between the waking and the wakeup;
//   queued_remote  not migrated, target == prev, sched_wakeup emitted on a CPU other than the
//                  waker's, and the wakee was still switching out (p->on_cpu) when woken: its
//                  blocking switch-out came after the waking, or at most on_cpu_window_ns before
//                  it (the wakelist IPI, bypass 2 of docs/policy-model.md#bypasses; a selection
//                  that picks an idle prev CPU is delivered the same way, hence the timing
//                  condition);
//   selection      everything else: select_task_rq ran (certain when the wakee migrated).
// Limits of the events: an EEVDF delay-dequeued wakee (switched out with S but still on the
// runqueue) is woken by ttwu_runnable yet counts as `selection` (no event tells it apart); the
// text timestamps have microsecond resolution.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wb {

inline constexpr const char* kPathSelection = "selection";
inline constexpr const char* kPathTtwuRunnable = "ttwu_runnable";
inline constexpr const char* kPathQueuedRemote = "queued_remote";

struct WakeupTraceOptions {
  int supervisor_pid = 0;  // the thread that forks the case (its descendants are the case tasks)
  int64_t on_cpu_window_ns = 5000;  // see queued_remote above
  // Placement class of `target` relative to `waker` ("same-cpu", "llc", ...).
  std::function<std::string(int waker, int target)> class_of;
  // Keep the sched_waking and sched_wake_decision lines of case tasks (as wakees), whoever woke
  // them, in WakeupTraceSummary::decisions (`run --trace-decisions`).
  bool keep_decisions = false;
};

// One wakeup of a case task by another (kept only by tests and for debugging).
struct TracedWakeup {
  int waker_pid = 0, wakee_pid = 0;
  int waker_cpu = -1, prev_cpu = -1, target_cpu = -1, wakeup_cpu = -1;
  std::string path, cls;
};

// A wakeup that moved its wakee (target != prev): the first few of each traced run are kept, so a
// placement the model did not predict shows where it began.
struct TracedMove {
  int64_t run = 0;   // the traced run (repetition) it came in, from 0
  int64_t wake = 0;  // its index among the run's matched wakeups, from 0
  int waker_cpu = -1, prev_cpu = -1, target_cpu = -1;
  std::string path;
  bool operator==(const TracedMove&) const = default;
};
inline constexpr std::size_t kFirstMovesPerRun = 4, kFirstMovesMax = 24;

struct WakeupTraceSummary {
  int64_t wakeups = 0;                   // matched wakeups of a case task by a case task
  std::map<std::string, int64_t> paths;  // path -> count (every path present, 0 included)
  std::map<std::string, std::map<std::string, int64_t>> classes_by_path;  // path -> class -> n
  int64_t moved = 0;                                                      // target != prev
  std::map<std::string, int64_t> moved_by_class;  // class of the target -> wakeups that moved
  // Wakeups of a case task by a task outside the case and its supervisor (a kworker, ksoftirqd,
  // an interrupt on an idle CPU): how many, and how many moved it (target != prev). Their
  // migrations count in migrations_at_wakeup.
  int64_t foreign_wakeups = 0, foreign_moved = 0;
  // For the wakeups by the partner of a wakee that had blocked: the time from its blocking
  // switch-out to the waking, in ns, for those that left it on its CPU and for those that moved
  // it. A wake that comes while the wakee is still switching out (p->on_cpu) is queued on its CPU
  // with no selection (docs/policy-model.md#switching-out): short "kept" times next to long
  // "moved" ones show it.
  std::vector<int64_t> since_switch_out_kept, since_switch_out_moved;
  // Wakeups by the partner onto the waker's own CPU, and how many of them the waker answered by
  // switching out still runnable (preempted by its wakee) rather than by blocking: a stacked pair
  // whose waker never blocks needs no wake back and stays stacked
  // (docs/policy-model.md#steady-state).
  int64_t stacked_wakes = 0, stacked_waker_preempted = 0;
  int64_t remote_delivery = 0;       // sched_wakeup emitted on a CPU other than the waker's
  int64_t migrations_at_wakeup = 0;  // sched_migrate_task of a case task inside a wakeup
  int64_t migrations_other = 0;      // the others (load balancing, affinity changes)
  int64_t unmatched = 0;    // a case-by-case sched_waking without its sched_wakeup, or the reverse
  int64_t lost = 0;         // events the kernel reports lost ("[LOST N EVENTS]", dropped, overrun)
  int64_t events = 0;       // event lines read
  int64_t traced_runs = 0;  // run_case calls traced (repetitions, estimate calls included)
  std::vector<TracedWakeup> list;  // filled only when asked (keep_list)
  // With keep_decisions: this trace's raw lines (a control character in a task name as '?'), in
  // trace order, which `run` writes to the side file after each repetition
  // (docs/policy-model.md#decision-records); add() does not keep them.
  std::string decisions;
  // The first kFirstMovesPerRun moves of each run, runs in order, at most kFirstMovesMax.
  std::vector<TracedMove> first_moves;

  // Sums counts (list and decisions not merged); o's first moves follow, renumbered after this
  // one's runs.
  void add(const WakeupTraceSummary& o);
};

// Parses the text of a tracefs `trace` file (the kernel's default output format) and attributes
// every case-task wakeup. Lines starting with '#', "CPU:N [LOST M EVENTS]" and events other than
// the five the recording enables are accepted; a line it cannot read throws std::invalid_argument
// "trace line N: <why>".
WakeupTraceSummary attribute_wakeups(std::string_view trace_text, const WakeupTraceOptions& opt,
                                     bool keep_list = false);

// A sched_waking line whose running task is its wakee: try_to_wake_up()'s `p == current` (a task
// woken in its own context, e.g. by a timer that fired before it slept), which places nothing.
bool is_self_waking(std::string_view line);

// `text` (a tracefs `trace` file) with `lines` (event lines of the same format and clock, in
// their own order: the BPF decision recorder's) merged in by timestamp; on equal times the text's
// line first. Lines without a timestamp (comments, lost-event notes) keep their place in the text.
std::string merge_trace_lines(std::string_view text, const std::vector<std::string>& lines);

// {"wakeups", "paths": {path: n}, "classes_by_path": {path: {class: n}}, "moved",
//  "moved_by_class": {class: n}, "foreign": {"wakeups", "moved"},
//  "since_switch_out_us": {"kept"|"moved": {"n", "p5", "p50", "p95"}},
//  "stacked": {"wakes", "waker_preempted"}, "remote_delivery",
//  "migrations": {"at_wakeup", "other"}, "unmatched", "dropped", "events", "runs",
//  "first_moves": [{"run", "wake", "waker_cpu", "from", "to", "path"}]}. `classes`
//  orders every class map (the placement classes in their order).
nlohmann::ordered_json trace_json(const WakeupTraceSummary& s,
                                  const std::vector<std::string>& classes);

}  // namespace wb
