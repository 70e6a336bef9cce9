// `wakebench replay DECISIONS --topology XML --policy P`: analysis/replay.h.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "analysis/replay.h"
#include "common/util/input.h"
#include "runners/commands.h"

namespace wb {
namespace {

void add_replay_command(CLI::App& app) {
  struct Args {
    std::string decisions, topology, policy = "mainline";
    std::size_t first = 10;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "replay",
      "Feed every recorded wakeup decision (sched_wake_decision lines of a lab kernel's trace) "
      "to one policy's model, inputs only, and count where the model's CPU and rule agree with "
      "the kernel's, per rule (docs/policy-model.md#replay)");
  cmd->add_option("decisions", args->decisions, "trace text with sched_wake_decision lines")
      ->required();
  cmd->add_option("--topology", args->topology, "hwloc XML of the machine that recorded them")
      ->required();
  cmd->add_option("--policy", args->policy, "the policy whose model replays them")
      ->capture_default_str();
  cmd->add_option("--first", args->first, "disagreements listed in full")->capture_default_str();
  cmd->add_flag("--json", args->json, "JSON instead of text");
  cmd->callback([args] {
    const WakeupPolicy& policy = policy_by_id(args->policy);
    const SchedTopology sched = load_sched_topology("replay", args->topology, "", std::nullopt);
    const std::string text = read_input_file("replay: decisions", args->decisions);
    std::vector<DecisionRecord> records;
    try {
      records = parse_decisions(text);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("replay: " + args->decisions + ": " + e.what());
    }
    if (records.empty())
      throw std::invalid_argument("replay: " + args->decisions +
                                  " holds no sched_wake_decision line (a kernel without the "
                                  "decision event records none: runners/lab/KERNELS.md)");
    const ReplayResult r = replay_decisions(records, sched, policy);
    if (args->json)
      std::cout << replay_json(r).dump(1) << "\n";
    else
      std::cout << render_replay_text(r, args->first);
  });
}

static CommandRegistrar reg("replay", add_replay_command);

}  // namespace
}  // namespace wb
