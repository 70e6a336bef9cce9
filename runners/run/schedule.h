// The schedule (docs/cli.md#run): the repetitions of every case interleaved in an order drawn from
// the plan's seed, with --ab each under every setting, and the loop that runs it.
#pragma once

#include <vector>

#include "common/system/settings.h"
#include "runners/run/measured.h"
#include "runners/run/plan.h"
#include "runners/run/tracing.h"

namespace wb {

// The plan's order: ab_schedule of its repetitions, A/B settings and seed.
std::vector<AbStep> run_schedule(const RunPlan& plan);

// Runs `steps` over `sets` (step.setting is the set, step.case_index the case) until they end or
// the run is interrupted; returns whether it was. A skipped case is reported first; a case is
// reported when done, or, interrupted, with what it finished.
bool execute(std::vector<SetRun>& sets, const std::vector<AbStep>& steps, const RunOptions& opts,
             const CaseTracer& tracer, SettingsGuard* guard);

}  // namespace wb
