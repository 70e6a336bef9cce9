// `wakebench compare`: the same cases in two or more result sets (kernels, machines), normalised to
// the first set, in the form the seed patch mails use ("0.89 +11.11% [+8.20, +13.90] DIFFERENT").
// Each case and metric gets a verdict against the baseline (analysis/stats/decision.h): DIFFERENT
// (a Mann-Whitney U test over per-repetition values passes after Benjamini-Hochberg across the
// cases of one comparison, and the change clears the case's A/A floor: analysis/compare/noise.h),
// SAME (two one-sided tests: the interval, widened by the floor, lies within +-margin) or UNKNOWN
// (with the smallest change the comparison detects and the repetitions a side that would decide
// it). Repetitions that did not sleep (docs/result-set.md#blocked) are left out of every test. A
// side may hold several runs of one suite (compare A1 A2 -- B1 B2): where both sides have two or
// more, the run is the unit (analysis/stats/levels.h) and the variance between runs, measured,
// replaces the A/A floor. Kernel-placed cases also get why they changed
// (analysis/stats/decompose.h) and their sched domains' wakeup counters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/compare/noise.h"
#include "analysis/results/resultset_io.h"
#include "analysis/stats/decision.h"
#include "analysis/stats/decompose.h"
#include "analysis/stats/inference.h"

namespace wb {

// kMail: the patch mail's table in mmtests' compare-kernels shape, at most 72 columns
// (analysis/compare/compare_mail.cpp).
enum class CompareFormat { kText, kMarkdown, kCsv, kJson, kMail };
// "text" | "markdown" | "csv" | "json" | "mail"; throws std::invalid_argument naming the value
// otherwise.
CompareFormat parse_compare_format(std::string_view name);

// What is compared. RTT statistics (`rtt_ns`: min, mean, median, p90, p99, p999, max), the one-way
// wakeup's (`wakeup-median`, `wakeup-p99`, ... from `wakeup_ns`), `tps` (binder-like; higher is
// better) or a perf counter per round trip: "<event>" sums waker and wakee, "waker:<event>" and
// "wakee:<event>" take one side. Per-repetition values (for sd%, the test and the interval) are
// read from `repetitions[]` under the same name ("median", "wakeup-p99", "tps", ...) when every
// repetition has it (result sets of schema 2). Counters are counted in one pass of their own
// (docs/configs.md#mechanisms), so they have no per-repetition values: shown, never tested.
struct Metric {
  std::string id;
  std::string label;  // "median RTT", "cycles per round trip (waker + wakee)"
  std::string unit;   // "ns", "tx/s", "events"
  bool higher_is_better = false;
  bool counter = false;  // a perf counter: one value per case, shown, never tested
};
Metric parse_metric(std::string_view id);

struct CompareOptions {
  Metric metric = parse_metric("median");
  double alpha = 0.05;  // significance level of the two-sided test
  // Fewer repetitions than this on either side: p is still shown but never marked significant.
  // 5 vs 5 is the least that reaches p < 0.05 with one rank swap (U = 1: p = 0.016); 4 vs 4 only
  // with complete separation (p = 0.029); 3 vs 3 never (p >= 0.1).
  std::size_t min_repetitions = 5;
  double confidence = 0.95;         // of the ratio's interval
  std::optional<NoiseFloor> noise;  // compare --noise FILE
  double power = 0.80;              // of the detectable change and the repetitions needed
  double margin = 0.05;             // SAME: the change within +-margin (--margin)
  // The level this comparison spends: alpha for one look; run --until-decided spends
  // alpha_spent_at(look, looks, alpha) at each look (analysis/stats/decision.h).
  std::optional<double> level;
  // The base gains no repetitions (compare; run --until-decided adds to the new set only).
  bool base_fixed = true;
  DecisionRules rules() const { return {alpha, power, margin, min_repetitions}; }
  double look_level() const { return level.value_or(alpha); }
};

// The test a cell's verdict rests on: Mann-Whitney on the repetitions' logs, with its exact null
// distribution or the normal approximation, or a paired t test on the rounds' differences (run
// --ab sets of one run).
enum class CellTestKind { kExact, kNormal, kPairedT, kWelchRuns };

// The level a cell's verdict rests on (analysis/stats/levels.h): the repetitions (one run a side:
// what varies between runs is unknown, and only the A/A floor stands for it), or the runs (two or
// more a side: Welch's t on their means).
enum class CompareLevel { kRepetitions, kRuns };
std::string_view level_id(CompareLevel level);  // "repetitions" | "runs"
struct CellTest {
  double p_value = 1;  // two-sided
  CellTestKind kind = CellTestKind::kNormal;
};

// One case in one set.
struct CompareCell {
  bool present = false;
  CaseStatus status = CaseStatus::kOk;  // the case's status when present
  std::optional<double> value;          // the metric (ns, transactions/s or events per round trip)
  std::vector<double> repetitions;      // per repetition, those that did not sleep left out
  std::size_t marked = 0;               // repetitions left out: they did not sleep
  std::size_t repetitions_total = 0;
  std::vector<int> rounds;  // run --ab: the round of each value in `repetitions` (else empty)
  // A side of several runs: each run's kept values, when two or more runs have some (else empty);
  // `repetitions` holds them all.
  std::vector<std::vector<double>> runs;
  std::size_t run_count = 0;             // the side's runs that hold the case ok
  std::vector<RepetitionTally> classes;  // kernel placement: per kept repetition, by class
  SchedstatView schedstat;               // the case's schedstat window
  double schedstat_round_trips = 0;      // the round trips its window covers, warm-up included
  std::optional<double> sd_pct;  // sample sd / mean of the per-repetition values, in percent
  // A side of two or more runs with the metric: sample sd / mean of the runs' values, in percent.
  std::optional<double> run_sd_pct;
  // Kernel placement: where the wakee ran, class -> round trips (the case's `observed.histogram`,
  // summed over a side's runs); empty when not recorded.
  std::vector<std::pair<std::string, double>> wakee_ran;
  // Against the baseline (never set for the baseline itself).
  std::optional<double> ratio;       // value / baseline value
  std::optional<double> change_pct;  // positive = better (lower latency, higher tps)
  std::optional<CellTest> test;
  std::optional<double> q_value;          // BH over the tested cases of this set against the base
  std::optional<ShiftInterval> interval;  // Hodges-Lehmann: ratio of repetition values, interval
  std::optional<double> aa_floor_pct;     // the noise file's A/A change (repetition level only)
  CompareLevel level = CompareLevel::kRepetitions;  // of the test against the base
  std::optional<LevelVariances> levels;             // the run level's variances (log scale)
  std::optional<Decision> decision;  // the verdict (log scale; the ratio's percent: below)
  bool paired() const { return test && test->kind == CellTestKind::kPairedT; }
  bool slower() const;  // a DIFFERENT change for the worse
};

// A kernel-placed case's change, one other set against the base (docs/cli.md#compare-why).
struct ClassShareVerdict {
  std::string cls;
  Decision decision;  // on the per-repetition share (difference scale, margin in share points)
  std::optional<double> q;  // BH over the set's share tests (the test's own p until adjusted)
};
// The per-domain wakeup counters of /proc/schedstat per round trip (docs/result-set.md#schedstat),
// summed over the case's CPUs: "domain0 (MC)" x "ttwu_wake_remote" x (base, other).
struct SchedstatRow {
  std::string domain, counter;
  std::optional<double> base, other;
};
struct SchedstatTable {
  std::vector<SchedstatRow> rows;
  std::string base_off, other_off;  // why a side has no counts ("" when it has them)
};
struct WhyChanged {
  std::size_t row = 0, set = 0;  // the row and the other set
  std::optional<Decomposition> parts;
  std::vector<ClassShareVerdict> shares;
  std::map<std::string, std::pair<double, double>> class_median_ns;  // class -> (base, other)
  SchedstatTable schedstat;
};

struct CompareRow {
  std::string key;  // CaseView::key()
  std::string mechanism, mode, placement, pair;
  nlohmann::json params;
  std::string suffix;  // the knobs off their defaults, as in case names ("/work=2000ns")
  std::vector<CompareCell> cells;  // one per set, baseline first
  bool in_all() const;
};

// How one run of a side was made, as its result set records it (it does not record the command
// line): the config, the order seed, the A/B setting and the --until-decided baseline.
struct RunOrigin {
  std::string config;            // config.path, else config.name, else ""
  std::optional<uint64_t> seed;  // run.order_seed
  std::string ab_label;          // ab.label ("TTWU_QUEUE=off"), "" outside run --ab
  int ab_setting = 0, ab_settings = 0;
  std::string until_decided_base;    // until_decided.base, "" without --until-decided
  std::vector<std::string> command;  // run.command: the command line; empty when not recorded
};

struct CompareSet {
  std::string label;  // short column name: the file's stem (a side's: its folder's, or the runs'
                      // common stem), made unique
  std::string path;   // the file; for several runs, their paths joined by ", "
  EnvironmentView machine;         // of its (first) run
  bool complete = true;            // every run complete
  std::vector<std::string> runs;   // the side's runs (one: `path`)
  std::vector<RunOrigin> origins;  // one per run
};

struct Comparison {
  CompareOptions options;
  std::vector<CompareSet> sets;
  // Baseline order, then cases missing from the baseline in order of first appearance.
  std::vector<CompareRow> rows;
  std::vector<WhyChanged> why;  // kernel-placed rows with observed classes on both sides
  std::vector<std::size_t> moved_together;  // other sets whose cases mostly moved one way
  std::vector<std::string> warnings;
  // Per other set (index 1..): how many cases got each verdict.
  std::map<CompareVerdict, int> counts(std::size_t set) const;
  int slower(std::size_t set) const;
};

// Needs at least two sets. Throws std::runtime_error if the metric occurs in no case of any set
// (naming the metric and, for counters, the events that do occur). Without options.noise, the
// baseline's stored noise floor (its "noise", from `wakebench run --noise FILE`) applies.
Comparison compare_result_sets(const std::vector<ResultSet>& sets, const CompareOptions& options);

// A side of a comparison: one or more runs of one suite on one machine.
struct CompareSide {
  std::string label;  // "" : from the runs' file names
  std::vector<const ResultSet*> runs;
};
// The same over sides, the first the baseline. Throws std::runtime_error with one line for a side
// without runs, or whose runs come from two machines (hostname), ran two configs (config_hash),
// hold different cases, or repeat a set.
Comparison compare_sides(const std::vector<CompareSide>& sides, const CompareOptions& options);

// compare's verdict machinery on one family of cells held against their bases (one other set's
// cases against the baseline, or a set's premise checks: analysis/predict/predict_results.h): each
// other's ratio, change, test and interval (at the run level where both hold two or more runs),
// Benjamini-Hochberg across the family, and each verdict. An other's aa_floor_pct, set before,
// is its floor at the repetition level. `paired`: the cells' rounds pair (one run --ab run).
struct CellPair {
  const CompareCell* base = nullptr;
  CompareCell* other = nullptr;
};
void judge_family(const std::vector<CellPair>& family, const CompareOptions& options, bool paired);

// A case's cell: the metric, its per-repetition values without those that did not sleep.
CompareCell case_cell(const CaseView& c, const Metric& metric);

// Adds compare's warnings once the verdicts are in (analysis/compare/compare_warnings.cpp), in this
// order: cases without an A/A floor (with options.noise), tests with too few repetitions,
// repetitions that did not sleep, sets whose cases mostly moved one way (cmp.moved_together),
// paired rounds.
void verdict_warnings(Comparison& cmp, bool paired);

// Fills cmp.why (analysis/compare/compare_why.cpp): the kernel-placed rows whose base and other
// cells both have repetitions by observed class.
void explain_kernel_cases(Comparison& cmp);

std::string format_comparison(const Comparison& cmp, CompareFormat format);

}  // namespace wb
