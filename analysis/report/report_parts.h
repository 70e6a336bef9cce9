// The report's building blocks (analysis/report/report.cpp assembles them into the report): one
// plot's data file and script, one part's plots and tables, plot stems, gnuplot quoting, and the
// parts drawn from the cases' round-trip times (analysis/report/report_rtt.cpp). Pure: text, no
// I/O.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "analysis/results/resultset_io.h"
#include "common/schema/placement.h"

namespace wb::report_parts {

// One plot: its data file and gnuplot script beside each other (stem.dat, stem.gp), listed in the
// index.
struct Plot {
  std::string stem, title, description, dat, gp;
};

// What one part of the report adds: its plots, the plots it could not draw (each with its reason)
// and its markdown summary tables for index.md.
struct Part {
  std::vector<Plot> plots;
  std::vector<std::string> skipped;
  std::string tables;
};

// The stems of one part's plots. A stem is a file name the report makes, never a string from the
// set: `prefix`, '-' and the name with '/' as '-' and every other character outside [A-Za-z0-9-]
// as '_' (so no '/' and no '.'), then "-2", "-3", ... where two names come out alike.
class Stems {
 public:
  std::string take(const std::string& prefix, const std::string& name);

 private:
  std::set<std::string> taken_;
};

// A part that draws nothing, for `reason`.
Part not_drawn(std::string reason);

inline bool is_matrix(const CaseView& c) { return c.kind == PlacementKind::kMatrix; }

// A gnuplot string literal in a script: single-quoted, where gnuplot substitutes nothing (no
// backquoted command, no escape; a double-quoted string runs `...`); a quote is doubled.
std::string gp_quote(const std::string& s);
// A string column of a data file: double-quoted (gnuplot reads nothing else as one column), with
// no double quote inside. gnuplot never evaluates data.
std::string dat_quote(const std::string& s);
// Script preamble and trailer: PNG through pngcairo when this gnuplot has it (antialiased), else
// libgd's png; then the same plot as SVG. Every script is self-contained and runs from its folder.
std::string gp_begin(const std::string& stem, int width, int height);
std::string gp_end(const std::string& stem, int width, int height);
// Tics on a logarithmic axis from `lo` to `hi`: at 1, 2 and 5 times each power of ten when the
// data spans up to two of them (gnuplot would label only one or two), else at the powers of ten.
std::string log_tics(const char* axis, double lo, double hi);

// Blue (fast) to red (slow), readable in grey too.
inline constexpr const char* kPalette =
    "set palette defined (0 '#2c7bb6', 0.25 '#abd9e9', 0.5 '#ffffbf', 0.75 '#fdae61', 1 "
    "'#d7191c')\n";

// The heat map of median RTT by placement x mechanism/mode, plot and table.
Part heatmap(const std::vector<CaseView>& cases);
// Per mechanism, the CDF and the histogram of each case's round trips.
Part distributions(const std::vector<CaseView>& cases);

}  // namespace wb::report_parts
