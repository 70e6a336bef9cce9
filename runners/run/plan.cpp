#include "runners/run/plan.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <stdexcept>

#include "analysis/compare/compare.h"
#include "analysis/compare/sequential.h"
#include "benchmarks/registry.h"
#include "common/schema/placement.h"
#include "common/system/cpu_sysfs.h"
#include "common/util/output_file.h"

namespace wb {

std::vector<int> RunPlan::repetitions() const {
  std::vector<int> out;
  for (const PlannedCase& c : cases)
    out.push_back(c.spec.skip_reason.empty() ? c.spec.repetitions : 0);
  return out;
}

std::vector<int> RunPlan::measured_cpus() const {
  std::vector<int> measured;
  for (const PlannedCase& c : cases)
    for (auto [w, e] : c.spec.cpu_pairs) measured.insert(measured.end(), {w, e});
  std::sort(measured.begin(), measured.end());
  measured.erase(std::unique(measured.begin(), measured.end()), measured.end());
  return measured;
}

Tracing tracing_choice(const RunArgs& args) {
  if (args.trace_decisions) return Tracing::kDecisions;
  return args.trace_wakeups ? Tracing::kWakeups : Tracing::kNone;
}

RunInputs load_inputs(const RunArgs& args) {
  std::optional<UntilDecidedPlan> until;
  if (!args.until_decided.empty())
    until.emplace(UntilDecidedPlan{load_result_set(args.until_decided), args.looks, args.budget_s});
  const std::string path = config_path(args.config);
  Config config = load_config(path);
  Topology topo = Topology::from_system();
  if (args.pairs_per_class < 1) throw std::invalid_argument("--pairs-per-class must be >= 1");
  RunOptions opts = run_options(args);
  // Read before anything runs, so a bad noise file is one line and exit 2.
  std::optional<NoiseFloor> noise;
  if (!args.noise.empty()) noise = load_noise(args.noise);
  std::string unused_cpus = unused_cpus_note(topo.cpus());
  return RunInputs{path,
                   std::move(config),
                   std::move(topo),
                   std::move(opts),
                   std::move(until),
                   std::move(noise),
                   std::move(unused_cpus)};
}

std::function<bool(const std::string&)> name_filter(const std::string& filter) {
  if (filter.empty() || filter == "all" || filter == ".")
    return [](const std::string&) { return true; };
  const bool negate = filter[0] == '-';
  std::regex re;
  try {
    re = std::regex(negate ? filter.substr(1) : filter);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("--benchmark_filter " + filter + ": invalid regular expression (" +
                                e.what() + ")");
  }
  return [re, negate](const std::string& name) { return std::regex_search(name, re) != negate; };
}

std::vector<PlannedCase> plan_cases(const RunArgs& args, const RunInputs& in) {
  const Topology& topo = in.topo;
  std::vector<std::string> known;
  for (const Mechanism* m : all_mechanisms()) known.emplace_back(m->id());
  const auto selected = name_filter(args.filter);
  std::vector<PlannedCase> cases;
  for (CaseSpec& spec : expand_cases(in.config, topo, known, args.pairs_per_class)) {
    if (!selected(spec.name)) continue;
    if (args.repetitions) spec.repetitions = *args.repetitions;
    if (args.round_trips) spec.round_trips = *args.round_trips;
    const Mechanism* mech = find_mechanism(spec.mechanism);
    if (spec.skip_reason.empty())
      if (auto why = mech->skip_reason(spec, topo)) spec.skip_reason = *why;
    cases.push_back({std::move(spec), mech});
  }
  // A class this machine lacks may be there with the CPUs the run cannot use: say which.
  if (!in.unused_cpus.empty())
    for (PlannedCase& c : cases)
      if (c.spec.skip_reason.rfind("unavailable: ", 0) == 0)
        c.spec.skip_reason += " (" + in.unused_cpus + ")";
  if (cases.empty())
    throw std::invalid_argument("--benchmark_filter " + args.filter + ": matches no case of " +
                                in.config_path);
  return cases;
}

std::vector<OutputTarget> output_targets(const RunArgs& args, const std::string& default_stem,
                                         int ab_settings) {
  std::vector<OutputTarget> out;
  if (ab_settings == 0) {
    out.push_back({args.out, default_stem});
    return out;
  }
  const std::string stem = args.out.empty()
                               ? default_stem
                               : std::filesystem::path(args.out).replace_extension().string();
  for (int k = 0; k < ab_settings; ++k) {
    const std::string s = stem + "-ab" + std::to_string(k);
    out.push_back({args.out.empty() ? "" : s + ".json", s});
  }
  return out;
}

RunPlan make_plan(const RunArgs& args, RunInputs in, AbPlan ab, const RunMoment& now) {
  RunPlan plan;
  plan.cases = plan_cases(args, in);
  plan.seed = args.seed ? *args.seed : now.random_seed;
  plan.command = now.command;
  plan.host = in.topo.source().substr(in.topo.source().find(':') + 1);
  plan.targets =
      output_targets(args, "results/" + safe_file_name(plan.host) + "-" + now.utc, ab.settings);
  if (!ab.specs.empty()) plan.ab_id = now.utc + "-" + std::to_string(now.pid);
  plan.ab = std::move(ab);
  plan.tracing = tracing_choice(args);
  if (plan.tracing == Tracing::kDecisions && !in.decisions_unavailable.empty())
    plan.tracing = Tracing::kWakeups;
  plan.pairs_per_class = args.pairs_per_class;
  plan.noise_path = args.noise;
  plan.show = args.show;
  plan.idle_latency_us = args.idle_latency_us;
  plan.in = std::move(in);
  return plan;
}

void check_targets(const RunPlan& plan, const RunArgs& args) {
  for (const OutputTarget& t : plan.targets)
    check_output_writable(args.out.empty() ? "results folder" : "--out",
                          t.path.empty() ? t.stem + ".json" : t.path);
}

}  // namespace wb
