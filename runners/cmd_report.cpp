// wakebench report RESULTS.json --out DIR: see analysis/report/report.h.
#include <cstdio>
#include <memory>
#include <string>

#include "analysis/report/report.h"
#include "analysis/results/resultset_io.h"
#include "runners/commands.h"

namespace wb {
namespace {

void add_report_command(CLI::App& app) {
  struct Args {
    std::string results, out;
    bool replace = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Plots (gnuplot PNG + SVG, with their data and scripts) and summary tables of a result set, "
      "linked from DIR/index.md");
  cmd->add_option("results", args->results, "RESULTS.json")->required();
  cmd->add_option("--out", args->out, "output folder: new or empty (built beside it, then renamed)")
      ->required();
  cmd->add_flag("--replace", args->replace, "replace a non-empty --out folder whole");
  cmd->callback([args] {
    const ResultSet rs = load_result_set(args->results);
    const ReportOutput r = write_report(rs, ReportOptions{args->out, "", args->replace});
    for (const std::string& s : r.skipped)
      std::fprintf(stderr, "wakebench: not drawn: %s\n", s.c_str());
    if (r.gnuplot.empty()) {
      std::fprintf(stderr,
                   "wakebench: gnuplot not found on PATH: wrote %zu data files and scripts, no "
                   "images. Render with:\n  %s\n",
                   r.scripts.size(), r.render_command.c_str());
    }
    std::printf("%s/index.md: %zu plots, %zu images, %zu files\n", args->out.c_str(),
                r.scripts.size(), r.images.size(), r.files.size() + r.images.size());
  });
}

static CommandRegistrar report_reg("report", add_report_command);

}  // namespace
}  // namespace wb
