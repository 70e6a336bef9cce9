// `wakebench replay RESULTS|TRACE [--topology XML] --policy P`: analysis/model/replay.h.
#include <iostream>
#include <memory>
#include <string>

#include "analysis/model/model_features.h"
#include "analysis/model/model_kernel.h"
#include "analysis/model/replay.h"
#include "analysis/predict/decision_diff.h"
#include "analysis/predict/predict_results.h"
#include "analysis/predict/replay_io.h"
#include "analysis/results/resultset_io.h"
#include "common/system/kernel_files.h"
#include "common/util/input.h"
#include "common/util/text.h"
#include "runners/commands.h"

namespace wb {
namespace {

struct ReplayArgs {
  std::string input, topology, policy, diff, changed, expect, prices;
  std::size_t first = 10;
  bool json = false;
};

// --diff's policies: "all", or two or more ids.
std::vector<const WakeupPolicy*> diff_policies(const std::string& list) {
  if (list == "all") return all_policies();
  std::vector<const WakeupPolicy*> out;
  for (std::string_view id : ktext::split(list, ',')) out.push_back(&policy_by_id(id));
  if (out.size() < 2)
    throw std::invalid_argument("replay --diff: give two or more policies, or all");
  return out;
}

void print_splits(const ReplayArgs& a, const CaseSplits& s) {
  if (a.json)
    std::cout << splits_json(s).dump(1) << "\n";
  else
    std::cout << render_splits_text(s);
}

using Prices = std::map<std::string, std::map<std::string, double>>;  // "pipe/threads" -> class

// --prices SET: the pinned medians per class of SET's cases by mechanism and mode, the first
// point of each that has one (a first-order price, whatever the case's parameters).
Prices prices_of(const std::string& path) {
  Prices out;
  if (path.empty()) return out;
  for (const CasePrediction& c : predict_for_results(load_result_set(path)).cases)
    for (const auto& [cls, ns] : c.pinned) out[c.mechanism + "/" + c.mode].try_emplace(cls, ns);
  return out;
}

// Each case's records and the set's pinned medians for the case's mechanism and mode (where the
// set has none, --prices's), to `each`.
template <class Each>
void for_each_case(const ReplayArgs& a, const ResultSet& rs,
                   const std::vector<std::pair<std::string, std::string>>& cases, Each each) {
  const ResultsPrediction p = predict_for_results(rs);
  const Prices prices = prices_of(a.prices);
  for (const auto& [name, text] : cases) {
    std::map<std::string, double> pinned;
    for (const CasePrediction& c : p.cases)
      if (c.label == name) {
        pinned = c.pinned;
        const auto it = prices.find(c.mechanism + "/" + c.mode);
        if (pinned.empty() && it != prices.end()) pinned = it->second;
      }
    try {
      each(name, parse_decision_trace(text).records, pinned);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("replay: " + a.input + ": case " + name + ": " + e.what());
    }
  }
}

void print_changes(const ReplayArgs& a, const CaseChanges& c) {
  if (a.json)
    std::cout << changes_json(c).dump(1) << "\n";
  else
    std::cout << render_changes_text(c);
}

void diff_set(const ReplayArgs& a, const ResultSet& rs,
              const std::vector<std::pair<std::string, std::string>>& cases) {
  const SchedTopology sched = sched_topology_of(rs);
  const ModelFeatures features = set_features(rs).model;
  if (!a.changed.empty()) {
    const WakeupPolicy& policy = policy_by_id(a.changed);
    const WakeupPolicy* expected = a.expect.empty() ? nullptr : &policy_by_id(a.expect);
    CaseChanges c;
    for_each_case(
        a, rs, cases, [&](const std::string& name, const auto& records, const auto& pinned) {
          add_case(c, name, kernel_changes(records, sched, policy, features, pinned, expected));
        });
    return print_changes(a, c);
  }
  const std::vector<const WakeupPolicy*> policies = diff_policies(a.diff);
  CaseSplits s;
  for_each_case(a, rs, cases,
                [&](const std::string& name, const auto& records, const auto& pinned) {
                  add_case(s, name, split_decisions(records, sched, policies, features, pinned));
                });
  print_splits(a, s);
}

void replay_set(const ReplayArgs& a) {
  if (!a.topology.empty())
    throw std::invalid_argument("replay: --topology: " + a.input +
                                " is a result set, which holds its own topology");
  const ResultSet rs = load_result_set(a.input);
  const auto cases = side_file_cases(rs, a.input);
  if (!a.diff.empty() || !a.changed.empty()) return diff_set(a, rs, cases);
  const WakeupPolicy& policy = policy_by_id(a.policy.empty() ? kernel_policy(rs) : a.policy);
  const SetFeatures features = set_features(rs);
  const CaseReplays r = replay_cases(cases, sched_topology_of(rs), policy, features.model);
  if (a.json) {
    std::cout << case_replays_json(r).dump(1) << "\n";
    return;
  }
  std::cout << render_case_replays(r, a.first) << "\n"
            << wrap(model_kernel_line(rs.machine.kernel_release), "  ");
  for (const std::string& line : feature_lines(features)) std::cout << wrap(line, "  ");
}

void replay_trace(const ReplayArgs& a, const std::string& text) {
  if (a.topology.empty())
    throw std::invalid_argument("replay: " + a.input +
                                " is a trace: give the machine's hwloc XML with --topology");
  if (!a.prices.empty())
    throw std::invalid_argument("replay: --prices prices a result set's cases; " + a.input +
                                " is a trace");
  const WakeupPolicy& policy = policy_by_id(a.policy.empty() ? "mainline" : a.policy);
  const SchedTopology sched = load_sched_topology("replay", a.topology, "", std::nullopt);
  DecisionTrace t;
  try {
    t = parse_decision_trace(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("replay: " + a.input + ": " + e.what());
  }
  if (t.records.empty())
    throw std::invalid_argument("replay: " + a.input +
                                " holds no sched_wake_decision line (a kernel without the "
                                "decision event records none: runners/lab/KERNELS.md)");
  if (!a.changed.empty()) {
    CaseChanges c;
    add_case(c, a.input,
             kernel_changes(t.records, sched, policy_by_id(a.changed), {}, {},
                            a.expect.empty() ? nullptr : &policy_by_id(a.expect)));
    return print_changes(a, c);
  }
  if (!a.diff.empty()) {
    CaseSplits s;
    add_case(s, a.input, split_decisions(t.records, sched, diff_policies(a.diff)));
    return print_splits(a, s);
  }
  ReplayResult r = replay_decisions(t.records, sched, policy);
  r.wakings = t.wakings;
  if (a.json)
    std::cout << replay_json(r).dump(1) << "\n";
  else
    std::cout << render_replay_text(r, a.first);
}

void add_replay_command(CLI::App& app) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* cmd = app.add_subcommand(
      "replay",
      "Feed every recorded wakeup decision of a lab kernel to one policy's model, inputs only, "
      "and count where the model's CPU and rule agree with the kernel's, per rule and per case "
      "(docs/policy-model.md#replay)");
  cmd->add_option("input", args->input,
                  "a result set of `run --trace-decisions` (its side file beside it), or trace "
                  "text with sched_wake_decision lines")
      ->required();
  cmd->add_option("--topology", args->topology,
                  "hwloc XML of the machine that recorded a trace (a result set holds its own)");
  cmd->add_option("--policy", args->policy,
                  "the policy whose model replays them (default: the lab kernel's a result set "
                  "names, else mainline)");
  cmd->add_option("--first", args->first, "disagreements listed in full")
      ->check(unsigned_integer)
      ->capture_default_str();
  cmd->add_option("--diff", args->diff,
                  "POLICIES (comma-separated, or all): instead of one replay, per pair the "
                  "records on which their models choose different CPUs, by rule, state and "
                  "class, whom the kernel followed, a first-order cost "
                  "(docs/policy-model.md#decision-diff)");
  cmd->add_option("--changed", args->changed,
                  "POLICY: the records POLICY's model does not reproduce, at the point where "
                  "the kernel's path and the model's part, by rule, state and class, the marked "
                  "ones found, a first-order cost: what a patched kernel changed against it "
                  "(runners/lab/KERNELS.md#your-patch)");
  cmd->add_option("--expect", args->expect,
                  "POLICY, with --changed: the patch's own model, if it has one; counts the "
                  "records where it parts from --changed's model and how many were found");
  cmd->add_option("--prices", args->prices,
                  "RESULTS, with --diff or --changed on a set: price a case whose set has no "
                  "pinned case (the lab's) with this set's pinned medians per class for its "
                  "mechanism and mode, e.g. the host's own run");
  cmd->add_flag("--json", args->json, "JSON instead of text");
  cmd->callback([args] {
    if ((!args->diff.empty()) + (!args->policy.empty()) + (!args->changed.empty()) > 1)
      throw std::invalid_argument(
          "replay: --policy replays one model, --diff compares the policies it names, "
          "--changed holds the kernel to one: give one of them");
    if (!args->expect.empty() && args->changed.empty())
      throw std::invalid_argument("replay: --expect goes with --changed");
    if (!args->prices.empty() && args->changed.empty() && args->diff.empty())
      throw std::invalid_argument("replay: --prices goes with --diff or --changed");
    const std::string text = read_input_file("replay", args->input);
    const std::size_t start = text.find_first_not_of(" \t\r\n");
    if (start != std::string::npos && text[start] == '{')
      replay_set(*args);
    else
      replay_trace(*args, text);
  });
}

static CommandRegistrar replay_reg("replay", add_replay_command);

}  // namespace
}  // namespace wb
