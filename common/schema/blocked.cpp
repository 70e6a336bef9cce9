#include "common/schema/blocked.h"

#include <cstdint>

namespace wb {

namespace {

// counts[stream][side] summed over the streams, per round trip.
std::array<std::optional<double>, 2> per_round_trip(
    const std::vector<const std::array<std::optional<int64_t>, 2>*>& counts, int64_t round_trips) {
  std::array<std::optional<double>, 2> out;
  for (size_t side = 0; side < 2; ++side) {
    std::optional<int64_t> total;
    for (const auto* c : counts)
      if ((*c)[side]) total = total.value_or(0) + *(*c)[side];
    if (total && round_trips > 0)
      out[side] = static_cast<double>(*total) / static_cast<double>(round_trips);
  }
  return out;
}

}  // namespace

SwitchShares switches_per_round_trip(const std::vector<PairSamples>& rep) {
  int64_t round_trips = 0;
  std::vector<const std::array<std::optional<int64_t>, 2>*> blocked, preempted;
  for (const PairSamples& s : rep) {
    round_trips += static_cast<int64_t>(s.rtt_ns.size());
    blocked.push_back(&s.blocked);
    preempted.push_back(&s.preempted);
  }
  return {per_round_trip(blocked, round_trips), per_round_trip(preempted, round_trips)};
}

}  // namespace wb
