// --until-decided BASE.json (docs/cli.md#until-decided): batches of interleaved rounds of the cases
// still UNKNOWN against the baseline, a look (analysis/compare/sequential.h) after each, until
// every case is decided or the looks or the budget are spent.
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/compare/sequential.h"
#include "common/schema/result_set_doc.h"
#include "runners/run/measured.h"
#include "runners/run/plan.h"
#include "runners/run/tracing.h"

namespace wb {

// Before the first case: the look compare takes, on this run with no case yet and on every planned
// case, so that a baseline compare refuses (one from the topology lab, a noise floor that does not
// read, one that shares no planned case) is one line and nothing is measured.
void check_comparable(const RunPlan& plan, const nlohmann::json& env, const SetRun& set);

// Runs the batches over run.sets[0] (each batch every active case's planned repetitions, the
// order seeded by the plan's seed + the look) until every case is decided, the looks or the budget
// are spent, or the run is interrupted (run.interrupted). The verdicts go into run.until_decided.
void execute_until_decided(const RunPlan& plan, Measured& run, const CaseTracer& tracer);

// How the run ended: `looks` taken after `elapsed_s` seconds of measuring, with `seq`'s verdicts.
UntilDecidedRecord until_decided_record(const UntilDecidedPlan& until, const SequentialRun& seq,
                                        size_t looks, double elapsed_s);

}  // namespace wb
