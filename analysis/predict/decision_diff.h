// The decisions that differ (docs/policy-model.md#decision-diff): every recorded wakeup given,
// inputs only, to each policy's model, and per pair of policies the records on which their
// models choose different CPUs: how many (and their share of all wakeups), by the first policy's
// rule, by the state the record was in, by the class each would have put the wakee in, which of
// the two the kernel followed, and a first-order cost from the set's pinned medians per class.
// The engine that `replay --diff` prints and that the what-if and your-patch reports reuse. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/model/policy_model.h"
#include "common/schema/wake_decision.h"

namespace wb {

// A pair's split records name the kernel that made them when it followed one model on at least
// kNameShare of them and the other on at most 1 - kNameShare, over at least kMinSplitToName
// records (fewer cannot show 1% either way).
inline constexpr int64_t kMinSplitToName = 100;
inline constexpr double kNameShare = 0.99;

// The states a split record was in (a record counts under each that holds).
enum class SplitState {
  kPrevBusy,     // prev is not in the recorded idle set
  kPrevIsWaker,  // the wakee last ran on the waker's CPU
  kWakerQueued,  // the waker's CPU runs more than the waker
  kHintStale,    // the LLC's has_idle_cores hint said otherwise than the idle set
  kRecentStale,  // recent_used_cpu is set, not prev, and busy
  kSync,         // WF_SYNC
};
std::string_view split_state_id(SplitState s);  // "prev-busy", "prev-is-waker", ...

// One record on which the two models chose different CPUs.
struct SplitRecord {
  std::size_t index = 0;  // in the records given
  WakeDecision a, b;
};

struct PairSplit {
  std::string a, b;                         // policy ids, in all_policies() order
  int64_t records = 0;                      // records replayed under both
  int64_t split = 0;                        // those on which the CPUs differ
  std::map<DecisionRule, int64_t> by_rule;  // a's rule on the split records
  std::map<SplitState, int64_t> by_state;   // states of the split records
  std::map<std::pair<std::string, std::string>, int64_t> by_classes;  // (a's, b's) class
  int64_t kernel_a = 0, kernel_b = 0;  // split records whose recorded CPU is a's / b's
  // First-order: pinned[b's class] - pinned[a's class] summed over the split records (ns), and
  // the split records a class of which has no pinned median.
  double cost_sum_ns = 0;
  int64_t unpriced = 0;
  std::vector<SplitRecord> first;  // the first kFirstSplits, in record order
  // The mean of that difference per split wakeup (what b's choice costs against a's); nullopt
  // when none split or some split record is unpriced.
  std::optional<double> cost_ns() const;
  // a, b, or "" (not named: too few split records, or the kernel followed neither enough).
  std::string named() const;
  void add(const PairSplit& o);  // another case's, same pair
};
inline constexpr std::size_t kFirstSplits = 5;

// What-if: where one policy's model puts the wakee over the recorded states (each record's
// inputs, its choice's class against the waker's CPU), counted by class; "kernel" is the recorded
// CPUs' own mix. A mix from the states the kernel met, not from the states the policy would have
// led to (its first-order reach on this trace).
struct PolicyMix {
  std::string policy;
  std::map<std::string, int64_t> classes;
  double pinned_sum_ns = 0;  // the pinned median of each choice's class, summed
  int64_t unpriced = 0;      // choices whose class has no pinned median
  // The shares of `classes`; the mean pinned median per wakeup (nullopt: some unpriced, or none).
  std::map<std::string, double> shares() const;
  std::optional<double> rtt_ns() const;
  void add(const PolicyMix& o);
  void count(const std::string& cls, const std::map<std::string, double>& pinned);  // one choice
};

struct Splits {
  std::vector<PairSplit> pairs;  // each pair of the policies once, in the order given
  std::vector<PolicyMix> mixes;  // the kernel's, then each policy's
  // Each policy's mix under the recorded load, the pair where its own choices led
  // (closed_loop.h), and the records passed over there because no waker could be told.
  std::vector<PolicyMix> closed;
  int64_t closed_no_waker = 0;
};

// Over `records`: `pinned` maps a class id to its pinned median RTT (ns) for the records'
// mechanism and mode (empty: no cost).
Splits split_decisions(const std::vector<DecisionRecord>& records, const SchedTopology& sched,
                       const std::vector<const WakeupPolicy*>& policies,
                       const ModelFeatures& features = {},
                       const std::map<std::string, double>& pinned = {});

// A run's cases, each split apart, and every pair's and mix's total.
struct CaseSplits {
  std::vector<std::pair<std::string, Splits>> cases;
  Splits total;
};
void add_case(CaseSplits& all, const std::string& name, Splits s);

// The decisions a kernel changed against one policy's model (runners/lab/KERNELS.md#your-patch):
// the records that model does not reproduce, each at the first point of the recorded path where
// the kernel and the model part. A patched kernel's are what the patch changed; mainline's own
// kernel's, held to mainline's model, are the floor.
enum class ChangePoint {
  kWakeWide,    // wake_wide() answered otherwise
  kWantAffine,  // want_affine did (the waker's CPU allowed or not)
  kRule,        // another branch returned (rule=none: a return the event does not label)
  kCpu,         // the same branch, another CPU
};
std::string_view change_point_id(ChangePoint p);  // "wake_wide", "want_affine", "rule", "cpu"

// One changed record, kept in full for the report.
struct ChangedRecord {
  std::size_t index = 0;  // in the records given
  DecisionRecord record;
  WakeDecision model;
  ChangePoint point = ChangePoint::kCpu;
};

struct KernelChanges {
  // a: the policy, b: "kernel"; `split` counts every changed record, by the model's rule, the
  // states, (model's class, kernel's class) and the first-order cost of the kernel's choice.
  PairSplit pair;
  std::map<ChangePoint, int64_t> by_point;
  int64_t moved = 0;  // changed records whose CPU differs from the model's (the placement moved)
  // Records a lab mutation marked (mark=1: its changed branch decided), and those found changed.
  int64_t marked = 0, marked_changed = 0;
  // With an expected policy (the patch's own model, where one exists): the records on which its
  // model parts from the policy's at any of the points above, and those found changed.
  std::string expected;
  int64_t expected_split = 0, expected_changed = 0;
  std::vector<ChangedRecord> first;  // the first kFirstSplits, in record order
  void add(const KernelChanges& o);
};

KernelChanges kernel_changes(const std::vector<DecisionRecord>& records, const SchedTopology& sched,
                             const WakeupPolicy& policy, const ModelFeatures& features = {},
                             const std::map<std::string, double>& pinned = {},
                             const WakeupPolicy* expected = nullptr);

struct CaseChanges {
  std::vector<std::pair<std::string, KernelChanges>> cases;
  KernelChanges total;
};
void add_case(CaseChanges& all, const std::string& name, KernelChanges c);

// The verdict line (changed records, share, how many moved the wakee), then by point, rule,
// state, class, the marked records, the cost and the cases; within 100 columns.
std::string render_changes_text(const CaseChanges& c);
nlohmann::ordered_json changes_json(const CaseChanges& c);

// The mixes (kernel first), then per pair: the verdict line (split count and share, whom the
// kernel followed, the name), its rules, states, classes and cost, the cases with splits; within
// 100 columns.
std::string render_splits_text(const CaseSplits& s);
nlohmann::ordered_json splits_json(const CaseSplits& s);

}  // namespace wb
