// A result set's recorded decisions (run --trace-decisions), read from the side file beside it
// and replayed under the policy its kernel runs: for `wakebench replay` and the predictions block
// of run and predict --results. The one reader of the side file.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analysis/model/replay.h"
#include "analysis/results/resultset_io.h"

namespace wb {

// The side file `rs.set.decisions` names, beside `set_path`, checked against the sha256 the set
// names and cut into its cases. Throws std::invalid_argument with one line naming the file (or the
// set when it records no decisions).
std::vector<std::pair<std::string, std::string>> side_file_cases(const ResultSet& rs,
                                                                 const std::string& set_path);

// The policy the set's lab kernel runs (environment.lab_kernel.policy; for the gated kernel the
// policy whose sched feature the set ran with on), else "mainline".
std::string kernel_policy(const ResultSet& rs);

// Every recorded case of the set replayed under its kernel's policy and the sched features it ran
// with (set_features(); side_file_cases' errors).
CaseReplays replay_recorded(const ResultSet& rs, const std::string& set_path);

}  // namespace wb
