// The one ping-pong driver every mechanism shares (docs/cli.md#run): it places the tasks (threads
// of one case process, or one process per task group), pins them and verifies the pinning with
// sched_getcpu, applies the per-side scheduling knobs, opens each task's perf counters, parks them
// at a barrier, runs warm-up round trips, then times every round trip into preallocated shared
// memory. A supervisor (the calling process) starts the background busy tasks before the case
// tasks and stops them after, and otherwise only waits: it polls pidfds, so it wakes no measured
// CPU while a case runs, and it kills and reaps every task when a case fails, times out or is
// interrupted.
//
// A mechanism plugs in through common/measure/mechanism.h (a Link per pair, or its own tasks).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "common/measure/mechanism.h"
#include "common/schema/case.h"
#include "common/schema/outcome.h"
#include "common/system/topology.h"

namespace wb {

struct RunOptions {
  double timeout_s = 60;            // whole case (one repetition), setup included
  std::vector<std::string> events;  // perf events counted on each side (libpfm4 names)
  bool require_events = false;      // an unavailable event fails the case instead of being noted
};

// Runs one repetition of `spec` on the machine `topo` describes (the background knob's CPUs are
// chosen on it). Never throws: every failure, the case's own or a shortage of the supervisor's
// (fork, pidfd, memory: "fork: Resource temporarily unavailable"), fails this repetition in
// RunOutcome with its cause, and the run goes on.
RunOutcome run_case(const CaseSpec& spec, const Mechanism& mech, const Topology& topo,
                    const RunOptions& opts);

// The supervisor's deadlines for one repetition, in now_ns() time: the case's timeout; once a task
// failed, a grace for the others to finish; once the supervisor killed the tasks, a grace for them
// to be reaped. Each grace starts once and is never extended, so the supervisor returns within
// timeout + kKillGraceNs whatever its tasks do (a task in uninterruptible sleep, 'D', does not die
// of SIGKILL until it wakes): then it leaves such a task behind and fails the case. The kill grace
// is 5 s: a killed task still has to be scheduled to exit, which on a loaded machine (RT tasks
// throttled to 95 % of each second) can take more than 1 s.
class Deadlines {
 public:
  static constexpr int64_t kFailGraceNs = 500'000'000, kKillGraceNs = 5'000'000'000;
  Deadlines(int64_t start_ns, int64_t timeout_ns) : timeout_(start_ns + timeout_ns) {}
  void task_failed(int64_t now) {
    if (fail_grace_ < 0) fail_grace_ = now + kFailGraceNs;
  }
  void killed(int64_t now) {
    if (kill_grace_ < 0) kill_grace_ = now + kKillGraceNs;
  }
  bool timed_out(int64_t now) const { return now >= timeout_; }
  // The tasks are to be killed now: the timeout or the failure grace is over (and they were not
  // killed yet).
  bool kill_due(int64_t now) const {
    return kill_grace_ < 0 && (timed_out(now) || (fail_grace_ >= 0 && now >= fail_grace_));
  }
  // Killed tasks still not reaped once the kill grace is over: stop waiting for them.
  bool give_up(int64_t now) const { return kill_grace_ >= 0 && now >= kill_grace_; }
  // When the supervisor must look again at the latest.
  int64_t next() const {
    if (kill_grace_ >= 0) return kill_grace_;
    return fail_grace_ >= 0 ? std::min(timeout_, fail_grace_) : timeout_;
  }

 private:
  int64_t timeout_;
  int64_t fail_grace_ = -1, kill_grace_ = -1;
};

// Set from a SIGINT/SIGTERM handler: the running case stops, its tasks are killed and reaped.
extern std::atomic<bool> g_interrupted;

}  // namespace wb
