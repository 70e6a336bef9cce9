// The run's plan: everything `run` decides before its first case, built once by make_plan and
// const after: the cases and the mechanism of each, the order's seed, the A/B plan, the output
// targets and the tracing choice, beside what the run read before it planned (RunInputs: the
// config, the topology, the driver's options, the --until-decided baseline, the noise floor).
// make_plan reads and writes nothing; load_inputs and check_targets are the plan's I/O.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/compare/noise.h"
#include "analysis/results/resultset_io.h"
#include "common/measure/driver.h"
#include "common/schema/case.h"
#include "common/schema/config.h"
#include "common/system/settings.h"
#include "common/system/topology.h"
#include "runners/run/options.h"
#include "runners/run/tracing.h"

namespace wb {

// A case as planned: its spec with the command line's overrides (spec.skip_reason: why it cannot
// run here, else empty), and its mechanism.
struct PlannedCase {
  CaseSpec spec;
  const Mechanism* mech = nullptr;
};

// Where a result set goes: `path` ("" for a new file of `stem`).
struct OutputTarget {
  std::string path, stem;
  bool operator==(const OutputTarget&) const = default;
};

// --until-decided: the baseline, the most looks, the seconds of measuring.
struct UntilDecidedPlan {
  ResultSet base;
  size_t looks = 0;
  double budget_s = 0;
};

// What the run reads before it plans.
struct RunInputs {
  std::string config_path;  // --config resolved (options.h: config_path)
  Config config;
  Topology topo;
  RunOptions opts;
  std::optional<UntilDecidedPlan> until;
  std::optional<NoiseFloor> noise;
  // The CPUs the run cannot use (cpu_sysfs.h: unused_cpus_note), said in an unavailable class's
  // skip reason; empty when there are none.
  std::string unused_cpus;
  // --trace-decisions on a kernel that records no decisions (no lab event, no BPF recorder): why
  // (WakeupTraceSession::decisions_unavailable). The run then traces the wakeups alone.
  std::string decisions_unavailable;
};

// What make_plan takes of the moment it runs in.
struct RunMoment {
  std::vector<std::string> command;  // this process's command line (/proc/self/cmdline)
  std::string utc;                   // "20250101T120000Z": the default file name's and the A/B id's
  int pid = 0;                       // the A/B id's
  uint64_t random_seed = 0;          // the order's seed without --seed
};

struct RunPlan {
  RunInputs in;
  std::vector<PlannedCase> cases;     // the config's that the filter selects, in its order
  std::string host;                   // the topology's host name
  uint64_t seed = 0;                  // the interleaved order's: --seed, else random
  std::vector<std::string> command;   // the command line that made the plan (RunMoment's)
  AbPlan ab;                          // no specs without --ab
  std::string ab_id;                  // with --ab: "<UTC>-<pid>", the same in every set
  std::vector<OutputTarget> targets;  // one per result set: one, or one per --ab setting
  Tracing tracing = Tracing::kNone;
  int pairs_per_class = 1;
  std::string noise_path;              // --noise as given
  std::string show;                    // --show
  std::optional<int> idle_latency_us;  // --idle-latency-us

  // Each case's repetitions, 0 for a skipped one: what the schedule orders.
  std::vector<int> repetitions() const;
  // Every CPU a case pins or may use.
  std::vector<int> measured_cpus() const;
};

// What the run traces: --trace-decisions, else --trace-wakeups, else nothing.
Tracing tracing_choice(const RunArgs& args);

// Reads what the plan is built from, in this order: the --until-decided baseline, the config, the
// machine's topology, the driver's options (run_options), the noise floor, the CPUs the run
// cannot use. Each failure is one
// line (exit 2) before anything runs.
RunInputs load_inputs(const RunArgs& args);

// Google Benchmark's filter semantics over case names: a regex search, a leading '-' negates,
// "", "all" and "." select everything. Throws std::invalid_argument for a bad regex.
std::function<bool(const std::string&)> name_filter(const std::string& filter);

// The cases of the config that the filter selects, with the overrides of the command line and the
// reason each one that cannot run here is skipped. Throws std::invalid_argument when none is.
std::vector<PlannedCase> plan_cases(const RunArgs& args, const RunInputs& in);

// Where each result set goes. With --ab (ab_settings > 0), set k goes to the stem of --out (or
// `default_stem`) + "-ab<k>.json".
std::vector<OutputTarget> output_targets(const RunArgs& args, const std::string& default_stem,
                                         int ab_settings);

// The plan; reads and writes nothing. By default a set is a new file
// results/<host>-<UTC second>[-N].json, never another run's.
RunPlan make_plan(const RunArgs& args, RunInputs in, AbPlan ab, const RunMoment& now);

// Each target checked before anything is measured (common/util/output_file.h).
void check_targets(const RunPlan& plan, const RunArgs& args);

}  // namespace wb
