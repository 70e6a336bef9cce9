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

#include "common/schema/wake_decision.h"
#include "common/system/topology.h"

namespace wb {

// Which hwloc object the scheduler's LLC (the span of sd_llc) is built from.
enum class LlcSource {
  kAuto,     // the PU's L3, else its L2 (docs/policy-model.md#llc)
  kL3,       // --llc-level L3
  kL2,       // --llc-level L2 (the Altra/POWER caveats of policy-model.md#llc)
  kCluster,  // debugfs says the highest SD_SHARE_LLC level is CLS (arm64 without a shared L3)
  kCore,     // debugfs says it is SMT (powerpc: LLC = one core)
};
// "L2" / "L3" / "cluster" (case-insensitive; cluster: the CLS span, as debugfs says of arm64
// without a cache shared above the cluster). Throws std::invalid_argument naming the value
// otherwise.
LlcSource parse_llc_level(std::string_view text);
std::string_view llc_source_name(LlcSource s);

// One (name, flags) pair per sched domain of one CPU, bottom-up, as debugfs prints them
// (/sys/kernel/debug/sched/domains/cpuN/domainM/{name,flags}). Returns the hwloc object the highest
// level carrying SD_SHARE_LLC (SD_SHARE_PKG_RESOURCES before 6.6) corresponds to: SMT -> kCore,
// CLS -> kCluster, MC/CACHE -> kAuto; nullopt when no level shares the LLC or a name is unknown.
std::optional<LlcSource> llc_source_from_domains(
    const std::vector<std::pair<std::string, std::string>>& domains);
// One sched domain level of one CPU after degeneration (kernel/sched/topology.c sd_init,
// sd_degenerate, sd_parent_degenerate, build_sched_domain).
struct SchedDomain {
  std::string name;         // "SMT", "CLS", "MC" (powerpc: "CACHE"), "PKG", "NUMA(21)"
  std::vector<int> span;    // sorted OS indexes
  bool share_llc = false;   // SD_SHARE_LLC
  bool cluster = false;     // SD_CLUSTER
  bool wake_affine = true;  // SD_WAKE_AFFINE (lost by NUMA levels beyond node_reclaim_distance)
  int imbalance_pct = 117;  // 110 at the SMT level
};

// The scheduler's view of a topology: per-CPU domain hierarchy, sd_llc, SMT masks, NUMA reclaim
// distance from the topology's own vendor/architecture info (never the host's).
class SchedTopology {
 public:
  explicit SchedTopology(Topology topo, LlcSource llc = LlcSource::kAuto);

  const Topology& topology() const { return topo_; }
  const std::vector<int>& cpus() const { return cpus_; }
  bool has_cpu(int cpu) const;
  int max_cpu() const { return cpus_.empty() ? -1 : cpus_.back(); }

  const std::vector<SchedDomain>& domains(int cpu) const;
  const std::vector<int>& smt_mask(int cpu) const;  // cpu_smt_mask(): the PU's core
  // sd_llc: the highest domain with SD_SHARE_LLC; nullptr when there is none (llc_size 1).
  const SchedDomain* sd_llc(int cpu) const;
  int llc_size(int cpu) const;
  bool cpus_share_cache(int a, int b) const;      // same sd_llc_id (or a == b)
  bool cpus_share_resources(int a, int b) const;  // same cluster id (= LLC id without clusters)
  // The CLS domain span of `cpu` when one survived degeneration, else empty.
  const std::vector<int>& cluster_span(int cpu) const;

  bool smt_active() const { return smt_active_; }          // some core has >= 2 PUs
  bool cluster_active() const { return cluster_active_; }  // a CLS level survived somewhere
  int node_reclaim_distance() const { return reclaim_distance_; }
  std::string_view reclaim_reason() const { return reclaim_reason_; }
  LlcSource llc_source() const { return llc_; }

 private:
  struct PerCpu {
    std::vector<SchedDomain> domains;
    std::vector<int> smt;
    std::vector<int> cluster;
    int llc_index = -1;    // index into domains of sd_llc, -1 if none
    int llc_id = -1;       // first CPU of sd_llc's span (the CPU itself when none)
    int share_id = -1;     // sd_share_id: first CPU of the cluster span, else llc_id
    bool present = false;  // the id is one of the topology's CPUs
  };
  // sd_llc, the cluster and the sharing ids of `cpu` from its kept levels.
  static PerCpu summarize(int cpu, std::vector<int> smt, std::vector<SchedDomain> domains);
  const PerCpu& at(int cpu) const;

  Topology topo_;
  LlcSource llc_;
  std::vector<int> cpus_;
  std::vector<PerCpu> per_cpu_;  // by CPU id
  bool smt_active_ = false;
  bool cluster_active_ = false;
  int reclaim_distance_ = 30;
  std::string reclaim_reason_;
};

// ---- reading the host (analysis/sched_live.cpp) ---------------------------------------------

// llc_source_from_domains() of the live sched domains of `topo`'s lowest CPU, read by
// common/system/sched_domains.h under `root`; nullopt when unreadable (debugfs not mounted, not
// root) so the caller falls back to the section-12 rules.
std::optional<LlcSource> live_llc_source(const Topology& topo, const std::string& root = "/");

// The topology a command reasons about, with its `--llc-level` text ("" when not given): the hwloc
// XML `xml`, else the live machine, whose LLC the live sched domains name when no level is given.
// Throws std::invalid_argument("<command> --llc-level: ...") for a bad level.
SchedTopology load_sched_topology(const std::string& command, const std::string& xml,
                                  const std::string& llc_level,
                                  std::optional<LlcSource> fallback = std::nullopt);

// ---- one wakeup -----------------------------------------------------------------------------

// The sched features that act where the model decides (select_task_rq_fair() and
// try_to_wake_up()'s wakelist queueing), each switched off as the kernel does it
// (docs/policy-model.md#sched-features); true = on, every one's default. The others:
// analysis/model_features.h.
struct ModelFeatures {
  bool wa_idle = true;     // WA_IDLE: wake_affine() asks wake_affine_idle() first
  bool wa_weight = true;   // WA_WEIGHT: then wake_affine_weight(), when WA_IDLE had no answer
  bool wa_bias = true;     // WA_BIAS: wake_affine_weight() biases prev by half the imbalance_pct
  bool sis_util = true;    // SIS_UTIL: select_idle_cpu() spends the LLC's nr_idle_scan budget
  bool ttwu_queue = true;  // TTWU_QUEUE: a wakee still switching out may be queued on its CPU
  bool operator==(const ModelFeatures&) const = default;
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
  int recent_used_cpu = -1;       // -1 = none
  std::vector<int> allowed;       // wakee's cpus_ptr; empty = every CPU
  int waker_flips = 0;            // current->wakee_flips (decayed, before record_wakee)
  int wakee_flips = 0;            // p->wakee_flips
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
};

// What the model derives from a WakeInput before any policy runs; the hooks read it.
class WakeContext {
 public:
  WakeContext(const SchedTopology& sched, const WakeInput& in);

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
  std::vector<char> allowed_;  // indexed by CPU id
  int nr_allowed_ = 0;
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
  // mainline at every wake (the search simulates mainline once for all such policies).
  virtual bool acts_on(const SchedTopology&) const { return true; }
};

// Every policy's model, in registry/registry.json's order (docs/result-set.md#policies).
const std::vector<const WakeupPolicy*>& all_policies();
// Throws std::invalid_argument("unknown policy \"x\"") for an unknown id.
const WakeupPolicy& policy_by_id(std::string_view id);

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
};

// Section 2 bypasses, then select_task_rq_fair under `policy`, then select_fallback_rq.
// Throws std::invalid_argument when the waker or prev CPU is not in the topology.
WakeDecision predict_wakeup(const SchedTopology& sched, const WakeInput& in,
                            const WakeupPolicy& policy);

// SIS_UTIL's nr_idle_scan of the LLC of `cpu` from the default utilisation of
// policy-model.md#simplifications item 3 (waker 512, every other runnable task 1024, each CPU
// capped at 1024).
int default_nr_idle_scan(const SchedTopology& sched, const WakeInput& in, int cpu);
// has_idle_cores computed exactly: some core inside the LLC of `cpu` has all its PUs idle.
bool exact_has_idle_cores(const SchedTopology& sched, const WakeInput& in, int cpu);

}  // namespace wb
