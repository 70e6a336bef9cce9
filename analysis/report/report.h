// `wakebench report`: plots and summary tables of one result set, as gnuplot data files, gnuplot
// scripts (each renders a PNG and an SVG beside itself) and an index.md that links them. Without
// gnuplot the data and scripts are still written, with the command that renders them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/results/resultset_io.h"

namespace wb {

struct ReportOptions {
  std::string out_dir;  // created; an existing one must be empty unless `replace`
  // gnuplot executable; empty = search PATH. Not found: data and scripts only.
  std::string gnuplot;
  bool replace = false;  // a non-empty out_dir is replaced whole
};

struct ReportOutput {
  std::vector<std::string> files;    // every file written, relative to out_dir
  std::vector<std::string> scripts;  // the .gp files among them
  std::vector<std::string> images;   // .png and .svg rendered (empty if not rendered)
  std::vector<std::string> skipped;  // plots not drawn, each with its reason
  std::string gnuplot;               // the gnuplot used; empty when none was found
  std::string render_command;        // how to render later (when gnuplot was not found)
};

// All or nothing: builds the report in a new folder beside out_dir and renames it into place when
// every file is written and every image rendered and whole; on an error or a SIGINT, SIGTERM or
// SIGHUP (gnuplot then killed) it removes that folder and out_dir is as it was. Throws
// std::runtime_error naming the folder or file, the script on a gnuplot failure, or the signal.
ReportOutput write_report(const ResultSet& rs, const ReportOptions& options);

// First executable `name` in the directories of $PATH, if any.
std::optional<std::string> find_on_path(const std::string& name);

// The report's files and their content, from the result set alone (analysis/report/report.cpp);
// write_report (analysis/report/report_io.cpp) writes them and renders the plots.
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
