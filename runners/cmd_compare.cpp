// wakebench compare BASE.json NEW.json [MORE.json...]: see analysis/compare.h.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "analysis/compare.h"
#include "analysis/resultset_io.h"
#include "runners/commands.h"

namespace wb {
namespace {

void add_compare_command(CLI::App& app) {
  struct Args {
    std::vector<std::string> files;
    std::string metric = "median";
    std::string format = "text";
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare result sets case by case: the first is the baseline (1.00); each other set shows "
      "ratio, change (+ = better), sd% and a Mann-Whitney U p-value over repetitions");
  cmd->add_option("files", args->files, "BASE.json NEW.json [MORE.json...]")
      ->required()
      ->expected(2, -1);
  cmd->add_option("--metric", args->metric,
                  "median|p99|mean|min|p90|p999|max|wakeup-median|wakeup-p99|tps, or a perf "
                  "counter per round trip: EVENT (waker + wakee), waker:EVENT, wakee:EVENT")
      ->capture_default_str();
  cmd->add_option("--format", args->format, "text|markdown|csv|json")
      ->check(CLI::IsMember({"text", "markdown", "csv", "json"}))
      ->capture_default_str();
  cmd->callback([args] {
    CompareOptions options;
    options.metric = parse_metric(args->metric);
    const CompareFormat format = parse_compare_format(args->format);
    std::vector<ResultSet> sets;
    for (const std::string& f : args->files) sets.push_back(load_result_set(f));
    const Comparison cmp = compare_result_sets(sets, options);
    std::cout << format_comparison(cmp, format) << std::flush;
    // CSV has no place for notes; humans read them on stderr (text, markdown and json carry them).
    if (format == CompareFormat::kCsv) {
      for (const std::string& w : cmp.warnings)
        std::fprintf(stderr, "wakebench: note: %s\n", w.c_str());
    }
  });
}

static CommandRegistrar reg("compare", add_compare_command);

}  // namespace
}  // namespace wb
