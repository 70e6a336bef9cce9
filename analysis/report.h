// `wakebench report`: plots and summary tables of one result set, as gnuplot data files, gnuplot
// scripts (each renders a PNG and an SVG beside itself) and an index.md that links them. Without
// gnuplot the data and scripts are still written, with the command that renders them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/resultset_io.h"

namespace wb {

struct ReportOptions {
  std::string out_dir;  // created if missing
  // gnuplot executable; empty = search PATH. Not found: data and scripts only.
  std::string gnuplot;
};

struct ReportOutput {
  std::vector<std::string> files;    // every file written, relative to out_dir
  std::vector<std::string> scripts;  // the .gp files among them
  std::vector<std::string> images;   // .png and .svg rendered (empty if not rendered)
  std::vector<std::string> skipped;  // plots not drawn, each with its reason
  std::string gnuplot;               // the gnuplot used; empty when none was found
  std::string render_command;        // how to render later (when gnuplot was not found)
};

// Writes every file atomically (temporary + rename). Throws std::runtime_error naming the file on
// a write error, and the script on a gnuplot failure.
ReportOutput write_report(const ResultSet& rs, const ReportOptions& options);

// First executable `name` in the directories of $PATH, if any.
std::optional<std::string> find_on_path(const std::string& name);

// The report's files and their content, from the result set alone (analysis/report.cpp);
// write_report (analysis/report_io.cpp) writes them and renders the plots.
struct ReportFile {
  std::string name;  // relative to the output folder
  std::string text;
};
struct ReportFiles {
  std::vector<ReportFile> files;     // in writing order: each plot's .dat and .gp, index.md last
  std::vector<std::string> plots;    // their stems: stem.gp renders stem.png and stem.svg
  std::vector<std::string> skipped;  // plots not drawn, each with its reason
};
// `render_later`: the command index.md gives for rendering the images, empty when write_report
// renders them.
ReportFiles report_files(const ResultSet& rs, const std::string& render_later);

}  // namespace wb
