#include "runners/run/measured.h"

#include "common/schema/registry.h"
#include "runners/run/result.h"

namespace wb {

std::vector<SetRun> start_sets(const RunPlan& plan, const nlohmann::json& env) {
  std::vector<SetRun> sets(plan.targets.size());
  for (size_t k = 0; k < sets.size(); ++k) {
    for (const PlannedCase& c : plan.cases) {
      CaseState cs;
      cs.mech = c.mech;
      cs.record.spec = c.spec;
      cs.record.wake_flags = registry().mechanism(c.mech->id()).wake_flags;
      sets[k].cases.push_back(std::move(cs));
    }
    if (plan.tracing != Tracing::kDecisions) continue;
    sets[k].decisions = std::make_unique<DecisionSide>(plan.targets[k].path, plan.targets[k].stem,
                                                       [&] { return replayer_of(plan, env, k); });
    for (CaseState& cs : sets[k].cases) cs.decisions = sets[k].decisions.get();
  }
  return sets;
}

std::string set_tag(const std::vector<SetRun>& sets, size_t k) {
  return sets.size() > 1 ? " ab" + std::to_string(k) : "";
}

}  // namespace wb
