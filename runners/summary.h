// The tables a run prints on stderr, rendered from the result set alone (data flows one way).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace wb {

// Placement classes (then kernel placements) as rows, mechanism x mode as columns, "median / p99"
// RTT in microseconds in each cell; columns wrap into several tables to stay under ~100 columns.
// Then every skipped and failed case with its reason.
std::string summary_table(const nlohmann::json& result_set);

}  // namespace wb
