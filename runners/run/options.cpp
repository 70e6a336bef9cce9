#include "runners/run/options.h"

#include <cmath>
#include <filesystem>
#include <sstream>

#include "common/measure/perf.h"
#include "common/schema/registry.h"
#include "common/util/input.h"
#include "common/util/text.h"

namespace wb {
namespace {

namespace fs = std::filesystem;

// The configs folder: beside an installed binary (<prefix>/share/wakebench/configs, as
// `cmake --install` lays it out), else in the source tree the binary was built from (a folder
// above it holding configs/quick.json).
fs::path configs_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "configs";
  const fs::path installed = exe.parent_path().parent_path() / "share/wakebench/configs";
  if (fs::is_directory(installed, ec)) return installed;
  for (auto dir = exe.parent_path(); !dir.empty() && dir != dir.root_path();
       dir = dir.parent_path())
    if (fs::exists(dir / "configs/quick.json", ec)) return dir / "configs";
  return "configs";
}

void refuse_extras(const std::vector<std::string>& extras) {
  for (const auto& f : extras) {
    if (f.rfind("--benchmark_min_time", 0) == 0)
      throw std::invalid_argument(
          f + ": a repetition is a fixed number of round trips here; use --round-trips N");
    if (f.rfind("--benchmark_", 0) == 0)
      throw std::invalid_argument("unrecognized Google Benchmark flag " + f +
                                  " (run takes --benchmark_filter and --benchmark_repetitions)");
    throw std::invalid_argument("unknown option " + f + " (see wakebench run --help)");
  }
}

// What runs and how it is measured.
void add_measure_options(CLI::App& sub, RunArgs& args) {
  sub.add_option("--config", args.config, "suite (default configs/quick.json)");
  sub.add_option("--out", args.out, "result set path (default results/<host>-<UTC time>.json)");
  sub.add_option("--pairs-per-class", args.pairs_per_class,
                 "CPU pairs per placement class, spread over cores / LLCs / nodes")
      ->check(CLI::PositiveNumber);
  sub.add_option("--case-timeout", args.case_timeout_s,
                 "seconds one repetition of a case may take before it fails (default: the "
                 "config's timeout_s, 60)")
      ->check(finite_number)
      ->check(CLI::Range(0.001, 1e6));
  sub.add_option("--events", args.events,
                 "comma-separated perf events for both sides (any libpfm4 name; default: cycles, "
                 "instructions, cache-misses, LLC misses, branch-misses, context-switches, "
                 "cpu-migrations, task-clock, page-faults; none: count nothing)");
  sub.add_flag("--require-events", args.require_events,
               "fail a case when one of its events cannot be counted (default: note it)");
  sub.add_option("--idle-latency-us", args.idle_latency_us,
                 "hold every CPU out of idle states whose exit latency exceeds N us while the "
                 "run lasts (/dev/cpu_dma_latency; needs root); recorded in the result set")
      ->check(CLI::Range(0, 2000000));
}

// What the summary shows, the tracing, and which cases and repetitions in what order.
void add_selection_options(CLI::App& sub, RunArgs& args) {
  sub.add_option("--show", args.show,
                 "summary cells show this counter per round trip, waker / wakee (e.g. "
                 "context-switches, cycles), instead of the RTT");
  sub.add_flag("--trace-wakeups", args.trace_wakeups,
               "kernel-placement cases: record the pair's sched trace events in a private tracefs "
               "instance and attribute each wakeup to the CPU selection or to a try_to_wake_up "
               "bypass (needs root and tracefs; adds the tracepoints' cost to those cases)");
  sub.add_flag("--trace-decisions", args.trace_decisions,
               "--trace-wakeups, and keep every wakeup decision a lab kernel records "
               "(runners/lab/KERNELS.md), or on a stock kernel a BPF recorder, in a side file "
               "beside the result set, which names it with its sha256; `wakebench replay "
               "RESULTS` replays them");
  sub.add_option("--decision-recorder", args.decision_recorder,
                 "--trace-decisions on a stock kernel: fentry (select_task_rq_fair: the wake "
                 "flags as passed), tp_btf (sched_waking, where fentry is refused: the flags of "
                 "the mechanism's documented wake) or auto (default: fentry, else tp_btf)")
      ->check(CLI::IsMember({"auto", "fentry", "tp_btf"}));
  sub.add_option("--benchmark_filter", args.filter,
                 "run only the cases whose name matches this regex (Google Benchmark's "
                 "semantics: a search; a leading '-' negates)");
  sub.add_option("--benchmark_repetitions", args.repetitions,
                 "repetitions of every case (overrides the config)")
      ->check(CLI::Range(1, 1000000));
  sub.add_option("--round-trips", args.round_trips,
                 "timed round trips of every repetition (overrides the config; replaces Google "
                 "Benchmark's --benchmark_min_time)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  sub.add_option("--seed", args.seed,
                 "seed of the interleaved order of repetitions (default: random; the result set "
                 "records it as run.order_seed)")
      ->check(unsigned_integer);
}

// What the run compares: the noise floor, --ab's settings, --until-decided's baseline.
void add_compare_options(CLI::App& sub, RunArgs& args) {
  sub.add_option("--noise", args.noise,
                 "this machine's A/A noise floor (wakebench noise A.json B.json --out FILE), kept "
                 "in the result set as \"noise\": compare, with this set as its baseline, never "
                 "calls a change smaller than a case's floor there DIFFERENT");
  sub.add_option("--ab", args.ab,
                 "SPEC: switch a kernel setting inside the run, one result set per setting "
                 "(feature:NAME=on,off, sysctl:kernel.sched_x=V1,V2, debugfs:sched/FILE=V1,V2; "
                 "repeat to zip several; docs/cli.md#ab-runs)")
      ->take_all()
      ->allow_extra_args(false);
  sub.add_option("--until-decided", args.until_decided,
                 "BASE.json: add batches of interleaved rounds (each the config's repetitions) "
                 "of the cases still UNKNOWN against this baseline until each is SAME or "
                 "DIFFERENT, --looks or --budget are spent; the verdicts spend alpha over the "
                 "looks (docs/cli.md#until-decided)");
  sub.add_option("--looks", args.looks, "--until-decided: the most looks (default 10)")
      ->check(CLI::Range(1, 100));
  sub.add_option("--budget", args.budget_s,
                 "--until-decided: seconds of measuring after which no new batch starts "
                 "(default 300)")
      ->check(finite_number)
      ->check(CLI::Range(1.0, 1e6));
  sub.add_flag("--no-mount-debugfs", args.no_mount_debugfs,
               "where debugfs is not mounted and the run is root, leave it so (by default the "
               "run mounts it at /sys/kernel/debug to record the sched domains and features, "
               "journalled, and unmounts it at its end)");
  sub.add_flag("--ab-any-setting", args.ab_any_setting,
               "--ab: switch any sysctl or debugfs file, not only the scheduler's own settings "
               "(" +
                   registry().scheduler_settings_text() + ")");
  // Hidden (no group), for tests: the root of --ab's files, a fake tree, and the folder of the
  // journals and locks (docs/cli.md#ab-runs).
  sub.add_option("--ab-root", args.ab_root, "")->group("");
  sub.add_option("--state-dir", args.state_dir, "")->group("");
}

}  // namespace

void add_run_options(CLI::App& sub, RunArgs& args) {
  add_measure_options(sub, args);
  add_selection_options(sub, args);
  add_compare_options(sub, args);
}

void check_options(const RunArgs& args) {
  refuse_extras(args.extras);
  if (!args.ab_root.empty() && args.ab.empty())
    throw std::invalid_argument("--ab-root: only with --ab");
  if (!args.decision_recorder.empty() && !args.trace_decisions)
    throw std::invalid_argument("--decision-recorder: only with --trace-decisions");
  if (args.ab_any_setting && args.ab.empty())
    throw std::invalid_argument("--ab-any-setting: only with --ab");
  if (!args.until_decided.empty() && !args.ab.empty())
    throw std::invalid_argument(
        "--until-decided: not with --ab (an A/B run compares its own sets)");
  std::error_code ec;  // one file, however each is spelled (device and inode)
  if (!args.until_decided.empty() && !args.out.empty() &&
      fs::equivalent(args.out, args.until_decided, ec))
    throw std::invalid_argument("--out " + args.out + ": is the --until-decided baseline " +
                                args.until_decided + ", which the run reads; write elsewhere");
}

std::vector<std::string> event_list(const std::string& events,
                                    const std::vector<std::string>& defaults) {
  if (events.empty()) return defaults;
  std::vector<std::string> out;  // "none": no counters at all, what runners/overhead.sh compares
  if (events == "none") return out;
  std::stringstream ss(events);
  for (std::string e; std::getline(ss, e, ',');)
    if (!e.empty()) out.push_back(e);
  return out;
}

RunOptions run_options(const RunArgs& args) {
  RunOptions opts;
  opts.timeout_s = args.case_timeout_s;
  opts.events = event_list(args.events, default_events());
  opts.require_events = args.require_events;
  // --require-events on a machine that cannot count them: one line before anything runs (what this
  // process may open, every task may: same user, same perf_event_paranoid, same PMU).
  if (opts.require_events) require_events(PerfCounters(opts.events).unavailable(), "this machine");
  if (!args.show.empty() &&
      std::find(opts.events.begin(), opts.events.end(), args.show) == opts.events.end()) {
    std::string list;
    for (const auto& e : opts.events) list += (list.empty() ? "" : ",") + e;
    throw std::invalid_argument("--show " + args.show + ": not among the counted events (" + list +
                                ")");
  }
  return opts;
}

std::string config_path(const std::string& given) {
  std::error_code ec;
  if (given == "-") return given;
  if (given.empty())
    return fs::exists("configs/quick.json", ec) ? "configs/quick.json" : config_path("quick");
  if (fs::exists(given, ec) || given.ends_with(".json") || !is_safe_name(given)) return given;
  return (configs_dir() / (given + ".json")).string();
}

}  // namespace wb
