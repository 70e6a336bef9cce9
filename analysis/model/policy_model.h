// The shared model of the kernel's fair-class wakeup CPU selection (select_task_rq_fair,
// wake_affine, select_idle_sibling; docs/policy-model.md sections 1-3, 7 and 12) and the interface
// through which each wakeup policy (mainline and the five proposed deltas of
// policy-model.md#policies) plugs into it. Deterministic: one wakeup snapshot in, {cpu, path} out.
// CPU ids are OS indexes throughout, because the idle scans walk CPU ids in increasing order from
// target+1 (policy-model.md#inputs).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/model/sched_topology.h"
#include "common/schema/wake_decision.h"

namespace wb {

// ---- one wakeup -----------------------------------------------------------------------------

// The sched features that act where the model decides (select_task_rq_fair() and
// try_to_wake_up()'s wakelist queueing), each switched off as the kernel does it
// (docs/policy-model.md#sched-features); true = on, every one's default. The others:
// analysis/model/model_features.h.
struct ModelFeatures {
  bool wa_idle = true;     // WA_IDLE: wake_affine() asks wake_affine_idle() first
  bool wa_weight = true;   // WA_WEIGHT: then wake_affine_weight(), when WA_IDLE had no answer
  bool wa_bias = true;     // WA_BIAS: wake_affine_weight() biases prev by half the imbalance_pct
  bool sis_util = true;    // SIS_UTIL: select_idle_cpu() spends the LLC's nr_idle_scan budget
  bool ttwu_queue = true;  // TTWU_QUEUE: a wakee still switching out may be queued on its CPU
  bool operator==(const ModelFeatures&) const = default;
};

// A cpuset as the model reads it: by CPU id, and how many of the topology's CPUs it holds. The
// steady state builds it once for all its wakes (WakeInput::allowed_cpus).
struct AllowedCpus {
  AllowedCpus(const SchedTopology& sched, const std::vector<int>& allowed);  // empty: every CPU
  std::vector<char> by_cpu;  // empty when every CPU is allowed
  int count = 0;
};

// One wakeup snapshot (docs/policy-model.md#snapshot; its scenario fields: #scenario).
struct WakeInput {
  int waker = -1;                 // waker CPU
  int prev = -1;                  // wakee's previous CPU (p->wake_cpu)
  bool sync = false;              // WF_SYNC
  bool current_cpu = false;       // WF_CURRENT_CPU
  bool reciprocal = true;         // p->last_wakee == current
  std::map<int, int> nr_running;  // runnable per CPU incl. the waker; absent = 0 (idle)
  std::map<int, int> delayed;     // sched_delayed tasks per CPU (subset of nr_running)
  // `nr_running` by CPU id, built by the caller (then unread): the steady state's walks refill one
  // for each wake.
  const std::vector<int>* nr_running_by_cpu = nullptr;
  // CPUs whose runqueue holds only SCHED_IDLE tasks (sched_idle_cpu()): select_idle_sibling()'s
  // tests and scans take them as idle (available_idle_cpu() || sched_idle_cpu()), wake_affine()
  // and the idle-core test do not; nr_running still counts their tasks.
  std::vector<int> sched_idle;
  int recent_used_cpu = -1;                   // -1 = none
  std::vector<int> allowed;                   // wakee's cpus_ptr; empty = every CPU
  const AllowedCpus* allowed_cpus = nullptr;  // `allowed` built by the caller (then unread)
  int waker_flips = 0;                        // current->wakee_flips (decayed, before record_wakee)
  int wakee_flips = 0;                        // p->wakee_flips
  // current->last_wakee == p before this wake. A strict ping-pong pair wakes only each other, so
  // the scenario form ties it to `reciprocal` (policy-model.md#simplifications item 5 applies the
  // record_wakee increment).
  bool waker_last_wakee_is_wakee = true;
  std::optional<bool> has_idle_cores;  // override of the hint of target's LLC (default: exact)
  std::optional<int> nr_idle_scan;     // override of the SIS_UTIL budget of target's LLC
  bool waker_kthread = false;          // per-CPU kthread waker (SIS rule 3)
  bool in_task = true;                 // task context (false: softirq / irq)
  bool wakee_queued = false;  // p->on_rq: ttwu_runnable(), no selection (policy-model.md#bypasses)
  // p->on_cpu: still switching out; ttwu_queue_cond() may queue it on prev by IPI. prev's
  // nr_running as that test reads it (the wakee already dequeued); default nr_running(prev).
  bool wakee_on_cpu = false;
  std::optional<int> prev_nr_running;
  // Recorded hints (decision records): the has_idle_cores and nr_idle_scan of the LLC of `cpu`,
  // used for a target in that LLC before the overrides above.
  struct LlcHint {
    int cpu = -1;
    bool has_idle_cores = false;
    std::optional<int> nr_idle_scan;  // nullopt: the LLC has no shared state
  };
  std::vector<LlcHint> llc_hints;
  // Recorded loads (BPF decision records): cpu_load() per CPU, task_h_load() of the waker and the
  // wakee, capacity_of() per CPU; what is absent takes section 7 item 4's defaults (capacity 1024).
  std::map<int, long long> load, capacity;
  std::optional<long long> waker_load, wakee_load;
  ModelFeatures features;  // the sched features the kernel ran with
  bool explain = true;     // fill WakeDecision::path (the steady state's walks need it rarely)
};

// What the model derives from a WakeInput before any policy runs; the hooks read it.
class WakeContext {
 public:
  WakeContext(const SchedTopology& sched, const WakeInput& in);
  WakeContext(const WakeContext&) = delete;
  WakeContext& operator=(const WakeContext&) = delete;

  const SchedTopology& sched() const { return sched_; }
  const WakeInput& input() const { return in_; }
  int cpu() const { return in_.waker; }
  int prev() const { return in_.prev; }
  bool sync() const { return in_.sync; }
  bool reciprocal() const { return in_.reciprocal; }
  int nr_running(int cpu) const;
  int nr_delayed(int cpu) const;
  // available_idle_cpu(): nothing runnable (policy-model.md#simplifications item 7).
  bool idle(int cpu) const { return nr_running(cpu) == 0; }
  bool sched_idle(int cpu) const;
  // available_idle_cpu() || sched_idle_cpu(): what select_idle_sibling() takes as idle.
  bool idle_or_sched_idle(int cpu) const { return idle(cpu) || sched_idle(cpu); }
  // nr_running - cfs_h_nr_delayed == 1: only the waker is runnable there
  // (policy-model.md#policies).
  bool alone(int cpu) const { return nr_running(cpu) - nr_delayed(cpu) == 1; }
  bool allowed(int cpu) const;
  int nr_allowed() const;
  int first_allowed() const;
  // The recorded loads, else section 7 item 4's defaults: waker 512, other runnable tasks 1024
  // each, the wakee's blocked 512 on prev; capacities 1024.
  long long load(int cpu) const;
  long long waker_load() const { return in_.waker_load.value_or(512); }
  long long wakee_load() const { return in_.wakee_load.value_or(512); }
  long long capacity(int cpu) const;

 private:
  const SchedTopology& sched_;
  const WakeInput& in_;
  std::optional<AllowedCpus> own_;  // built here when the input brings none
  const AllowedCpus* allowed_;
};

// Where the patches hook into the selection (sections 6.2, 6.3): both compute the same gate in
// select_task_rq_fair (want_affine && sync && new_cpu == cpu && alone(cpu)).
enum class SyncCoreHook {
  kNone,
  kIdleCoreScan,  // P3: the waker CPU counts as idle inside select_idle_core()
  kSiblingFirst,  // P4: select_idle_sync_core() before select_idle_cpu()
};

// A wakeup policy = mainline plus the deltas of one patch, expressed as hooks at the points the
// patch touches. The shared model (predict_wakeup) calls them; the defaults are mainline.
class WakeupPolicy {
 public:
  virtual ~WakeupPolicy() = default;
  virtual std::string_view id() const = 0;      // "mainline", "sync-pair", ...
  virtual std::string_view origin() const = 0;  // the patch it models
  // P6: the handoff wake itself carries WF_CURRENT_CPU, whatever the scenario says.
  virtual bool wake_carries_current_cpu() const { return false; }
  // After record_wakee, before wake_wide and the domain walk (P5). A value returns that CPU.
  virtual std::optional<int> before_domain_walk(const WakeContext&) const { return std::nullopt; }
  // Inside the SD_WAKE_AFFINE branch, after wake_affine() chose new_cpu (P2).
  virtual std::optional<int> after_wake_affine(const WakeContext&, int /*new_cpu*/) const {
    return std::nullopt;
  }
  virtual SyncCoreHook sync_core_hook() const { return SyncCoreHook::kNone; }
  // Whether the hooks can change a decision on `sched`; where they cannot, the policy decides as
  // mainline at every wake (the search takes mainline's steady state for them unwalked).
  virtual bool acts_on(const SchedTopology&) const { return true; }
};

// Every policy's model, in registry/registry.json's order (docs/result-set.md#policies).
const std::vector<const WakeupPolicy*>& all_policies();
// Throws std::invalid_argument("unknown policy \"x\"") for an unknown id.
const WakeupPolicy& policy_by_id(std::string_view id);

// Where the selection asked, or would ask, a policy's hooks on the path it took: up to the first
// hook that returns a CPU, every policy's path is mainline's. Recorded under any policy;
// decides_as() reads it.
struct HookSites {
  bool current_cpu = false;  // the WF_CURRENT_CPU test, reached without the flag, waker allowed
  bool before_walk = false;  // before_domain_walk()
  int after_affine = -1;     // after_wake_affine() with this new_cpu; -1: not asked
  bool sync_core_sibling = false;  // select_idle_sync_core() asked, and it finds a sibling
  bool sync_core_scan = false;     // select_idle_core() met the sync waker's core
};

// The result of one wakeup under one policy, plus the side effects the steady-state simulation
// carries to the next wakeup.
struct WakeDecision {
  int cpu = -1;
  DecisionRule rule = DecisionRule::kSisTargetFallback;  // the branch that returned `cpu`
  std::string path;                // the rules that decided, e.g. "wake_affine(MC) -> 2; ..."
  int wakee_recent_used_cpu = -1;  // p->recent_used_cpu afterwards (SIS rule 4 updates it)
  int waker_flips = 0;             // current->wakee_flips after record_wakee
  // select_idle_cpu() scanned for an idle core and found none: it cleared the has_idle_cores hint
  // of the LLC of this CPU (the target); -1 when no scan cleared it.
  int idle_cores_cleared = -1;
  // select_task_rq_fair()'s wake_wide() and want_affine (false where it returned before them),
  // as the decision event records them.
  bool wake_wide = false, want_affine = false;
  HookSites sites;
};

// Section 2 bypasses, then select_task_rq_fair under `policy`, then select_fallback_rq.
// Throws std::invalid_argument when the waker or prev CPU is not in the topology.
WakeDecision predict_wakeup(const SchedTopology& sched, const WakeInput& in,
                            const WakeupPolicy& policy);

// Whether `policy` decides the wake `ctx` as the decision that recorded `sites` did, cpu, rule
// and side effects alike (its path may differ in a note): true when none of its hooks acts at a
// site that path reached.
bool decides_as(const WakeupPolicy& policy, const WakeContext& ctx, const HookSites& sites);

// SIS_UTIL's nr_idle_scan of the LLC of `cpu` from the default utilisation of
// policy-model.md#simplifications item 3 (waker 512, every other runnable task 1024, each CPU
// capped at 1024).
int default_nr_idle_scan(const SchedTopology& sched, const WakeInput& in, int cpu);
// has_idle_cores computed exactly: some core inside the LLC of `cpu` has all its PUs idle.
bool exact_has_idle_cores(const SchedTopology& sched, const WakeInput& in, int cpu);

}  // namespace wb
