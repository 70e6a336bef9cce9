// fanout's schedule (benchmarks/fanout.cpp), on its own so that tests can check the flip structure
// it gives the kernel's record_wakee() and wake_wide() without running a case.
#pragma once

#include <cstdint>

namespace wb {

// The receiver sender `sender` asks in its round `round` (warm-up included, from 0): the senders
// visit the receivers in rotation, sender i starting at receiver i mod M.
constexpr int fanout_receiver(int sender, int64_t round, int receivers) {
  return static_cast<int>((sender + round) % receivers);
}

// How many requests receiver `receiver` gets when each of `senders` senders does `rounds` rounds:
// what the receiver serves before it leaves.
constexpr int64_t fanout_requests(int receiver, int senders, int receivers, int64_t rounds) {
  int64_t n = 0;
  for (int i = 0; i < senders; ++i) {
    // Rounds r in [0, rounds) with (i + r) mod M == receiver: r = first, first + M, ...
    const int64_t first = ((receiver - i) % receivers + receivers) % receivers;
    if (first < rounds) n += (rounds - 1 - first) / receivers + 1;
  }
  return n;
}

}  // namespace wb
