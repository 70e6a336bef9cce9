// A typed view of a result set's cases (docs/cli.md#result-sets): each case object, as
// common/schema/result_set.cpp's case_json writes it, parsed once into the facts the analysis reads
// (summary, compare, report, predict). Nothing downstream re-derives a case's placement kind,
// class, cpuset, params or statistics from strings; they ask the view.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/results/trace_view.h"
#include "common/schema/case.h"
#include "common/schema/histogram.h"
#include "common/schema/placement.h"
#include "common/system/topology.h"
#include "common/util/input.h"  // check_name, check_text

namespace wb {

// Statistics by the name the result set records them under ("median", "p99", "tps", ...); an
// entry that is missing or not a number is absent.
struct Stats {
  std::map<std::string, double> values;
  std::optional<double> get(const std::string& name) const;
};

// Perf counters per round trip and per side (the case's `counters`).
struct CounterView {
  bool recorded = false;  // the case has a `counters` object
  // [waker, wakee]: event -> value; nullopt for a count that was never scheduled (null).
  std::map<std::string, std::optional<double>> side[2];
  std::map<std::string, std::string> unavailable;  // event -> why it could not be counted
  std::map<std::string, std::string> notes;  // event -> what its value is when not the event's
};

// Where a kernel-placed case's wakee ran (the case's `observed`).
struct ObservedView {
  bool recorded = false;
  std::vector<std::pair<std::string, double>> histogram;  // class -> round trips, as recorded
  std::optional<double> migrations[2];                    // [waker, wakee]
  nlohmann::json migrations_json;                         // as recorded (null when absent)
};

// One observed class of a kernel-placed repetition (docs/result-set.md#classes).
struct ClassSample {
  std::string cls;  // a placement class id, or "unknown" (a CPU outside the topology)
  double round_trips = 0;
  double mean_ns = 0, median_ns = 0;
  Histogram hist;  // its round trips' times; hist.count() == round_trips
};

// What one repetition says of its wakeups (schema 3, docs/result-set.md#blocked).
struct RepetitionView {
  // [waker, wakee]: waits that blocked, and preemptions, per round trip; nullopt where the set has
  // null (a mechanism whose waits do not sleep).
  std::optional<double> blocked[2], preempted[2];
  // As recorded: a side blocked or was preempted in under kMinBlockedShare of its round trips.
  bool marked = false;
  // Kernel placement: its round trips by observed class, in kAllClasses order, "unknown" last.
  std::vector<ClassSample> classes;
};

// A case's `schedstat` window (docs/result-set.md#schedstat) as compare reads it: the
// try_to_wake_up() counters of each sched domain summed over the case's CPUs, or why it has none.
struct SchedstatView {
  std::string off;  // why there are no counters ("no schedstat recorded", ...); "" when there are
  // (domain label "domain0 (MC)", counter "ttwu_wake_remote") -> total over the case's CPUs
  std::map<std::pair<std::string, std::string>, double> domain_counts;
};

struct CaseView {
  std::size_t index = 0;  // position in cases[]
  std::string name, mechanism;
  Mode mode = Mode::kThreads;
  std::string placement;  // as recorded: "llc", "kernel", "kernel:llc", "kernel:0,8", "cpu:3,7"
  PlacementKind kind = PlacementKind::kPinned;
  // kPinned: its class; kKernel: the class of "kernel:<class>"; otherwise nullopt.
  std::optional<PlacementClass> cls;
  // kKernel: the CPUs both tasks were allowed: the recorded `cpuset`, else `cpus.allowed` (older
  // sets), else the list of "kernel:<cpu list>"; empty when not recorded ("kernel" is every CPU,
  // "kernel:<class>" that class's first pair: see kernel_cpuset()).
  std::vector<int> cpuset;
  // The first pair's CPUs (`cpus.waker`, `cpus.wakee`): pinned and matrix cases, and the start CPUs
  // of a kernel case when recorded.
  std::optional<CpuPair> cpus;
  Params params;               // typed; keys the Params do not know are ignored here
  nlohmann::json params_json;  // as recorded ({} when absent): case identity across sets
  std::string suffix;          // name_suffix(params): "/w2s4/work=2000ns", "" at the defaults
  std::string pair;            // "/pair1" for --pairs-per-class > 1, else ""
  CaseStatus status = CaseStatus::kOk;
  std::string reason;  // "" when null
  std::optional<WakeFlags> wake_flags;
  Stats rtt, wakeup;               // `rtt_ns`, `wakeup_ns`
  std::vector<Stats> repetitions;  // per repetition: "median", "p99", "mean", "tps", ...
  // Per repetition, the histogram of its round trips (schema 2); empty when the set keeps none.
  std::vector<Histogram> rtt_hist;
  // Per repetition, parallel to `repetitions` (schema 3); empty for sets of schema 1 and 2.
  std::vector<RepetitionView> rep_info;
  std::optional<double> tps;
  CounterView counters;
  ObservedView observed;
  std::optional<TraceView> trace;       // `trace`; nullopt when the case was not traced
  SchedstatView schedstat;              // `schedstat`, as compare reads it
  int64_t round_trips = 0, warmup = 0;  // per repetition (0 when not recorded)
  std::vector<int> background;  // the CPUs busy tasks ran on (`background.cpus`); empty: none
  // --ab sets: each repetition's round (`repetitions[i].ab.round`), parallel to `repetitions`;
  // empty when the set is no A/B set (docs/result-set.md#ab).
  std::vector<int> ab_round;

  bool ok() const { return status == CaseStatus::kOk; }
  std::string mech_mode() const;  // "pipe/threads"
  // The name after "<mechanism>/<mode>/": placement, knob and pair suffixes ("llc/work=500ns").
  std::string row() const;
  // The case's identity across runs and machines (mechanism, mode, placement, pair, params as
  // recorded): "pipe/processes/llc {\"payload\":1,...}".
  std::string key() const;
  // Same mechanism, mode and knob values (the params point a prediction is costed at).
  bool same_point(const CaseView& o) const;
  // Its marked repetitions (rep_info), 0 for a set of schema 1 or 2.
  std::size_t marked() const;
};

// Parses every case of `cases` (a result set's `cases` array). Throws std::invalid_argument with
// one line naming the case: "cases[3]: missing \"mode\"", "cases[2] (pipe/threads/llc): status
// ok but no numeric rtt_ns.median", "cases[4] (pipe/threads/kernel-2cpus): cpuset is not a
// non-empty list of CPU ids", "cases[1] (...): params.payload: expected an integer ...".
std::vector<CaseView> parse_cases(const nlohmann::json& cases);

// A kernel case's cpuset and start CPUs on `topo`: the recorded ones; "kernel:<class>" without a
// recorded cpuset is the class's first pair (as `wakebench run` resolves it); plain "kernel" is
// every CPU (empty: let the caller's default stand).
struct KernelSetup {
  std::vector<int> allowed;  // sorted, unique; empty = every CPU
  std::optional<CpuPair> start;
};
KernelSetup kernel_setup(const CaseView& c, const Topology& topo);

// Row order of placements: the classes nearest first (kAllClasses), then kernel placements, then
// matrix cells.
int placement_rank(const CaseView& c);
// The rank of a class id in kAllClasses ("same-cpu" 0, ...); anything else ("unknown") after them.
int class_rank(std::string_view cls);

// The keys whose values differ between these params objects (`params_json` of several cases), or
// that some lack, in key order: what labels the rows of a sweep apart.
std::vector<std::string> varying_params(const std::vector<const nlohmann::json*>& params);

// Marked repetitions in words (docs/result-set.md#blocked), for the run's summary and the report:
// the heading, and per case "futex/processes/llc: 1 of 15 repetitions did not sleep (blocked 0.02
// waker, 0.01 wakee)" with the marked ones' blocked waits per round trip (low-high when they
// differ; their preemptions too when some were preempted); "" for a case with none marked.
std::string marked_heading();
std::string marked_text(const CaseView& c);

// A params point in words, for messages: "work=10000ns", "w2s4 payload=64", "the default knobs".
std::string params_text(const Params& p);

}  // namespace wb
