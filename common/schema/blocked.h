// Whether a repetition timed wakeups (docs/result-set.md#blocked): per side, the waits that
// blocked and the preemptions per round trip, and the rule that marks a repetition whose tasks
// answered each other before reaching their waits, so that it timed syscalls, not wakeups.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "common/schema/case.h"
#include "common/schema/outcome.h"

namespace wb {

// A repetition is marked when a side went through the scheduler (its wait blocked, or it was
// preempted) in fewer than this share of its round trips.
inline constexpr double kMinBlockedShare = 0.9;

// Per side (Role index), per round trip: the waits that blocked and the preemptions; nullopt for
// a side that was not counted, e.g. every side of a mechanism whose waits do not sleep (spin).
struct SwitchShares {
  std::array<std::optional<double>, 2> blocked, preempted;
};

// The side the rule leaves out of a case, and why; nullopt for none. W > 1 clients feeding one
// pool of services (binder-like's wakee side): a service that finishes a transaction while another
// client's request waits in the queue takes it without sleeping, as binder's thread pool does, so
// its waits per transaction measure how often the queue ran empty, not whether the measurement
// timed syscalls (seed 003's w2s4 and w4s2 shapes). fanout's receivers likewise, each pipe fed by
// W > 1 senders that drift out of step. The clients (senders) each wait for their own reply, so
// their side keeps the rule.
struct ExemptSide {
  Role side;
  const char* why;
};
inline std::optional<ExemptSide> marking_exempt_side(const Params& p) {
  if (p.w.value_or(1) <= 1) return std::nullopt;
  return ExemptSide{Role::kWakee,
                    "W > 1 clients (senders) share the services' queue (each receiver's pipe): a "
                    "service (receiver) takes a request that queued while it worked without "
                    "sleeping, by the mechanism's nature"};
}

// True when a counted side blocked or was preempted in fewer than kMinBlockedShare of its round
// trips. A preemption counts: on one CPU a wakee that preempts its waker at the hand-off answers
// before the waker's wait, which then has nothing to wait for, yet the round trip went through
// the scheduler. A side without a count is exempt, so a mechanism that never sleeps is never
// marked, and so is `exempt` (marking_exempt_side).
constexpr bool repetition_marked(const SwitchShares& s,
                                 std::optional<ExemptSide> exempt = std::nullopt) {
  for (size_t side = 0; side < 2; ++side)
    if (s.blocked[side] && *s.blocked[side] + s.preempted[side].value_or(0) < kMinBlockedShare &&
        !(exempt && static_cast<size_t>(exempt->side) == side))
      return true;
  return false;
}

// One repetition's counts per round trip: each side's PairSamples::blocked and ::preempted summed
// over the repetition's streams, divided by all its round trips (K pairs: the average over pairs;
// binder-like: per transaction, clients on the waker side and services on the wakee side).
// nullopt for a side no stream counted, or when the repetition has no round trip.
SwitchShares switches_per_round_trip(const std::vector<PairSamples>& rep);

}  // namespace wb
