// What one repetition of a case measured, as the driver (common/measure/driver.h) hands it over
// and the result set (common/schema/result_set.h) records it: each stream's samples, the counters
// summed over streams, and the outcome. Data only: the timed path that fills it is measure/'s.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wb {

enum class Role { kWaker = 0, kWakee = 1 };
std::string_view role_id(Role r);  // "waker" | "wakee"

// Event name -> why it is unavailable, e.g.
//   "cycles" -> "perf_event_open: ENOENT (no hardware PMU; in a VM?)"
//   "foo"    -> "libpfm4: event not found (see `wakebench events`)"
using UnavailableEvents = std::map<std::string, std::string>;

// Samples of one stream, round trips in order (warm-up excluded).
struct PairSamples {
  std::vector<int64_t> rtt_ns;       // waker: round trip start -> partner's answer back
  std::vector<int64_t> wakeup_ns;    // waker's send -> wakee back from its wait (both clocks)
  std::vector<int32_t> waker_cpu;    // sched_getcpu() of the waker when it sent
  std::vector<int32_t> wakee_cpu;    // sched_getcpu() of the wakee when it woke
  int64_t begin_ns = 0, end_ns = 0;  // start of the first measured round trip, end of the last
  // Counter totals over the measured round trips of the tasks attributed to this stream
  // (TaskSpec::stream), per side (Role index): event -> value, NaN when never scheduled onto a
  // counter. binder-like attributes every service to stream 0, so only sums over a repetition's
  // streams are meaningful; see sum_counters().
  std::array<std::map<std::string, double>, 2> counters;
  UnavailableEvents unavailable;  // events a task of this stream could not count, and why
  // Per side (Role index), from start_counting() to stop_counting() (the measured round trips),
  // summed over the side's tasks attributed to this stream (binder-like: every service on stream
  // 0): the waits that blocked (voluntary context switches) and the times a task was preempted
  // (involuntary ones: on one CPU a wakee that preempts its waker at the hand-off leaves the
  // waker's wait nothing to wait for). nullopt: no task of that side counted here, or the
  // mechanism does not block (Mechanism::blocks()). docs/result-set.md#blocked
  std::array<std::optional<int64_t>, 2> blocked, preempted;
};

// Counters of a case summed over streams (and repetitions): per side totals, the measured round
// trips they cover, and the events some task could not count.
struct CaseCounters {
  std::array<std::map<std::string, double>, 2> totals;  // per side (Role index)
  int64_t round_trips = 0;
  UnavailableEvents unavailable;
};
CaseCounters sum_counters(const std::vector<std::vector<PairSamples>>& repetitions);

struct RunOutcome {
  bool ok = false;
  std::string error;  // when !ok: one line, e.g. "partner exited: killed by signal 9 (SIGKILL)"
  std::vector<PairSamples> pairs;    // one per stream
  CaseCounters counters;             // sum_counters({pairs})
  std::vector<int> background_cpus;  // where busy tasks ran (started before, reaped after)
};

}  // namespace wb
