// Result sets (docs/result-set.md): Google Benchmark's {context, benchmarks} plus wakebench's
// schema, environment, topology, config, cases[] and predictions. This file builds one case's
// JSON from its raw samples and writes files atomically.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/schema/case.h"
#include "common/schema/outcome.h"
#include "common/system/settings.h"
#include "common/system/topology.h"

namespace wb {

inline constexpr const char* kResultSchema = "wakebench-results";
// 2: per-repetition values of every RTT and wakeup statistic and both histograms; tps null when no
// span was measured. Readers take 1 too: its sets lack those values, which compare then does not
// test and report does not draw.
// 3: per repetition its blocked waits and preemptions per round trip of each side and whether it
// is marked (docs/result-set.md#blocked), and under kernel placement its round trips by observed
// class
// (#classes); per case "marked_repetitions". Readers take 1 and 2 too: they lack these.
// 4: the predictions' per-case entries under "cases" (they were under "mechanisms", a name that
// held cases); readers of the open predictions block take either (prediction_cases).
inline constexpr int kResultSchemaVersion = 4;
inline constexpr int kOldestResultSchemaVersion = 1;
constexpr bool readable_result_schema(int64_t v) {
  return v >= kOldestResultSchemaVersion && v <= kResultSchemaVersion;
}

// Everything measured for one case, as the run collected it.
struct CaseRecord {
  CaseSpec spec;
  WakeFlags wake_flags = WakeFlags::kNone;
  CaseStatus status = CaseStatus::kOk;
  std::string reason;                                 // for skipped and failed
  std::vector<std::vector<PairSamples>> repetitions;  // [repetition][pair]
  std::vector<int> background_cpus;  // where the driver ran the busy tasks (RunOutcome)
  // The counting pass (`wakebench run` counts in a repetition of its own, untimed, since counters
  // slow every context switch): [pair]. Empty: the counters come from `repetitions`.
  std::vector<PairSamples> counted;
  // /proc/schedstat deltas of the case's CPUs over the whole case, or {"unavailable": reason}.
  nlohmann::ordered_json schedstat;
  // --trace-wakeups, kernel placement only: common/schema/wakeup_trace.h's trace_json() over the
  // kept repetitions, or {"unavailable": reason}; null when the case was not traced.
  nlohmann::ordered_json trace;
  // --ab: per kept repetition, parallel to `repetitions`, its round and what was read back
  // (docs/result-set.md#ab); empty without --ab.
  std::vector<AbRepetition> ab;
};

// The case object of the contract. Statistics are over every raw sample of every repetition and
// pair; `repetitions` holds for each repetition every RTT statistic ("min", "mean", "median",
// "p90", "p99", "p999", "max"), the same of the wakeup ("wakeup-median", ...), "tps", and the
// log-linear histograms of its round trips and wakeups ("rtt_hist", "wakeup_hist":
// common/schema/histogram.h), which is what compare tests on and report draws; `tps` is round
// trips (binder-like: transactions) per second over all concurrent pairs (clients), first start to
// last end of each repetition, null when no repetition has a span; `counters` is {"waker": {event:
// value}, "wakee": {...}, "unavailable": {event: reason}} per round trip and per side (for K pairs
// the per-pair average, for binder-like per transaction with every client on the waker side and
// every service on the wakee side); `background` (null for none) holds the knob and the CPUs its
// busy tasks ran on (rec.background_cpus, as the driver recorded them); `observed` (kernel
// placement only) holds the class histogram of the wakee relative to the waker, the CPUs each side
// ran on and each side's migrations; `trace` is rec.trace (null when not traced). Each repetition
// also holds "blocked" and "preempted" ({"waker", "wakee"}: waits that blocked and preemptions per
// round trip, null for a mechanism that does not block) and "marked" (common/schema/blocked.h),
// and under kernel placement "classes" (its round trips by observed class); the case holds
// "marked_repetitions". Case-level statistics stay over every repetition, marked or not.
nlohmann::ordered_json case_json(const CaseRecord& rec, const Topology& topo);

}  // namespace wb
