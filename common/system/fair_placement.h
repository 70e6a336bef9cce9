// Whether the fair class places a run's tasks: what the wakeup model describes
// (docs/policy-model.md#not-fair). It does not where a sched_ext BPF scheduler is enabled for
// them (/sys/kernel/sched_ext/state other than "disabled": every fair task with switch_all 1,
// else only SCHED_EXT tasks), or where the run's tasks are in another class (SCHED_FIFO or
// SCHED_RR: the RT class's select_task_rq_rt; SCHED_DEADLINE). Read at run start under a root
// prefix (common/system/kernel_files.h), so tests read a fixture tree.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace wb {

// The environment's `fair_placement` (docs/result-set.md#environment): {"applies": true} or
// {"applies": false, "why": one line}. `policy`: the run's scheduling policy (SCHED_OTHER, ...),
// which its tasks inherit; sched_getscheduler(0) when nullopt.
nlohmann::json probe_fair_placement(const std::string& root = "/",
                                    std::optional<int> policy = std::nullopt);

}  // namespace wb
