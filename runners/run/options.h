// `wakebench run`'s command line: what it says (RunArgs), the options as CLI11 reads them (their
// help text is here, once), the checks between them before anything runs, and the driver's options
// they make. The run's plan (runners/run/plan.h) is built from RunArgs.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/measure/driver.h"
#include "common/system/journal.h"

namespace wb {

struct RunArgs {
  std::string config;
  std::string out;
  int pairs_per_class = 1;
  double case_timeout_s = 0;  // 0: the config's timeout_s
  std::string events;         // --events: comma-separated libpfm4 event strings
  bool require_events = false;
  std::optional<int> idle_latency_us;  // --idle-latency-us
  std::string show;                    // --show: a counter instead of the RTT in the summary
  bool trace_wakeups = false;          // --trace-wakeups: attribute kernel cases' wakeup paths
  bool trace_decisions = false;        // --trace-decisions: and keep the lab kernel's decisions
  std::string decision_recorder;       // --decision-recorder auto|fentry|tp_btf ("": auto)
  std::string filter;                  // --benchmark_filter: regex over case names, '-' negates
  std::optional<int> repetitions;      // --benchmark_repetitions: overrides the config
  std::optional<int64_t> round_trips;  // --round-trips: overrides the config
  std::optional<uint64_t> seed;        // --seed: the interleaved order's seed
  std::string noise;                   // --noise: an A/A noise file the result set keeps
  std::vector<std::string> ab;        // --ab SPEC...: settings to switch (common/system/settings.h)
  bool ab_any_setting = false;        // --ab-any-setting: not only the scheduler's settings
  std::string ab_root;                // --ab-root: the root of the --ab files (tests)
  bool no_mount_debugfs = false;      // --no-mount-debugfs: leave an unmounted debugfs as it is
  std::string state_dir = kStateDir;  // --state-dir: the journals and locks (tests)
  std::string until_decided;          // --until-decided BASE.json
  std::size_t looks = 10;             // --looks: the most looks --until-decided takes
  double budget_s = 300;              // --budget: seconds --until-decided may measure
  std::vector<std::string> extras;    // anything else: refused with a reason
};

// Every option of `run`, read into `args` (the caller sets args.extras from what is left).
void add_run_options(CLI::App& sub, RunArgs& args);

// The checks between options, before anything runs: options that go only with another, anything
// else on the command line, --out naming the --until-decided baseline. Throws
// std::invalid_argument, one line.
void check_options(const RunArgs& args);

// --events as a list: `defaults` when empty, nothing for "none", else the comma-separated names.
std::vector<std::string> event_list(const std::string& events,
                                    const std::vector<std::string>& defaults);

// The driver's options of the command line. With --require-events, checks that this machine counts
// the events (one line before anything runs); --show must name one of them.
RunOptions run_options(const RunArgs& args);

// --config: a file's path, or the name of a config of the configs folder ("quick", "seeds/000-x":
// NAME.json there) when no file has that path; "-" is standard input. Without --config:
// configs/quick.json of the working folder, else the folder's "quick".
std::string config_path(const std::string& given);

}  // namespace wb
