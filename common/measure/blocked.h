// Whether a repetition timed wakeups (docs/result-set.md#blocked): per side, the waits that
// blocked and the preemptions per round trip, and the rule that marks a repetition whose tasks
// answered each other before reaching their waits, so that it timed syscalls, not wakeups.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "common/measure/driver.h"

namespace wb {

// A repetition is marked when a side went through the scheduler (its wait blocked, or it was
// preempted) in fewer than this share of its round trips.
inline constexpr double kMinBlockedShare = 0.9;

// Per side (Role index), per round trip: the waits that blocked and the preemptions; nullopt for
// a side that was not counted, e.g. every side of a mechanism whose waits do not sleep (spin).
struct SwitchShares {
  std::array<std::optional<double>, 2> blocked, preempted;
};

// True when a counted side blocked or was preempted in fewer than kMinBlockedShare of its round
// trips. A preemption counts: on one CPU a wakee that preempts its waker at the hand-off answers
// before the waker's wait, which then has nothing to wait for, yet the round trip went through
// the scheduler. A side without a count is exempt, so a mechanism that never sleeps is never
// marked.
constexpr bool repetition_marked(const SwitchShares& s) {
  for (size_t side = 0; side < 2; ++side)
    if (s.blocked[side] && *s.blocked[side] + s.preempted[side].value_or(0) < kMinBlockedShare)
      return true;
  return false;
}

// One repetition's counts per round trip: each side's PairSamples::blocked and ::preempted summed
// over the repetition's streams, divided by all its round trips (K pairs: the average over pairs;
// binder-like: per transaction, clients on the waker side and services on the wakee side).
// nullopt for a side no stream counted, or when the repetition has no round trip.
SwitchShares switches_per_round_trip(const std::vector<PairSamples>& rep);

}  // namespace wb
