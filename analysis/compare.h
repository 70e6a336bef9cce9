// `wakebench compare`: the same cases in two or more result sets (kernels, machines), normalised to
// the first set, in the form the seed patch mails use ("1.00  +11.11% [+8.20, +13.90] *  sd%  q").
// The verdict on a case (analysis/inference.h): a Mann-Whitney U test over per-repetition values,
// Benjamini-Hochberg q-values across the cases of one comparison (base against one other set), a
// Hodges-Lehmann confidence interval of the ratio, and, with a noise file or the baseline's stored
// floor, a noise floor (the machine's A/A change of that case: analysis/noise.h) that a starred
// change must exceed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/inference.h"
#include "analysis/mann_whitney.h"
#include "analysis/noise.h"
#include "analysis/resultset_io.h"

namespace wb {

enum class CompareFormat { kText, kMarkdown, kCsv, kJson };
// "text" | "markdown" | "csv" | "json"; throws std::invalid_argument naming the value otherwise.
CompareFormat parse_compare_format(std::string_view name);

// What is compared. RTT statistics (`rtt_ns`: min, mean, median, p90, p99, p999, max), the one-way
// wakeup's (`wakeup-median`, `wakeup-p99`, ... from `wakeup_ns`), `tps` (binder-like; higher is
// better) or a perf counter per round trip: "<event>" sums waker and wakee, "waker:<event>" and
// "wakee:<event>" take one side. Per-repetition values (for sd%, the test and the interval) are
// read from `repetitions[]` under the same name ("median", "wakeup-p99", "tps", ...) when every
// repetition has it (result sets of schema 2). Counters are counted in one pass of their own
// (README "Mechanisms"), so they have no per-repetition values: shown, never tested.
struct Metric {
  std::string id;
  std::string label;  // "median RTT", "cycles per round trip (waker + wakee)"
  std::string unit;   // "ns", "tx/s", "events"
  bool higher_is_better = false;
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
};

// One case in one set.
struct CompareCell {
  bool present = false;
  CaseStatus status = CaseStatus::kOk;  // the case's status when present
  std::optional<double> value;          // the metric (ns, transactions/s or events per round trip)
  std::vector<double> repetitions;
  std::optional<double> sd_pct;  // sample sd / mean of the per-repetition values, in percent
  // Against the baseline (never set for the baseline itself).
  std::optional<double> ratio;       // value / baseline value
  std::optional<double> change_pct;  // positive = better (lower latency, higher tps)
  std::optional<MannWhitneyResult> test;
  std::optional<double> q_value;          // BH over the tested cases of this set against the base
  std::optional<ShiftInterval> interval;  // Hodges-Lehmann: ratio of repetition values, interval
  std::optional<double> aa_floor_pct;     // the noise file's A/A change of this case and metric
  // q < alpha, enough repetitions, |change| > the A/A floor (when there is one).
  bool significant = false;
};

struct CompareRow {
  std::string key;  // CaseView::key()
  std::string mechanism, mode, placement, pair;
  nlohmann::json params;
  std::vector<CompareCell> cells;  // one per set, baseline first
  bool in_all() const;
};

struct CompareSet {
  std::string label;  // short column name: the file's stem, made unique
  std::string path;
  MachineSummary machine;
  bool complete = true;
};

struct Comparison {
  CompareOptions options;
  std::vector<CompareSet> sets;
  // Baseline order, then cases missing from the baseline in order of first appearance.
  std::vector<CompareRow> rows;
  std::vector<std::string> warnings;
};

// Needs at least two sets. Throws std::runtime_error if the metric occurs in no case of any set
// (naming the metric and, for counters, the events that do occur). Without options.noise, the
// baseline's stored noise floor (its "noise", from `wakebench run --noise FILE`) applies.
Comparison compare_result_sets(const std::vector<ResultSet>& sets, const CompareOptions& options);

std::string format_comparison(const Comparison& cmp, CompareFormat format);

}  // namespace wb
