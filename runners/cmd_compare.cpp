// wakebench compare BASE.json NEW.json [MORE.json...], or sides of several runs (A1.json A2.json --
// B1.json B2.json, or folders): see analysis/compare/compare.h; and the noise floor it reads,
// wakebench noise A.json B.json [...] --out NOISE.json: see analysis/compare/noise.h.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "analysis/compare/compare.h"
#include "analysis/compare/noise.h"
#include "analysis/results/resultset_io.h"
#include "common/util/input.h"
#include "common/util/output_file.h"
#include "common/util/text.h"
#include "runners/commands.h"

namespace wb {
namespace {

std::vector<ResultSet> load_sets(const std::vector<std::string>& files) {
  std::vector<ResultSet> sets;
  for (const std::string& f : files) sets.push_back(load_result_set(f));
  return sets;
}

// compare's arguments by side: split at each kSideBreak; without one, each argument is a side.
std::vector<std::vector<std::string>> side_args(const std::vector<std::string>& args) {
  std::vector<std::vector<std::string>> sides(1);
  const bool breaks = std::find(args.begin(), args.end(), kSideBreak) != args.end();
  for (const std::string& a : args) {
    if (a == kSideBreak)
      sides.emplace_back();
    else if (breaks)
      sides.back().push_back(a);
    else
      sides.push_back({a});
  }
  if (!breaks) sides.erase(sides.begin());
  for (std::size_t s = 0; s < sides.size(); ++s)
    if (sides[s].empty())
      throw std::invalid_argument("compare: side " + std::to_string(s + 1) +
                                  " has no result set (a -- at an end, or two together)");
  if (sides.size() < 2)
    throw std::invalid_argument("compare: a baseline and at least one other side are needed");
  return sides;
}

// A folder stands for its result sets: its *.json files, by name.
std::vector<std::string> expand_folder(const std::string& arg) {
  std::error_code ec;
  if (!std::filesystem::is_directory(arg, ec)) return {arg};
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(arg, ec)) {
    if (e.path().extension() != ".json") continue;
    if (!e.is_regular_file(ec))
      throw std::invalid_argument("compare: folder " + arg + ": " + e.path().filename().string() +
                                  " is not a regular file (a result set is)");
    files.push_back(e.path().string());
  }
  if (ec) throw std::runtime_error("compare: folder " + arg + ": " + ec.message());
  if (files.empty())
    throw std::invalid_argument("compare: folder " + arg + " holds no result set (*.json)");
  std::sort(files.begin(), files.end());
  return files;
}

// One file on two sides compares a run with itself: refused (twice in one side, compare says so).
void refuse_a_set_on_two_sides(const std::vector<CompareSide>& sides) {
  for (std::size_t i = 0; i < sides.size(); ++i)
    for (std::size_t j = i + 1; j < sides.size(); ++j)
      for (const ResultSet* x : sides[i].runs)
        for (const ResultSet* y : sides[j].runs)
          if (std::error_code ec;
              x->path == y->path || std::filesystem::equivalent(x->path, y->path, ec))
            throw std::invalid_argument("compare: " + y->path + " is on side " +
                                        std::to_string(i + 1) + " and side " +
                                        std::to_string(j + 1) + ": a run compared with itself");
}

// Every side's runs, read; a side that is one folder is labelled with its name.
struct LoadedSides {
  std::deque<ResultSet> sets;  // stable addresses for the sides' pointers
  std::vector<CompareSide> sides;
};
void load_sides(const std::vector<std::string>& args, LoadedSides& out) {
  for (const std::vector<std::string>& side : side_args(args)) {
    CompareSide cs;
    for (const std::string& a : side)
      for (const std::string& f : expand_folder(a)) {
        out.sets.push_back(load_result_set(f));
        cs.runs.push_back(&out.sets.back());
      }
    std::error_code ec;
    if (side.size() == 1 && std::filesystem::is_directory(side[0], ec)) {
      std::filesystem::path folder = std::filesystem::path(side[0]).lexically_normal();
      if (!folder.has_filename()) folder = folder.parent_path();
      cs.label = folder.filename().string();
    }
    out.sides.push_back(std::move(cs));
  }
}

// --fail-on: whether some case of some other set has that verdict.
bool fails_on(const Comparison& cmp, const std::string& what) {
  for (const CompareRow& r : cmp.rows)
    for (std::size_t s = 1; s < r.cells.size(); ++s) {
      const CompareCell& c = r.cells[s];
      if (!c.decision) continue;
      const CompareVerdict v = c.decision->verdict;
      if ((what == "slower" && c.slower()) ||
          (what == "different" && v == CompareVerdict::kDifferent) ||
          (what == "unknown" && v == CompareVerdict::kUnknown) ||
          (what == "not-same" && v != CompareVerdict::kSame))
        return true;
    }
  return false;
}

// --fail-on vouches only for what was compared: the cases measured in the baseline that have no
// verdict in some other set (failed, skipped or absent there), by key.
std::vector<std::string> unjudged(const Comparison& cmp) {
  std::vector<std::string> out;
  for (const CompareRow& r : cmp.rows)
    if (r.cells[0].value &&
        std::any_of(r.cells.begin() + 1, r.cells.end(),
                    [](const CompareCell& c) { return !c.decision.has_value(); }))
      out.push_back(r.key);
  return out;
}

bool some_verdict(const Comparison& cmp) {
  return std::any_of(cmp.rows.begin(), cmp.rows.end(), [](const CompareRow& r) {
    return std::any_of(r.cells.begin() + 1, r.cells.end(),
                       [](const CompareCell& c) { return c.decision.has_value(); });
  });
}

// The gate: exit 1 when a case has the verdict --fail-on names, and also (said on stderr) when
// nothing was compared or a case measured in the baseline has no verdict: a kernel on which
// nothing ran never passes.
void gate(const Comparison& cmp, const std::string& fail_on) {
  const std::vector<std::string> missing = unjudged(cmp);
  if (!some_verdict(cmp)) {
    std::fprintf(stderr,
                 "wakebench: --fail-on %s: no case was compared (every case failed, "
                 "skipped or missing on a side)\n",
                 fail_on.c_str());
    throw ExitCode{1};
  }
  if (!missing.empty()) {
    std::fprintf(stderr,
                 "wakebench: --fail-on %s: %zu case(s) measured in the baseline have no verdict "
                 "(failed, skipped or missing in another set), the first: %s\n",
                 fail_on.c_str(), missing.size(), json_text(missing.front()).c_str());
    throw ExitCode{1};
  }
  if (fails_on(cmp, fail_on)) throw ExitCode{1};
}

struct CompareArgs {
  std::vector<std::string> files;
  std::string metric = "median";
  std::string format = "text";
  std::string noise;
  double margin = 0.05;
  std::string fail_on;
};

void add_compare_options(CLI::App* cmd, CompareArgs& args) {
  cmd->add_option(
         "files", args.files,
         "BASE.json NEW.json [MORE.json...]; or sides of several runs each, the run the "
         "unit: A1.json A2.json -- B1.json B2.json [-- C1.json ...], a folder standing for "
         "its *.json")
      ->required()
      ->expected(2, -1);
  cmd->add_option("--metric", args.metric,
                  "median|p99|mean|min|p90|p999|max, wakeup-<any of those>, tps, or a perf "
                  "counter per round trip (shown, never tested: counted in one pass): EVENT "
                  "(waker + wakee), waker:EVENT, wakee:EVENT")
      ->capture_default_str();
  cmd->add_option("--format", args.format,
                  "text|markdown|csv|json|mail (mail: the patch mail's table, mmtests' "
                  "compare-kernels shape, at most 72 columns)")
      ->check(CLI::IsMember({"text", "markdown", "csv", "json", "mail"}))
      ->capture_default_str();
  cmd->add_option("--noise", args.noise,
                  "A/A noise floor of this machine (wakebench noise A.json B.json --out FILE): a "
                  "change smaller than the case's is never DIFFERENT, and it widens the interval "
                  "SAME needs");
  cmd->add_option("--margin", args.margin,
                  "SAME: the change's interval, widened by the A/A floor, lies within +-this "
                  "fraction (0.05 = 5%)")
      ->check(finite_number)
      ->check(CLI::Range(0.001, 0.5))
      ->capture_default_str();
  cmd->add_option("--fail-on", args.fail_on,
                  "exit 1 when a case is: slower (DIFFERENT and worse), different (DIFFERENT), "
                  "unknown (UNKNOWN) or not-same (anything but SAME); also when a case "
                  "measured in the baseline has no verdict in another set")
      ->check(CLI::IsMember({"slower", "different", "unknown", "not-same"}));
}

void run_compare(const CompareArgs& args) {
  CompareOptions options;
  options.metric = parse_metric(args.metric);
  options.margin = args.margin;
  if (!args.noise.empty()) options.noise = load_noise(args.noise);
  const CompareFormat format = parse_compare_format(args.format);
  LoadedSides loaded;
  load_sides(args.files, loaded);
  const Comparison cmp = compare_sides(loaded.sides, options);  // each side checked first
  refuse_a_set_on_two_sides(loaded.sides);
  std::cout << format_comparison(cmp, format) << std::flush;
  // CSV has no place for notes; humans read them on stderr (text, markdown and json carry them).
  if (format == CompareFormat::kCsv) {
    for (const std::string& w : cmp.warnings)
      std::fprintf(stderr, "wakebench: note: %s\n", w.c_str());
  }
  if (!args.fail_on.empty()) gate(cmp, args.fail_on);
}

void add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare result sets case by case: the first is the baseline; each other set shows ratio, "
      "change (+ = better) with its confidence interval, a verdict (DIFFERENT, SAME or UNKNOWN, "
      "with what would decide it), sd% and a Benjamini-Hochberg q-value over repetitions");
  add_compare_options(cmd, *args);
  cmd->callback([args] { run_compare(*args); });
}

void add_noise_command(CLI::App& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "noise",
      "Measure this machine's A/A noise from two or more runs of the same suite (same binary, same "
      "machine): per case and metric, the largest change between any two; compare --noise FILE "
      "never calls a smaller change DIFFERENT");
  cmd->add_option("files", *files, "A.json B.json [C.json...]")->required()->expected(2, -1);
  cmd->add_option("--out", *out, "the noise file to write (- : standard output)")->required();
  cmd->callback([files, out] {
    const bool to_stdout = *out == "-";
    if (!to_stdout) check_output_writable("--out", *out);
    for (const std::string& f : *files)
      if (std::error_code ec; !to_stdout && (f == *out || std::filesystem::equivalent(f, *out, ec)))
        throw std::invalid_argument("--out " + *out + " is one of the A/A sets it reads");
    const NoiseFloor n = measure_noise(load_sets(*files));
    if (to_stdout) {
      std::printf("%s\n", nlohmann::ordered_json(noise_json(n)).dump(1).c_str());
      return;
    }
    write_json_atomic(*out, nlohmann::ordered_json(noise_json(n)));
    std::fprintf(stderr, "wakebench: A/A noise of %zu cases from %zu sets\n", n.floor_pct.size(),
                 files->size());
    std::printf("%s\n", out->c_str());
  });
}

static CommandRegistrar reg("compare", add_compare_command);

}  // namespace

std::vector<std::string> mark_side_breaks(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  if (args.size() < 2 || args[1] != "compare") return args;
  for (std::size_t i = 2; i < args.size(); ++i)
    if (args[i] == "--") args[i] = kSideBreak;
  return args;
}

namespace {

static CommandRegistrar noise_reg("noise", add_noise_command);

}  // namespace
}  // namespace wb
