// What compare's renderers share (analysis/compare/compare_phrases.cpp): the text and markdown of
// analysis/compare/compare_render.cpp, the CSV and JSON of compare_data.cpp and the mail table of
// compare_mail.cpp draw one Comparison with the same words and the same rows.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/compare/compare.h"

namespace wb {

// Absolute values: ns and tps as integers, small counters with decimals.
std::string format_value(double v);

// "new vs base: 3 DIFFERENT (1 slower), 40 SAME, 9 UNKNOWN" for other set s.
std::string summary_line(const Comparison& cmp, std::size_t s);

// "1 run", "3 runs": a set's runs.
std::string runs_text(const CompareSet& set);

// What the verdicts against set s rest on: the level, and what stands for the variation between
// runs (docs/cli.md#compare-the-verdict).
std::string level_line(const Comparison& cmp, std::size_t s);

// A row's case as its name reads: "binder-like/processes/llc/w2s4".
std::string case_text(const CompareRow& r);

// Rows in the baseline and at least one other set that have the metric or a status saying why not,
// per mechanism, in first-appearance order.
using MechanismRows = std::vector<std::pair<std::string, std::vector<const CompareRow*>>>;
MechanismRows by_mechanism(const Comparison& cmp);

// The change's interval in percent, + = better, from the interval of the ratio.
std::optional<std::pair<double, double>> change_interval(const CompareCell& c, const Metric& m);
// A log-scale interval of the ratio as a change in percent, + = better.
std::pair<double, double> change_pct_of(double log_lo, double log_hi, const Metric& m);

// The CSV and the JSON (analysis/compare/compare_data.cpp).
std::string format_csv(const Comparison& cmp);
std::string format_json(const Comparison& cmp);

// The mail table (analysis/compare/compare_mail.cpp). Throws std::invalid_argument with one line
// when the sets cannot fit in its 72 columns.
std::string format_mail(const Comparison& cmp);

}  // namespace wb
