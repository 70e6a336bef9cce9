// The tables a run prints on stderr, rendered from the typed result set alone (data flows one
// way).
#pragma once

#include <string>

namespace wb {

struct ResultSet;          // analysis/results/resultset_io.h
struct ResultsPrediction;  // analysis/predict/predict_results.h

// Placement classes (then kernel placements) as rows, mechanism x mode as columns, "median / p99"
// RTT in microseconds in each cell; columns wrap into several tables to stay under ~100 columns.
// Then every skipped and failed case with its reason. With `show` (a counter name), each cell is
// that counter per round trip, "waker / wakee", and a counter that could not be counted is "n/a"
// with its reason below the table. Last, the cases with marked repetitions (ones whose waits did
// not sleep, docs/result-set.md#blocked), nothing when none is marked.
std::string summary_table(const ResultSet& result_set, const std::string& show = "");

// For a seed config (its "claims"): each claim of the seed next to this machine's measured
// counterparts, e.g.
//   seed 000 (sync-pair): perf bench sched pipe, Altra: default 3.733 -> 2.204 usec/op median ...
//     here (median RTT): pipe/processes/kernel 45.1 us | pipe/processes/same-cpu 1.91 us
//     model for pipe/processes/kernel: sync-pair same-cpu 100% (1.91 us); mainline llc 100% (...)
// (the last line for a claim that names its `policy`, for each kernel-placed case it names, from
// `predictions`, when there are any). The claims are read from the config document (open JSON).
// Empty when the config has no claims.
std::string claims_table(const ResultSet& result_set, const ResultsPrediction* predictions);

}  // namespace wb
