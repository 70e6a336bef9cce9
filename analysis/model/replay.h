// `wakebench replay`: every recorded wakeup decision (common/schema/wake_decision.h) fed, inputs
// only, to one policy's model, and the model's CPU and rule held to the kernel's
// (docs/policy-model.md#replay). Pure: records in, tallies out.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/model/policy_model.h"
#include "common/schema/wake_decision.h"

namespace wb {

// The model's input for a recorded decision: its flags, flips, recent_used_cpu, has_idle_cores,
// nr_idle_scan and allowed CPUs as read; every CPU of `idle` idle, the waker's CPU with the
// recorded nr_running and delayed count, every other CPU running one task.
WakeInput wake_input_of(const DecisionRecord& d, const SchedTopology& sched);

// `cpu` is in the record's idle set (available_idle_cpu() || sched_idle_cpu() when it was read).
bool listed_idle(const DecisionRecord& d, int cpu);

// A record's inputs in one line: "waker 1 prev 0 flags 0x18 idle 0,2-3 recent 0 ...".
std::string inputs_text(const DecisionRecord& d);

struct ReplayDisagreement {
  std::string case_name;  // the run's case (replay_cases), else ""
  std::size_t index = 0;  // the record's position in its case, from 0
  DecisionRecord record;
  WakeDecision model;
};

struct RuleTally {
  int64_t count = 0, agree = 0;  // decisions the kernel made by the rule; those the model made too
};

struct ReplayResult {
  std::string policy;
  // The traced tasks' wakeups (sched_waking lines), when the text kept them: those beyond the
  // records had no decision recorded and count against agreement. Self-wakes (a task woken in its
  // own context: no placement) are not among them and are counted apart.
  int64_t wakings = 0, self_wakes = 0;
  // By the kernel's rule; for the BPF recorders' records (kBpf, kTpBtf: they hold no rule) by the
  // rule the model took, and they agree when the CPU does: `inferred` counts them.
  std::map<DecisionRule, RuleTally> by_rule;
  int64_t inferred = 0;
  int64_t unlabelled = 0;  // kEvent records of rule=none (a patch's own return): never agree
  // Of those, the tp_btf recorder's (kTpBtf: read at sched_waking), and the ones whose wake flags
  // are the mechanism's documented wake (wake_flags_from=registry:...), not the kernel's.
  int64_t at_waking = 0, flags_from_registry = 0;
  RuleTally moved;  // kBpf/kTpBtf records whose idle CPUs changed while the kernel chose
  // Trivial predictors held to the same records: prev, the waker's CPU, the wakee's last chosen CPU
  // (its previous record's; prev for its first); how many records each gets right.
  int64_t baseline_prev = 0, baseline_waker = 0, baseline_last = 0;
  RuleTally wide;  // the records whose wake_wide() was true (a branch no 1:1 case reaches)
  // The state the kernel carried, held to what the model assumes (docs/policy-model.md#replay):
  // the rule of each unpinned task's first record (the model starts recent_used_cpu on the
  // start CPU, so sis_recent_used_cpu there means it did not), and the selections whose
  // has_idle_cores hint of the waker's LLC was true with no idle core in the recorded idle set
  // (stale true) or false with one (stale false).
  std::map<std::string, int64_t> first_rules;
  int64_t hint_read = 0, hint_stale_true = 0, hint_stale_false = 0;
  // Records that read an LLC's shared state (nr_idle_scan >= 0: the kernel has an sd_llc there)
  // at a waker's CPU the model gives no LLC domain: the kernel's LLC is wider than the topology's.
  int64_t llc_wider = 0;
  std::vector<ReplayDisagreement> disagreements;
  int64_t total() const;
  int64_t agreed() const;
  std::vector<DecisionRule> uncovered() const;  // rules no record was decided by
  int64_t unrecorded() const;                   // wakings without a record
  int64_t denominator() const { return total() + unrecorded(); }
  void add(const ReplayResult& o);  // another case's, under the same policy
};

// `features`: the sched features the kernel ran with (docs/policy-model.md#sched-features).
// Throws std::invalid_argument with the model's error (a CPU outside the topology) naming the
// record: "decision N (pid P): ...". A record without a rule agrees on its CPU alone.
ReplayResult replay_decisions(const std::vector<DecisionRecord>& records,
                              const SchedTopology& sched, const WakeupPolicy& policy,
                              const ModelFeatures& features = {});

// The verdict line, the table by rule, the uncovered rules and the first `first` disagreements,
// within 100 columns.
std::string render_replay_text(const ReplayResult& r, std::size_t first);
nlohmann::ordered_json replay_json(const ReplayResult& r);

// One case's replay in a line of the predictions block: how many of its wakeups the model
// reproduced, and its most common disagreement, as the roles the two CPUs had ("model sis_prev
// -> prev, kernel -> waker"; "cpu 3" for a CPU that was neither), with how often it occurred.
struct ReplayDigest {
  int64_t wakeups = 0, reproduced = 0;
  std::string common;  // "" when every record agreed
  int64_t common_count = 0;
};
ReplayDigest digest_of(const ReplayResult& r);

// A run's cases, each replayed apart (side file order), and all of them added up.
struct CaseReplays {
  std::vector<std::pair<std::string, ReplayResult>> cases;
  ReplayResult total;
};

// A run's cases replayed as their records come, block by block: `run --trace-decisions` gives each
// repetition's records when it ends (the side file is written, never read back), replay_cases
// each case's whole text. A case's blocks add up to replay_decisions over all its records at once
// (its first records, the last CPU chosen per task and the records' positions run on).
class RunReplayer {
 public:
  RunReplayer(SchedTopology sched, const WakeupPolicy& policy, ModelFeatures features = {});
  // A block of case `name`'s trace text: its records and sched_waking lines. Throws
  // std::invalid_argument "case NAME: ..." (a line that does not parse, the model's error).
  void add(const std::string& name, std::string_view text);
  // The cases in the order they first came, and their total.
  CaseReplays replays() const;

  // What replaying one case carries from a block to the next.
  struct Case {
    std::string name;
    ReplayResult result;
    std::set<int> seen;              // tasks whose first record was counted
    std::map<int, int> last_choice;  // task -> the CPU its previous record chose
  };

 private:
  SchedTopology sched_;
  const WakeupPolicy* policy_;
  ModelFeatures features_;
  std::vector<Case> cases_;
};

CaseReplays replay_cases(const std::vector<std::pair<std::string, std::string>>& cases,
                         const SchedTopology& sched, const WakeupPolicy& policy,
                         const ModelFeatures& features = {});
// One line per case (wakeups, records, agree, %), then render_replay_text of the total.
std::string render_case_replays(const CaseReplays& r, std::size_t first);
nlohmann::ordered_json case_replays_json(const CaseReplays& r);

}  // namespace wb
