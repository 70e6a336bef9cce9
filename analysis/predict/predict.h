// The policy predictor: one wakeup scenario (docs/policy-model.md#scenario) and the ping-pong
// steady state with its alternatives (docs/policy-model.md#steady-state). Predictions for a result
// set are in analysis/predict/predict_results.h.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/model/policy_model.h"
#include "common/schema/placement.h"

namespace wb {

// ---- one wakeup ------------------------------------------------------------------------------

struct Scenario {
  WakeInput wake;
  std::optional<LlcSource> llc_level;  // the scenario's own `llc_level`
  nlohmann::json given;                // the object as read (echoed in the answer)
};

// Parses a scenario object (policy-model.md#scenario fields, types and defaults). `where` names the
// source in errors. Throws std::invalid_argument with one line naming `where` and the field, e.g.
// "scenario s.json: unknown field \"foo\"", "scenario s.json: missing required field \"waker\"".
Scenario parse_scenario(const nlohmann::json& j, const std::string& where);
// Reads and parses a scenario file (errors name the file).
Scenario load_scenario(const std::string& path);
// Checks the scenario's CPUs against the topology (waker, prev, recent_used_cpu, nr_running and
// delayed keys, allowed). Throws std::invalid_argument naming `where` and the field.
void validate_scenario(const Scenario& s, const SchedTopology& sched, const std::string& where);

// {"scenario": <given>, "policies": {id: {"cpu", "class", "path"}}} (policy-model.md#scenario). The
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
  // Both tasks SCHED_IDLE: a waker's CPU that runs nothing else is sched_idle_cpu(), idle to
  // select_idle_sibling() (WakeInput::sched_idle). A pair of mixed policies is not modelled.
  bool sched_idle = false;
  std::vector<int> allowed;  // both tasks' cpuset; empty = every CPU
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
  bool slow_switch_out = false;  // see slow_switch_out_applies()
  // The has_idle_cores hint of every wake (default: exact); see try_disturbances.
  std::optional<bool> has_idle_cores;
  // The sched features of every wake; without TTWU_QUEUE no wake is queued on a CPU still
  // switching out, so slow_switch_out adds nothing.
  ModelFeatures features;
};

// A case's work before each answer after which every wake reaches a wakee that switched out long
// ago, even under TCG: there the wakes that found the wakee still switching out came 11-42 us
// after its switch-out (5th-95th percentile), those that moved it 89 us or more
// (docs/policy-model.md#switching-out).
inline constexpr long long kSwitchOutWorkNs = 200'000;
// Whether a case gets the slow switch-out alternatives: an emulated set, and each side's work_ns
// shorter than kSwitchOutWorkNs (a wake comes at least the partner's work after the wakee blocked).
bool slow_switch_out_applies(bool emulated, long long work_ns);

// Why the pair can settle in another steady state instead (docs/policy-model.md#steady-state):
// data, worded only by cause_text(). Whether and when it happens in a run is timing the model
// cannot know (docs/policy-model.md#simplifications item 1).
struct AltCause {
  enum class Kind {
    kBusyPrev,        // a wake from `waker` finds `busy` (the wakee's previous CPU) busy
    kBusyPrevStays,   // the same, and it stacks the pair on `to`, where the pair stays
    kStaleIdleCores,  // the LLC's has_idle_cores hint is stale (false)
    kHeldAtStart,     // slow switch-out: every wake is queued on the partner's CPU (`from`, `to`)
    kBalancerPull,    // slow switch-out: the balancer pulls one task stacked on `from` to `to`
    kReversedStart,   // the first wake goes from `from` to `to`
  };
  Kind kind = Kind::kBusyPrev;
  int waker = -1, busy = -1, from = -1, to = -1;
  // Set when the cause follows the reversed start (its first wake, from -> to).
  std::optional<std::pair<int, int>> after_reversed;
  bool operator==(const AltCause&) const = default;
};
// "a wake from CPU 0 finds CPU 1 busy", "the first wake goes from CPU 2 to CPU 0, then ...".
std::string cause_text(const AltCause& c);
// A stable id of the kind, for JSON: "busy-prev", "busy-prev-stays", "stale-idle-cores",
// "held-at-start", "balancer-pull", "reversed-start".
std::string_view cause_kind_id(AltCause::Kind k);

struct SteadyAlternative {
  AltCause cause;
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
// Each of `policies` (mainline among them or not) as simulate_steady_state() gives it, but with no
// first_paths (`search` reads none: building them was a tenth of its time), from one walk where
// the policies decide alike: a policy whose hooks act at no wake of mainline's walks
// (decides_as()) walks them as mainline did, run for run, and takes mainline's result under its
// own id.
std::vector<SteadyResult> simulate_steady_states(const SchedTopology& sched,
                                                 const SteadyOptions& opt,
                                                 const std::vector<const WakeupPolicy*>& policies);

// Policies with the same steady state and the same alternatives (as class distributions, in any
// order; shares compared to 1e-9) form one group, named by its members joined with "/": they cost
// the same and an observation is as far from each, whichever CPUs they use.
struct PolicyGroup {
  std::string name;
  std::vector<size_t> members;  // indexes into the results, in their order
};
std::vector<PolicyGroup> group_policies(const std::vector<SteadyResult>& results);
// Per class, the lowest and highest share among the steady state and its alternatives: a box
// around the range, not the range (their convex hull, analysis/stats/mix.h); no verdict reads it.
std::map<std::string, std::pair<double, double>> share_bounds(const SteadyResult& r);
nlohmann::json classes_json(const std::map<PlacementClass, double>& classes);
// {"kind": cause_kind_id, "text": cause_text, "waker"?, "busy"?, "from"?, "to"?,
//  "after_reversed"?: [from, to]}
nlohmann::json cause_json(const AltCause& c);

// {"topology", "sync", "current_cpu", "start": [a, b], "busy", "allowed",
//  "policies": {id: {"settled", "transient_wakes", "cycle_wakes", "classes": {class: fraction},
//  "cpus": [...], "uncertain"?: {"alternatives": [{"cause": cause_json, "classes", "cpus"}],
//  "bounds": {class: [lo, hi]}}}}, "groups": [{"name", "policies", "classes"}]}.
nlohmann::json steady_to_json(const SchedTopology& sched, const SteadyOptions& opt,
                              const std::vector<SteadyResult>& results);
// The text of `predict --steady`: the scenario in one line, then per result (in its order) the
// CPUs and class shares it settles on and each alternative with its cause, then the groups.
std::string render_steady_text(const SchedTopology& sched, const SteadyOptions& opt,
                               const std::vector<SteadyResult>& results);

}  // namespace wb
