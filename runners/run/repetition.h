// One repetition of a case: the counting pass before its first, the timed round trips (traced with
// --trace-wakeups), the schedstat delta over its CPUs.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "common/measure/driver.h"
#include "runners/run/measured.h"
#include "runners/run/tracing.h"

namespace wb {

// Fresh tasks, spec.round_trips timed round trips. Its first one is preceded by the counting
// pass. A failure fails the case with its first reason; its later repetitions do not run. An
// interruption (Ctrl-C, SIGTERM) drops only the repetition it stopped: a case keeps those it
// finished (it fails "interrupted" when it finished none). Returns the supervisor thread's CPU
// time over the timed round trips, in nanoseconds.
double run_repetition(CaseState& cs, const RunOptions& base, const CaseTracer& tracer);

// Fails the case with `why`, unless the run was interrupted after it kept a repetition.
void fail_case(CaseRecord& rec, const std::string& why);

}  // namespace wb
