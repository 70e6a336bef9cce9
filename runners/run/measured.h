// What a run measures as it goes, beside its plan (runners/run/plan.h), which stays as it was: per
// result set and case the record the repetitions fill in; after the run, with the plan, what
// runners/run/result.h builds each set from.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/schema/result_set.h"
#include "common/schema/result_set_doc.h"
#include "common/schema/wakeup_trace.h"
#include "runners/run/gb_output.h"
#include "runners/run/plan.h"
#include "runners/run/tracing.h"

namespace wb {

// One case while the run goes.
struct CaseState {
  const Mechanism* mech = nullptr;
  CaseRecord record;  // record.spec: the planned spec (--until-decided adds to its repetitions)
  // One delta per repetition, or {"unavailable": why} for one that could not read /proc/schedstat.
  std::vector<nlohmann::json> schedstat_window;
  // --trace-wakeups: the kept repetitions' attributions added up; trace_error says why one could
  // not be recorded or read.
  std::optional<WakeupTraceSummary> trace;
  std::string trace_error;
  DecisionSide* decisions = nullptr;  // its set's, with --trace-decisions
};

// One result set of the run: every case under one setting (the only one without --ab).
struct SetRun {
  std::vector<CaseState> cases;
  GbBenchmarks gb;
  std::unique_ptr<DecisionSide> decisions;  // with --trace-decisions
};

// The whole run's measured values.
struct Measured {
  nlohmann::json env;  // the environment, captured before the first case
  std::vector<SetRun> sets;
  bool interrupted = false;
  std::optional<UntilDecidedRecord> until_decided;  // --until-decided: the looks, the verdicts
};

// One set per target, each holding every planned case not yet run; with --trace-decisions each
// set's side file is opened beside its target, its records replayed on the machine `env` describes
// (result.h: replayer_of).
std::vector<SetRun> start_sets(const RunPlan& plan, const nlohmann::json& env);

// Set k's tag in the lines of the run: " ab1" with --ab, else empty.
std::string set_tag(const std::vector<SetRun>& sets, size_t k);

}  // namespace wb
