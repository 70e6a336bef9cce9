// Predictions for a result set (docs/policy-model.md#results): for every kernel-placed case, each
// policy's steady state on the case that ran (its cpuset, start and busy CPUs, the LLC the set's
// own sched domains name), priced with the RTT measured pinned on each class, held against the
// placements the kernel made, with a verdict word per policy; and each patch's premise on the
// measured machine. Typed from the simulation to the renderers; JSON only at the edges (to_json,
// and the result set read in).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/compare/compare.h"
#include "analysis/model/model_features.h"
#include "analysis/model/replay.h"
#include "analysis/predict/predict.h"
#include "analysis/results/resultset_io.h"
#include "analysis/results/trace_view.h"
#include "analysis/stats/mix.h"

namespace wb {

// A policy's word for one observation (docs/policy-model.md#verdicts), in the order they are
// tried:
//   MATCH          the strict distance (observation vs steady state) is at most kMatchDistance,
//                  whatever the range covers;
//   NO-PREDICTION  the range (steady state and alternatives, every mix) comes within
//                  kMatchDistance of at least kNoPredictionCoverage of every distribution the
//                  cpuset's classes allow: it could not have been contradicted;
//   EXPLAINED      a strict miss that a mix with named alternatives brings within kMatchDistance;
//   MISS           none of these.
// Only MATCH is agreement; the others are counted apart everywhere.
enum class Verdict { kMatch, kExplained, kNoPrediction, kMiss };
std::string_view verdict_word(Verdict v);  // "MATCH", "EXPLAINED", "NO-PREDICTION", "MISS"
std::optional<Verdict> parse_verdict(std::string_view word);

inline constexpr double kMatchDistance = 0.25;
inline constexpr double kNoPredictionCoverage = 0.90;

// The word for a fit and its range's coverage (rules above).
Verdict judge(const RangeFit& fit, double coverage);

struct PolicyPrediction {
  SteadyResult steady;
  std::optional<double> rtt_ns;      // predicted; nullopt when a class has no pinned cost
  std::vector<std::string> missing;  // those classes
  std::string unpriced;              // why, e.g. "n/a: no pinned llc case with work=10000ns"
  double coverage = 0;               // range_coverage() of its range over the case's classes
  std::optional<RangeFit> fit;       // against the observation, when there is one
  std::optional<Verdict> verdict;    // likewise
};

struct MeasuredPlacement {
  std::string status;
  std::optional<double> rtt_ns;
  std::vector<std::pair<std::string, double>> histogram;  // round trips per class, as recorded
  ClassShares classes;        // shares; empty without a recorded histogram
  nlohmann::json migrations;  // as recorded (null when absent)
  // The case's `--trace-wakeups` counts; nullopt when it was not traced or has none (unavailable).
  std::optional<TraceView> trace;
};

struct CasePrediction {
  std::string label, mechanism, mode, placement;
  nlohmann::json params;                 // as recorded (echoed in the JSON)
  Params knobs;                          // the same, typed (what the model reads)
  std::map<std::string, double> pinned;  // class -> median RTT of this params point's pinned case
  std::optional<std::string> skipped;    // why there is no kernel wakeup to model
  WakeFlags wake_flags = WakeFlags::kNone;
  std::pair<int, int> start{-1, -1};
  std::vector<int> allowed;                // empty: every CPU
  std::vector<int> busy;                   // the case's background CPUs
  std::vector<std::string> classes;        // what the cpuset can produce, nearest first
  std::vector<PolicyPrediction> policies;  // all_policies() order
  // Nearest first by strict distance (ties in policy order) when observed, else policy order.
  std::vector<PolicyGroup> groups;
  std::optional<MeasuredPlacement> measured;  // nullopt: a params point with no kernel case
  // The policy pairs (ids, policy order within a pair) the case discriminates under the set's
  // options (analysis/predict/discriminate.h), and for an emulated set also without the
  // emulation-only alternatives (what the case would discriminate on hardware or under KVM).
  using IdPairs = std::vector<std::pair<std::string, std::string>>;
  IdPairs discriminates;
  std::optional<IdPairs> discriminates_native;
  std::optional<ReplayDigest> replay;  // its recorded decisions replayed (attach_replays)

  const PolicyPrediction& first_of(const PolicyGroup& g) const { return policies[g.members[0]]; }
};

// A premise check's reading: compare's verdict (analysis/compare/compare.h, judge_family) of case a
// against case b over their per-repetition medians in this run. holds: DIFFERENT, a cheaper;
// fails: DIFFERENT, a dearer, or SAME (within compare's margin); cannot tell: UNKNOWN.
enum class PremiseVerdict { kHolds, kFails, kCannotTell };
std::string_view premise_verdict_word(PremiseVerdict v);  // "holds" | "fails" | "cannot tell"

struct PremiseCheck {
  std::string label, mechanism, mode;
  nlohmann::json params;
  std::string a, b;  // classes, or "kernel"
  std::optional<double> a_rtt_ns, b_rtt_ns;
  // Both measured: b's cell (the base) and a's, judged against it: ratio a / b, change (+ = a
  // cheaper), q (Benjamini-Hochberg over the set's distinct checks), interval and verdict.
  std::optional<CompareCell> base, judged;
  std::optional<PremiseVerdict> verdict() const;
};

struct Premise {
  std::string policy, text;
  std::vector<PremiseCheck> checks;
  std::optional<std::string> not_measurable;
};

struct ResultsPrediction {
  std::string topology;  // the embedded topology's source
  LlcSource llc = LlcSource::kAuto;
  std::string llc_from;  // "the recorded sched domains (MC)" or "the XML's L3/L2 rule: ..."
  int node_reclaim_distance = 0;
  bool emulated = false;       // environment.emulated: the slow switch-out alternatives are on
  std::string kernel_release;  // the set's kernel (environment.kernel.release; "" if unrecorded)
  // Why the fair class did not place the set's tasks (EnvironmentView::not_fair): the predictions
  // do not apply, and no verdict is scored; "" where it did.
  std::string not_fair;
  // The sched features the set ran with (environment.sched_features, its A/B setting's over
  // them): the model's switches, and a note per feature off its default.
  SetFeatures features;
  std::string replay_unavailable;  // the set records decisions that could not be replayed: why
  // The sched domains the model built from the embedded topology and `llc`, per CPU (lab guests
  // hold them against the domains their kernel built: runners/lab/wblab/domains.py).
  std::map<int, std::vector<SchedDomain>> domains;
  std::vector<CasePrediction> cases;
  std::vector<Premise> premises;
};

// Predicts every kernel-placed case of a read or built set (a params point without one gets one
// entry named "<mechanism>/<mode><suffix>", predicted but not measured). Throws
// std::invalid_argument with one line for a set without an embedded topology, or a kernel case
// whose cpuset, start or background CPUs the topology lacks.
ResultsPrediction predict_for_results(const ResultSet& result_set);
// The same on a document, read first (analysis/results/resultset_io.h: check_result_set): also one
// line for another schema/version or a bad case.
ResultsPrediction predict_for_results(const nlohmann::json& result_set);
// The machine a result set ran on as the model sees it: its embedded hwloc XML with the LLC its
// own sched domains name. Throws std::invalid_argument without topology.xml.
SchedTopology sched_topology_of(const ResultSet& result_set);
// The sched features a set ran with, as the model takes them: its recorded
// environment.sched_features, then its A/B setting's `feature:` values (set_features()).
SetFeatures set_features(const ResultSet& result_set);
// The same for a result-set file: errors are one line naming the file.
ResultsPrediction predict_for_results_file(const std::string& path);

// Each case's replay digest onto its prediction, by case name (analysis/predict/replay_io.h reads
// them).
void attach_replays(ResultsPrediction& p, const CaseReplays& replays);

// The JSON of docs/result-set.md#predictions.
nlohmann::json to_json(const ResultsPrediction& p);
// The text `wakebench run` prints after its summary and `predict --results` prints: per case the
// measured placement, then each group's verdict word, strict distance and predicted RTT, the
// alternatives' causes as footnotes printed once; then the premises. At most 100 columns.
std::string render_results_text(const ResultsPrediction& p);

ClassShares class_shares(const std::map<PlacementClass, double>& classes);
// A steady state's alternatives as class shares, in its order.
std::vector<ClassShares> alternatives_of(const SteadyResult& r);
// A class distribution ({"llc": 0.7, "same-cpu": 0.3}) as "llc 70% same-cpu 30%".
std::string classes_text(const ClassShares& classes);

}  // namespace wb
