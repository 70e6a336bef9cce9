// The result sets of a run (docs/result-set.md#document), built after it from the plan and what
// it measured: each a typed ResultSetDoc, with its predictions, written by the one writer
// (common/schema/result_set_doc.h: result_set_json) and summarized on stderr.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "analysis/predict/predict_results.h"
#include "analysis/results/resultset_io.h"
#include "common/schema/result_set_doc.h"
#include "runners/run/measured.h"
#include "runners/run/plan.h"

namespace wb {

// The run's set so far: its machine, topology and cases (interrupted, a case that had not finished
// a repetition is left out), what a look of --until-decided compares.
ResultSetDoc run_doc(const RunPlan& plan, const nlohmann::json& env, const SetRun& set);

// What replays set k's decision records as they come: the model of the machine `env` and the
// set's topology describe, under the policy and sched features the set runs with. Throws
// std::invalid_argument when the model cannot be made.
RunReplayer replayer_of(const RunPlan& plan, const nlohmann::json& env, size_t k);

// Set k as written (docs/result-set.md#contract), typed, with its predictions (nullopt when
// unavailable) and their text, rendered once: with `decisions` (the published side file) each
// kernel case's replay, as its records came (DecisionSide::replays), is on its line.
struct SetOut {
  ResultSet rs;
  std::optional<ResultsPrediction> predictions;
  std::string predictions_text;
};
SetOut result_set(const RunPlan& plan, const Measured& run, size_t k,
                  std::optional<DecisionsRecord> decisions = std::nullopt);

// Writes each set (never dropping one: write_or_fallback) with its decisions side file published,
// prints each one's summary on stderr and the paths on stdout, one per line. Returns the exit
// status: 2 when a set went elsewhere, 130 when the run was interrupted, else 0.
int write_and_print(const RunPlan& plan, Measured& run);

}  // namespace wb
