// A case: one mechanism, in one mode, at one placement, with one set of knob values. Cases come
// from a config (common/schema/config.h) and go to the driver (common/measure/driver.h); the result
// set records them (common/schema/result_set.h). Data flows one way: config -> cases -> results.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/schema/placement.h"

namespace wb {

enum class Mode { kThreads, kProcesses };
std::string_view mode_id(Mode m);  // "threads" | "processes"
std::optional<Mode> parse_mode(std::string_view id);

// The wake flags of a mechanism's wakeups in select_task_rq_fair (docs/policy-model.md#wake-flags);
// each mechanism's are in registry/registry.json (common/schema/registry.h).
enum class WakeFlags { kSync, kNone, kCurrentCpu };
std::string_view wake_flags_id(WakeFlags f);  // "sync" | "none" | "current-cpu"
std::optional<WakeFlags> parse_wake_flags(std::string_view id);

// What became of a case (docs/result-set.md#statuses); a result set spells it status_id().
enum class CaseStatus { kOk, kSkipped, kFailed };
std::string_view status_id(CaseStatus s);  // "ok" | "skipped" | "failed"
std::optional<CaseStatus> parse_status(std::string_view id);

// One side's scheduling class (the `sched` knob): wakeup preemption and placement differ by class
// (SCHED_BATCH and SCHED_IDLE tasks never preempt on wakeup, check_preempt_wakeup_fair; RT tasks
// are placed by select_task_rq_rt, not select_task_rq_fair).
struct SchedPolicy {
  enum Kind { kOther, kBatch, kIdle, kFifo };
  Kind kind = kOther;
  int priority = 0;  // kFifo: 1..99
  bool operator==(const SchedPolicy&) const = default;
};
// "other" | "batch" | "idle" | "fifo:<1..99>"; throws std::invalid_argument naming the value.
SchedPolicy parse_sched_policy(std::string_view text);
std::string sched_policy_id(const SchedPolicy& p);

// Knob values of one case (docs/configs.md#mechanisms, "Knobs"). Defaults are the values a config
// may omit; a knob at its default is left out of the case's name. Per-side knobs are indexed by
// Role (0 waker, 1 wakee).
struct Params {
  int payload = 1;      // bytes the waker writes and the wakee reads each round trip
  int64_t work_ns = 0;  // calibrated busy loop each side runs before it answers
  int work_lines = 0;   // cache lines of the pair's shared buffer each side writes before it
                        // answers (its cache footprint)
  // Busy tasks relative to the measured pair: "none", "waker-sibling", "llc-others",
  // "all-others", "prev-cpu", or an explicit CPU list ("2,5-7"). See knobs.h.
  std::string background = "none";
  // The background tasks' duty cycle: busy `duty` percent of each `period_ms` (1..99, 1..1000),
  // idle the rest, so the CPUs they load are busy part of the time; nullopt: busy throughout
  // (duty) and 10 ms (period). Only with a background.
  std::optional<int> duty, period_ms;
  // nullopt: inherited from wakebench (nothing is changed).
  std::array<std::optional<SchedPolicy>, 2> sched;
  std::array<std::optional<int>, 2> nice;  // -20..19
  int pairs = 1;                           // K independent pairs at once (hackbench-style groups)
  // binder-like's W client workers and S service threads, fanout's N senders and M receivers;
  // nullopt: not set by the config (1).
  std::optional<int> w, s;
  // Kernel placement only: the first waker's CPU and the CPU the wakee starts on, both in the
  // cpuset (default: the cpuset's two lowest CPUs). A setup of the placement, not of the workload:
  // same_workload() leaves it out.
  std::optional<std::pair<int, int>> start;
  bool operator==(const Params&) const = default;
};

// Applies one config key with a JSON value; throws std::invalid_argument naming the key for an
// unknown key or a bad value. Keys and values:
//   payload: 1..1048576          work_ns: 0..100000000        work_lines: 0..65536
//   background: see Params       pairs: 1..256                w, s: 1..64
//   duty: 1..99 (percent)        period_ms: 1..1000 (both need a background; check_duty)
//   start: "a,b" (two CPU ids; checked against the cpuset by expand_cases)
//   sched: "fifo:10" (both sides) or {"waker": "fifo:10", "wakee": "other"}
//   nice: -5 (both sides) or {"waker": -5, "wakee": 0}
void set_param(Params& p, const std::string& key, const nlohmann::json& value);
// Every knob, defaults included: {"payload", "work_ns", "work_lines", "background", "pairs",
// "sched": {"waker", "wakee"} ("inherit" when unset), "nice": {"waker", "wakee"} (null when
// unset)}, plus "w" and "s" when set, "duty" and "period_ms" when set, and "start": [a, b] when
// set.
nlohmann::json to_json(const Params& p);
// Throws std::invalid_argument when duty or period_ms is set without a background.
void check_duty(const Params& p);
// The background's period in ns and the busy part of it (duty 100: the whole period).
int64_t duty_period_ns(const Params& p);
int64_t duty_busy_ns(const Params& p);
// "/w2s4/payload=64/work=2000ns" style suffix of the knobs that differ from their defaults ("" when
// none). w and s come first and together whenever either is set, as in
// "binder-like/processes/llc/w2s4".
std::string name_suffix(const Params& p);
// `a` and `b` without their placement setup (`start`): the same work, wherever it starts.
bool same_workload(Params a, Params b);

// What a case runs when its config does not say (RunDefaults, common/schema/config.h, starts
// from the same).
inline constexpr int64_t kDefaultRoundTrips = 20000, kDefaultWarmup = 1000;
inline constexpr int kDefaultRepetitions = 5;
inline constexpr double kDefaultTimeoutS = 60;

struct CaseSpec {
  std::string name;       // Google Benchmark name, no CPU ids: "pipe/processes/llc"
  std::string mechanism;  // "pipe", ...
  Mode mode = Mode::kThreads;
  std::string placement;  // as in the config: class id, "kernel", "kernel:<...>", "cpu:<a>,<b>"
  PlacementKind kind = PlacementKind::kPinned;
  std::vector<CpuPair> cpu_pairs;  // pinned: [waker, wakee] per concurrent pair; kernel: start CPUs
  std::vector<int> cpuset;         // kernel placement: the CPUs both tasks may run on
  Params params;
  int64_t round_trips = kDefaultRoundTrips;
  int64_t warmup = kDefaultWarmup;
  int repetitions = kDefaultRepetitions;
  double timeout_s = kDefaultTimeoutS;  // per repetition, setup included (the watchdog)
  std::string skip_reason;  // non-empty: the case is reported `skipped` with this reason
  // Kernel placement: the tasks are not pinned individually, only to `cpuset`.
  bool by_kernel() const { return kind == PlacementKind::kKernel; }
};

// The CPU pairs a case runs at once: max(params.pairs, cpu_pairs.size()) of them, cycling through
// `cpu_pairs` (expand_cases already spreads K pairs over CPU-disjoint pairs of the class, and
// doubles them up, swapped, on a machine with fewer). Empty if `cpu_pairs` is.
std::vector<CpuPair> concurrent_pairs(const CaseSpec& spec);

}  // namespace wb
