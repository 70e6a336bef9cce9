// `wakebench predict`: where each wakeup policy puts a wakee (one scenario, or a ping-pong pair's
// steady state) on a topology, and predictions for a result set. Rules: docs/policy-model.md.
#include <cstdio>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include "analysis/model/model_features.h"
#include "analysis/predict/predict.h"
#include "analysis/predict/predict_results.h"
#include "common/schema/registry.h"
#include "common/util/cpulist.h"
#include "common/util/text.h"
#include "runners/commands.h"

namespace wb {

namespace {

struct PredictArgs {
  std::string topology, scenario, results, llc_level, start, busy, allowed, sched_features;
  bool json = false, steady = false, sync = false, no_sync = false, current_cpu = false;
};

std::vector<int> cpu_list_arg(const std::string& flag, const std::string& text) {
  try {
    return parse_cpu_list(text);
  } catch (const std::exception& e) {
    throw std::invalid_argument("predict " + flag + ": " + e.what());
  }
}

SchedTopology load_sched(const PredictArgs& a, std::optional<LlcSource> scenario_llc) {
  return load_sched_topology("predict", a.topology, a.llc_level, scenario_llc);
}

// predict --results FILE: the set's cases against every policy.
void run_results(const PredictArgs& a) {
  if (!a.topology.empty() || !a.scenario.empty() || a.steady || !a.sched_features.empty()) {
    throw std::invalid_argument(
        "predict --results uses the topology and sched features the result set records; drop "
        "--topology, --scenario, --steady and --sched-features");
  }
  const ResultsPrediction p = predict_for_results_file(a.results);
  std::cout << (a.json ? to_json(p).dump(2) + "\n" : render_results_text(p));
}

// predict --scenario FILE: its wakeups under every policy.
void run_scenario(const PredictArgs& a) {
  if (a.steady) throw std::invalid_argument("predict: --scenario and --steady exclude each other");
  if (!a.sched_features.empty())
    throw std::invalid_argument(
        "predict --scenario: give the features as the scenario's sched_features field");
  Scenario s = load_scenario(a.scenario);
  SchedTopology sched = load_sched(a, s.llc_level);
  auto p = predict_scenario(sched, s, a.scenario);
  std::cout << (a.json ? p.dump(2) + "\n" : render_scenario_text(sched, p));
}

// --start "a,b" into `opt`.
void set_start_pair(const std::string& text, SteadyOptions& opt) {
  const auto comma = text.find(',');
  try {
    if (comma == std::string::npos) throw std::invalid_argument("expected a,b");
    size_t used1 = 0, used2 = 0;
    std::string s1 = text.substr(0, comma), s2 = text.substr(comma + 1);
    opt.start_a = std::stoi(s1, &used1);
    opt.start_b = std::stoi(s2, &used2);
    if (used1 != s1.size() || used2 != s2.size()) throw std::invalid_argument("expected a,b");
  } catch (const std::exception&) {
    throw std::invalid_argument("predict --start \"" + text + "\": expected two CPU ids a,b");
  }
}

// predict [--steady]: a pair's steady state under every policy, for sync and non-sync wakes
// unless one is asked.
void run_steady(const PredictArgs& a) {
  if (a.sync && a.no_sync)
    throw std::invalid_argument("predict: --sync and --no-sync exclude each other");
  SchedTopology sched = load_sched(a, std::nullopt);
  SteadyOptions base;
  base.current_cpu = a.current_cpu;
  base.features = parse_model_features(a.sched_features, "predict --sched-features");
  if (!a.busy.empty()) base.busy = cpu_list_arg("--busy", a.busy);
  if (!a.allowed.empty()) base.allowed = cpu_list_arg("--allowed", a.allowed);
  if (!a.start.empty()) set_start_pair(a.start, base);
  const std::vector<bool> syncs = (a.sync || a.current_cpu) ? std::vector<bool>{true}
                                  : a.no_sync               ? std::vector<bool>{false}
                                                            : std::vector<bool>{true, false};
  nlohmann::json out = nlohmann::json::array();
  std::string text;
  for (bool sync : syncs) {
    SteadyOptions opt = base;
    opt.sync = sync && !a.current_cpu;
    const std::vector<SteadyResult> results = simulate_steady_state(sched, opt);
    if (!a.json) {
      text += (text.empty() ? "" : "\n") + render_steady_text(sched, opt, results);
      continue;
    }
    auto j = steady_to_json(sched, opt, results);
    if (!a.sched_features.empty()) j["sched_features"] = a.sched_features;
    out.push_back(j);
  }
  if (!a.sched_features.empty()) text = "sched features: " + a.sched_features + "\n" + text;
  std::cout << (a.json ? nlohmann::json{{"steady", out}}.dump(2) + "\n" : text);
}

void run_predict(const PredictArgs& a) {
  if (!a.results.empty()) return run_results(a);
  if (!a.scenario.empty()) return run_scenario(a);
  run_steady(a);
}

void add_predict_command(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  auto* cmd = app.add_subcommand(
      "predict",
      "Where each wakeup policy (" + join(registry().policy_ids(), ", ") +
          ") puts a wakee: one --scenario, the steady state of a ping-pong pair (default), or "
          "predictions for a result set (--results)");
  cmd->add_option("--topology", args->topology,
                  "hwloc XML file (default: the live machine; its LLC from "
                  "/sys/kernel/debug/sched/domains when readable)");
  cmd->add_option("--scenario", args->scenario,
                  "one wakeup as JSON (docs/policy-model.md#scenario: waker, prev, sync, "
                  "current_cpu, "
                  "reciprocal, nr_running, delayed, recent_used_cpu, allowed, waker_flips, "
                  "wakee_flips, has_idle_cores, nr_idle_scan, waker_kthread, in_task, "
                  "wakee_queued, llc_level, sched_features)");
  cmd->add_option("--results", args->results,
                  "a wakebench result set: predicted vs measured per mechanism and mode, the "
                  "policy group the kernel matches, each patch's premise (uses the embedded "
                  "topology)");
  cmd->add_option(
      "--llc-level", args->llc_level,
      "L3, L2 or cluster: what the scheduler's LLC spans (overrides the XML rule and the "
      "scenario's llc_level)");
  cmd->add_flag("--json", args->json, "print JSON instead of a table");
  cmd->add_flag("--steady", args->steady,
                "steady state of a ping-pong pair (the default without --scenario/--results): "
                "A on CPU a wakes B (last ran on b), B wakes A, ... until the placement repeats");
  cmd->add_flag("--sync", args->sync,
                "steady state: the wakes carry WF_SYNC (pipe, unix, tcp, binder)");
  cmd->add_flag("--no-sync", args->no_sync,
                "steady state: the wakes carry no WF_SYNC (eventfd, futex); without --sync or "
                "--no-sync both are shown");
  cmd->add_flag("--current-cpu", args->current_cpu,
                "steady state: the wakes carry WF_CURRENT_CPU (futex-swap / seccomp handoff)");
  cmd->add_option("--start", args->start,
                  "steady state: a,b = the first waker's CPU and the first wakee's previous CPU "
                  "(default: the lowest allowed CPU and the lowest allowed CPU on another core of "
                  "its LLC)");
  cmd->add_option("--busy", args->busy,
                  "steady state: CPU list each running one always-runnable hog (e.g. 3,5-7)");
  cmd->add_option("--allowed", args->allowed,
                  "steady state: the pair's cpuset as a CPU list (default: every CPU)");
  cmd->add_option("--sched-features", args->sched_features,
                  "steady state: the features the model takes, switched from their defaults "
                  "(e.g. NO_WA_IDLE,NO_SIS_UTIL; WA_IDLE, WA_WEIGHT, WA_BIAS, SIS_UTIL, "
                  "TTWU_QUEUE: docs/policy-model.md#sched-features)");
  cmd->callback([args] { run_predict(*args); });
}

}  // namespace

static CommandRegistrar predict_reg("predict", add_predict_command);

}  // namespace wb
