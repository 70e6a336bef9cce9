// The mix predicted under load (docs/policy-model.md#closed-loop): each policy's class shares
// over the states its own choices lead to, under the load a calibration trace recorded. The
// first-order what-if (decision_diff.h, PolicyMix) gives each record as it was to a policy's
// model; here the model's choice moves the pair, and the next record is given with the pair where
// the model put it: its CPUs, the wakee's recent_used_cpu and the LLCs' has_idle_cores hints are
// the policy's own, while everything else on the machine (the background, other tasks' load, the
// flips, the wake flags) is read from the record, as the calibration kernel met it. So a policy
// that moves the pair off a busy prev stays off it until the load there says otherwise. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/model/policy_model.h"
#include "analysis/predict/decision_diff.h"
#include "common/schema/wake_decision.h"

namespace wb {

struct ClosedLoop {
  std::vector<PolicyMix> mixes;  // one per policy, in the order given
  // Records passed over because no waker could be told (the wakee's partner: the task the kernel
  // last placed on the waker's CPU, most often).
  int64_t no_waker = 0;
};

// Over one case's records in order (fresh pairs told apart by pid); `pinned` maps a class id to
// its pinned median (ns), for each mix's first-order cost.
ClosedLoop closed_loop_mixes(const std::vector<DecisionRecord>& records, const SchedTopology& sched,
                             const std::vector<const WakeupPolicy*>& policies,
                             const ModelFeatures& features = {},
                             const std::map<std::string, double>& pinned = {});

// Each record's waker, as a pid: the task the kernel last placed on the record's waker CPU
// (the latest record choosing that CPU, the wakee aside); the partner of a pid is its most
// frequent such waker. {pid: partner}; a pid never woken by a told task has none.
std::map<int, int> infer_partners(const std::vector<DecisionRecord>& records);

}  // namespace wb
