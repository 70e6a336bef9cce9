// One wakeup as a lab kernel records it (docs/policy-model.md#decision-records): the inputs the
// placement read and the rule and CPU it returned, one trace line each (the event of
// runners/lab/trace/wb_decision_trace.h):
//   <task>-<pid> [<cpu>] <flags> <sec>.<usec>: sched_wake_decision: pid=812 waker_cpu=1 prev=0
//   wake_flags=0x18 waker_flips=0 wakee_flips=1 last_wakee=1 wakee_last_wakee=1 on_rq=0 on_cpu=0
//   kthread=0 in_task=1 allowed=0-3 nr_idle_scan=4 prev_nr_idle_scan=4 recent_used_cpu=0
//   has_idle_cores=1 prev_has_idle_cores=1 waker_nr_running=1 waker_delayed=0
//   prev_nr_running=0 loads=0 waker_cpu_load=0 prev_cpu_load=0 waker_h_load=0 wakee_h_load=0
//   waker_capacity=0 prev_capacity=0 idle=0,2-3 wake_wide=0 want_affine=1 affine=WA_IDLE
//   affine_cpu=0 rule=sis_prev cpu=0 mark=0
// (one line; wrapped here). `loads=1`: wake_affine_weight() ran, and the six fields after it are
// what it read (0 for what it returned before reading; lines before 2026-12-06 lack all seven).
// `idle` lists the online CPUs idle as the decision read them, `allowed` the wakee's cpus_ptr; the
// hints are those of the waker's LLC and (prev_) of prev's; `wake_wide`, `want_affine`, `affine`
// (none, WA_IDLE, WA_WEIGHT) and `affine_cpu` (wake_affine()'s result, -1 when not called) are what
// the kernel computed, kept for reading a disagreement: replay gives the model the inputs only. The
// BPF recorder of a stock kernel (common/system/decision_recorder.h) writes the same line with
// `source=bpf` first: the inputs it can read and the CPU, without what only the kernel's own code
// knows (in_task, wake_wide, want_affine, affine, affine_cpu, rule), with `waker_delayed` only
// where the kernel has the field, and `idle_moved=1` when the idle CPUs read again at the
// selection's exit were not those of its entry. The recorder of kernels that refuse fentry writes
// `source=tp_btf`: the inputs read at sched_waking, the CPU where the wake set it, `idle_moved=1`
// when the idle CPUs read again there (but the waker's) were not those of sched_waking, and,
// after `wake_flags` (WF_TTWU and what it adds), `wake_flags_from`: `registry:<mechanism>` (the
// mechanism's documented wake, registry/registry.json), `outside` (a waker outside the case: none
// added) or `unknown` (no mechanism given: none added). Pure: parsing and formatting, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wb {

// include/linux/sched.h's wake flags (6.12) that the selection reads.
inline constexpr unsigned kWfSync = 0x10, kWfCurrentCpu = 0x40;

// The branch of the kernel's wakeup path that returned the CPU, named after the code it is
// (docs/policy-model.md#rules): the unit in which a recorded decision and the model's agree or
// not. In the order the path reaches them.
enum class DecisionRule {
  kTtwuRunnable,       // ttwu_runnable(): the wakee still queued on prev
  kTtwuQueueWakelist,  // try_to_wake_up(): the wakee still on its CPU, queued there by IPI
  kOneAllowedCpu,      // select_task_rq(): nr_cpus_allowed == 1
  kCurrentCpu,         // select_task_rq_fair(): WF_CURRENT_CPU
  kFeec,               // find_energy_efficient_cpu() (EAS; never in the model)
  kBeforeDomainWalk,   // a policy's hook before the domain walk (sync-2017)
  kAfterWakeAffine,    // a policy's hook after wake_affine() (sync-pair)
  kSlowPath,           // sched_balance_find_dst_cpu(): a domain with SD_BALANCE_WAKE
  kSisTarget,          // select_idle_sibling(): target idle
  kSisPrev,            // prev idle, sharing the LLC with target
  kSisKthread,         // a per-CPU kthread waker: stack on prev
  kSisRecent,          // recent_used_cpu idle, sharing the LLC with target
  kSisCapacity,        // select_idle_capacity() (asymmetric capacity; never in the model)
  kSisNoLlc,           // no sd_llc for target
  kSisSmt,             // select_idle_smt(): an idle sibling of prev
  kSisSyncCore,        // a policy's hook before select_idle_cpu() (sync-core-v2)
  kSisIdleCpu,         // select_idle_cpu() found an idle core or CPU
  kSisPrevAff,         // nothing idle: prev kept for the end (clusters)
  kSisRecentFallback,  // nothing idle: recent_used_cpu kept for the end (clusters)
  kSisTargetFallback,  // nothing idle: target
  kSelectFallbackRq,   // the class chose a CPU the wakee may not use: select_fallback_rq()
};
// Every rule, in the enum's order, and each one's id ("ttwu_runnable", "sis_target", ...).
const std::vector<DecisionRule>& all_decision_rules();
std::string_view decision_rule_id(DecisionRule r);
std::optional<DecisionRule> parse_decision_rule(std::string_view id);

// What wake_affine() decided by (the event's `affine`): no test answered, wake_affine_idle(),
// wake_affine_weight().
enum class AffineTest { kNone, kIdle, kWeight };
std::string_view affine_test_id(AffineTest a);  // "none", "WA_IDLE", "WA_WEIGHT"

// Who wrote a record: the lab kernels' event, or a BPF recorder of a stock kernel (fentry on
// select_task_rq_fair, or tp_btf on sched_waking where fentry is refused).
enum class DecisionSource { kEvent, kBpf, kTpBtf };
std::string_view decision_source_id(DecisionSource s);  // "event", "bpf", "tp_btf"

struct DecisionRecord {
  DecisionSource source = DecisionSource::kEvent;
  int pid = 0;  // the wakee
  int waker_cpu = -1, prev = -1;
  unsigned wake_flags = 0;
  std::string wake_flags_from;  // kTpBtf: where wake_flags came from (above); "" read by the kernel
  int waker_flips = 0, wakee_flips = 0;
  bool last_wakee = false;  // the waker's last_wakee was this wakee before this wake
  // p->last_wakee == current: the wakee last woke this waker (sync-pair's test); absent from the
  // records of kernels built before 2026-12-03, where replay falls back to last_wakee.
  std::optional<bool> wakee_last_wakee;
  bool on_rq = false, on_cpu = false;  // the wakee still queued / still switching out
  bool kthread = false;                // the waker a per-CPU kthread
  bool in_task = true;                 // task context (kBpf: not read, assumed)
  std::vector<int> allowed, idle;
  int nr_idle_scan = 0, prev_nr_idle_scan = 0;  // -1: the LLC has no shared state
  int recent_used_cpu = -1;
  bool has_idle_cores = false, prev_has_idle_cores = false;
  int waker_nr_running = 0, waker_delayed = 0, prev_nr_running = 0;
  bool idle_moved = false;  // kBpf, kTpBtf: the idle CPUs changed while the selection ran
  // What wake_affine_weight() reads, cpu_load() of the waker's and prev's CPUs, task_h_load() of
  // the waker and the wakee, capacity_of() of both CPUs: kBpf where the recorder could read them
  // (tasks of the root task group), kEvent where the kernel ran that function.
  struct Loads {
    long long waker_cpu = 0, prev_cpu = 0, waker = 0, wakee = 0;
    long long waker_capacity = 1024, prev_capacity = 1024;
    bool operator==(const Loads&) const = default;
  };
  std::optional<Loads> loads;
  // What the kernel computed and chose; kBpf and kTpBtf records hold the CPU only (no affine, no
  // rule).
  bool wake_wide = false, want_affine = false;
  std::optional<AffineTest> affine;
  int affine_cpu = -1;
  std::optional<DecisionRule> rule;
  // kEvent: `rule=none`, the CPU came from a return the event does not label (a patch's own
  // code, runners/lab/KERNELS.md#your-patch); no model's rule is that, so replay never agrees.
  bool unlabelled = false;
  int cpu = -1;
  // kEvent: `mark=1`, a lab mutation's own marker ran in this selection (its changed branch
  // decided: runners/lab/patches/mutations/); absent (false) on lines before 2026-12-06.
  bool mark = false;
};

// The fields after "sched_wake_decision: ". Throws std::invalid_argument naming the field:
// "field \"prev\" missing", "field \"idle\": invalid CPU list ...", "unknown field \"x\"",
// "field \"rule\" is \"x\", not a rule of docs/policy-model.md#rules".
DecisionRecord parse_decision_fields(std::string_view fields);
// The fields of a kBpf or kTpBtf record as parse_decision_fields reads them back (`delayed_known`
// false: no waker_delayed field).
std::string format_bpf_decision_fields(const DecisionRecord& d, bool delayed_known);

// Every sched_wake_decision line of a trace text, in order; other lines (other events, comments,
// blank lines) are passed over. Throws std::invalid_argument "line N: <why>: \"<line>\"", the
// line escaped: "line N: has a control character: ..." for any line holding one (C0, DEL, C1).
std::vector<DecisionRecord> parse_decisions(std::string_view text);

// A trace text or a run's side file: its records, and its sched_waking lines (every wakeup of the
// traced tasks: the denominator; 0 in a text that kept none) but those of a task woken in its own
// context (`self_wakes`: try_to_wake_up()'s `p == current`, which places nothing and records
// nothing).
struct DecisionTrace {
  std::vector<DecisionRecord> records;
  int64_t wakings = 0, self_wakes = 0;
};
DecisionTrace parse_decision_trace(std::string_view text);

// A run's side file (`run --trace-decisions`) cut at its "# case NAME" lines: (name, text) in
// the order the names first appear, the blocks of one name joined in order (a run writes one per
// repetition, interleaved); text before the first such line is dropped. Throws
// std::invalid_argument "line N: ..." for a line with a control character or a NAME that is not a
// name (common/util/input.h check_name).
std::vector<std::pair<std::string, std::string>> decision_cases(std::string_view text);

}  // namespace wb
