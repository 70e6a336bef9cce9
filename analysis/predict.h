// The policy predictor: one wakeup scenario (docs/policy-model.md section 12), the ping-pong steady
// state (section 10), and predictions for a result set (predicted vs measured placement and RTT,
// which policy group the running kernel matches, each patch's premise on the measured machine).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/policy_model.h"
#include "common/placement.h"

namespace wb {

// ---- one wakeup ------------------------------------------------------------------------------

struct Scenario {
  WakeInput wake;
  std::optional<LlcSource> llc_level;  // the scenario's own `llc_level`
  nlohmann::json given;                // the object as read (echoed in the answer)
};

// Parses a scenario object (section 12 fields, types and defaults). `where` names the source in
// errors. Throws std::invalid_argument with one line naming `where` and the field, e.g.
// "scenario s.json: unknown field \"foo\"", "scenario s.json: missing required field \"waker\"".
Scenario parse_scenario(const nlohmann::json& j, const std::string& where);
// Reads and parses a scenario file (errors name the file).
Scenario load_scenario(const std::string& path);
// Checks the scenario's CPUs against the topology (waker, prev, recent_used_cpu, nr_running and
// delayed keys, allowed). Throws std::invalid_argument naming `where` and the field.
void validate_scenario(const Scenario& s, const SchedTopology& sched, const std::string& where);

// {"scenario": <given>, "policies": {id: {"cpu", "class", "path"}}} (see section 12). The
// class is relative to the waker CPU. Validates first.
nlohmann::json predict_scenario(const SchedTopology& sched, const Scenario& s,
                                const std::string& where);
// A readable table: policy, CPU, class, path.
std::string render_scenario_text(const SchedTopology& sched, const nlohmann::json& prediction);

// ---- steady state of a ping-pong pair -------------------------------------------------------

struct SteadyOptions {
  bool sync = true;            // WF_SYNC on both wakes (pipe, unix, tcp, binder)
  bool current_cpu = false;    // WF_CURRENT_CPU on both wakes (seccomp/futex-swap handoff)
  std::optional<int> start_a;  // CPU of the first waker; default: default_start_pair()
  std::optional<int> start_b;  // CPU the first wakee last ran on
  std::vector<int> busy;       // CPUs each running one always-runnable hog
  std::vector<int> allowed;    // both tasks' cpuset; empty = every CPU
  int max_wakes = 20000;
  // The wake with this index (0 = the first) finds one more runnable task on the wakee's previous
  // CPU (a kworker, a softirq, another thread of the process); the pair then runs on undisturbed
  // from the state that wake leaves, and only that part counts. -1: no disturbance.
  int disturb_wake = -1;
  // Also try a disturbance at each wake of the settled cycle (SteadyResult::alternatives).
  bool try_disturbances = true;
  // With try_disturbances: also the start the other way round (the other task wakes first) and
  // its alternatives.
  bool try_reverse = true;
  // The wakee's switch-out is long next to the partner's reaction (qemu TCG: 10-40 us of guest
  // time, docs/policy-model.md#switching-out): a wake that finds it still switching out
  // (p->on_cpu) is queued on its CPU with no selection, so the pair can stay where it started,
  // and a stacked pair that the load balancer pulls apart can stay apart (more alternatives).
  bool slow_switch_out = false;
  // The has_idle_cores hint of every wake (default: exact); see try_disturbances.
  std::optional<bool> has_idle_cores;
};

// Where the pair settles instead after one disturbed wake of its cycle (see
// SteadyOptions::disturb_wake), or when the first wake goes the other way (the second start CPU's
// task wakes the first's). Whether and when either happens in a run is timing the model cannot
// know (policy-model.md section 7 item 1): with an alternative, the prediction is uncertain,
// anywhere between the undisturbed steady state and the alternatives.
struct SteadyAlternative {
  int busy_cpu = -1;  // the wakee's prev CPU, busy at the disturbed wake; -1: the reversed start
  int waker_cpu = -1;
  std::string cause;  // "a wake from CPU 0 finds CPU 1 busy", "the first wake goes from 2 to 0"
  std::map<PlacementClass, double> classes;  // where the pair settles after it
  std::vector<int> cpus;
};

struct SteadyResult {
  std::string policy;
  bool settled = false;                         // a repeating cycle was reached
  int transient_wakes = 0;                      // wakes before the cycle
  int cycle_wakes = 0;                          // wakes in one period of the cycle
  std::map<PlacementClass, double> classes;     // fraction of the cycle's wakes per class
  std::vector<int> cpus;                        // the CPUs the pair occupies in the cycle
  std::vector<std::string> first_paths;         // the decision path of the first wakes (debugging)
  std::vector<SteadyAlternative> alternatives;  // distinct steady states after one disturbed wake
  // With disturb_wake: the CPU the disturbed wake stacked the pair on (the wakee put on the
  // waker's CPU), if it did.
  std::optional<int> disturbed_stacked_on;
};

// Where the pair starts when no --start is given: the lowest allowed CPU, and the lowest allowed
// CPU on another core of its LLC (else any other allowed CPU; a 1-CPU cpuset stacks them).
std::pair<int, int> default_start_pair(const SchedTopology& sched, const std::vector<int>& allowed);

// Alternates A -> B, B -> A wakes (A first; each task blocked when woken, recent_used_cpu,
// last_wakee and wakee_flips tracked, no delayed-dequeue races) until the state repeats.
SteadyResult simulate_steady_state(const SchedTopology& sched, const SteadyOptions& opt,
                                   const WakeupPolicy& policy);
std::vector<SteadyResult> simulate_steady_state(const SchedTopology& sched,
                                                const SteadyOptions& opt);

// {"topology", "sync", "current_cpu", "start": [a, b], "busy", "allowed",
//  "policies": {id: {"settled", "transient_wakes", "cycle_wakes", "classes": {class: fraction},
//  "cpus": [...], "uncertain"?: {"reason", "alternatives": [{"cause", "busy_cpu", "waker_cpu",
//  "classes", "cpus"}], "range": {class: [lo, hi]}}}}, "groups": [{"name", "policies", "classes",
//  "alternatives"?: [{class: fraction}]}]}: a group is the policies with the same classes and the
//  same alternatives' classes (in order), named by its members joined with "/".
nlohmann::json steady_to_json(const SchedTopology& sched, const SteadyOptions& opt,
                              const std::vector<SteadyResult>& results);
std::string render_steady_text(const nlohmann::json& steady);

// ---- a result set ---------------------------------------------------------------------------

// Predictions for a wakebench result set (schema "wakebench-results", schema_version 1, topology
// XML embedded at ["topology"]["xml"]), one entry per kernel-placed case (`case`: its full name,
// params suffix included; a params point without a kernel case gets one entry named
// "<mechanism>/<mode><suffix>"): each policy's steady-state class distribution and predicted RTT
// (distribution x the median RTT of the pinned case of each class with the same mechanism, mode
// and params; where that point has no such pinned case, predicted_rtt_ns is null and `unpriced`
// says "n/a: no pinned llc case with work=10000ns"), the measured kernel RTT and observed
// histogram with each policy's distance to it (`distance`: to the steady state alone and to the
// closest mix with one of its uncertain alternatives, analysis/mix.h), the policy groups (policies
// predicting the same distribution and alternatives) and the one the kernel is consistent with
// (smallest best distance), and each patch's premise with the measured numbers, one check per
// params point. A kernel case's `cpuset` is the CPU set the policies may choose from (`allowed`);
// each policy carries its `first_paths` (the rules that decided its first wakes), and a case traced
// with --trace-wakeups puts its path counts under measured.trace. Throws std::invalid_argument with
// one line for another schema/version, a bad case (analysis/case_view.h), a result set without an
// embedded topology, or a kernel case whose cpuset holds CPUs the topology lacks.
nlohmann::json predict_for_results(const nlohmann::json& result_set);
// The same for a result-set file, read by load_result_set (analysis/resultset_io.h): errors are
// one line naming the file, std::runtime_error from the loader, std::invalid_argument from here.
nlohmann::json predict_for_results_file(const std::string& path);
// The case a predictions entry or premise check is for: its `case`, else (sets written before
// predictions were per case) "<mechanism>/<mode>/<placement>".
std::string entry_label(const nlohmann::json& entry);
// A class distribution ({"llc": 0.7, "same-cpu": 0.3}) as "llc 70% same-cpu 30%".
std::string classes_text(const nlohmann::json& classes);
// The short text form `wakebench run` prints after its summary table.
std::string render_results_text(const nlohmann::json& predictions);

}  // namespace wb
